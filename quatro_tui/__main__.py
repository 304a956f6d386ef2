"""``python -m quatro_tui``: the same as ``quatro``."""

from quatro_tui.cli import main

raise SystemExit(main())
