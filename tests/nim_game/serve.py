"""``python -m nim_game.serve ARGS``: ``quatro-server ARGS`` in a process that hosts Nim beside the product's games
(the crash tests start it, with ``tests`` on the module path)."""

from __future__ import annotations

import sys

from nim_game import register
from quatro_server.cli import main

if __name__ == "__main__":
    register()
    sys.exit(main())
