"""Where a server keeps its state: the table journal (``quatro_server/journal/``), the SSH door's host key
(ssh_door.py), and the doors' visitors' client settings (ssh_door.py, web_door.py)."""

from __future__ import annotations

import os
from pathlib import Path


def default_data_dir() -> Path:
    """``$XDG_DATA_HOME/quatro``, or ``~/.local/share/quatro`` when it is unset (the XDG base directory rules)."""
    base = os.environ.get("XDG_DATA_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "quatro"
