"""Where the matches of ``quatro play`` are kept, so that a player can replay their own games against bots.

``quatro play``'s private server journals to a directory of the player's own: ``$XDG_DATA_HOME/quatro/play/NAME``
(``~/.local/share/quatro/play/NAME`` by default), NAME the player's name at the table made safe for a file name.
Two people who share a Unix account play under their own names and never share a journal; a second ``quatro play``
under the same name while the first still runs finds its journal held (the server's lock) and keeps none, rather
than wait or clash. A new private server restores nothing of the last one's tables (``--no-restore``): a game left
against bots is over, and kept for replays. ``quatro replay ID`` reads this journal unless told another.
"""

from __future__ import annotations

import fcntl
import os
import re
from pathlib import Path

#: The server's lock file in a data directory (``quatro_server.journal.LOCK_NAME``).
LOCK_NAME = "journal.lock"
#: The journal's file in a data directory (``quatro_server.journal.FILE_NAME``).
FILE_NAME = "journal.sqlite3"


def data_home() -> Path:
    """``$XDG_DATA_HOME`` when it is an absolute path, else ``~/.local/share`` (the XDG base directory rules)."""
    home = os.environ.get("XDG_DATA_HOME", "")
    return Path(home) if os.path.isabs(home) else Path.home() / ".local" / "share"


def safe_name(name: str) -> str:
    """A player's name as a directory's: letters, digits, ``-`` and ``_``; anything else is ``_``, case kept."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", name.strip())[:48]
    return safe or "player"


def play_data_dir(name: str) -> Path:
    """The data directory of ``name``'s ``quatro play`` matches."""
    return data_home() / "quatro" / "play" / safe_name(name)


def free_play_data_dir(name: str) -> Path | None:
    """``name``'s play directory if no private server holds it now (None: one does; that game keeps no journal)."""
    folder = play_data_dir(name)
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        with open(folder / LOCK_NAME, "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return None
            fcntl.flock(lock, fcntl.LOCK_UN)
    except OSError:
        return None
    return folder
