"""``python -m quatro_server``: the same as ``quatro-server``."""

from quatro_server.cli import main

raise SystemExit(main())
