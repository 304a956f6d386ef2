"""``python -m quatro_server``: the same as ``quatro-server``. ``admin`` starts without loading the server."""

import sys

if sys.argv[1:2] == ["admin"]:
    from quatro_server.workers.admin import main
else:
    from quatro_server.cli import main

raise SystemExit(main())
