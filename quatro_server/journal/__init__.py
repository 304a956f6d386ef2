"""The table journal: every table and its match, move by move, in SQLite, so that tables outlive the process.

Six parts, none of which knows the lobby, its rooms or any game by name:

- ``store``: the file (``DATA_DIR/journal.sqlite3``), its checks, and the writer thread that commits to it;
- ``recorder``: the journal of one table, fed by its room after each thing the room did (``Recorder``);
- ``restore``: the live tables read back and rebuilt, as plain data the lobby builds its rooms from;
- ``saved``: what the file holds for one table, as plain rows (``SavedTable``, ``SavedSeat``, ``SavedMove``);
- ``codec``: what the journal asks of a game, how its matches are written and read back (``Codec``);
- ``archive``: finished tables read back one at a time, for the replays a running server offers.

What a game's actions, events and checkpoints look like in the file is the game's own ``Codec`` (``codec``), which
the game registry (``quatro_server.games``) supplies. ``docs/journal.md`` describes the whole.
"""

from quatro_server.journal.codec import AnyCodec, Checkpoints, Codec, Notes, Opening, json_text
from quatro_server.journal.recorder import Recorder, SeatRecord
from quatro_server.journal.restore import Mismatch, RestoredTable, replay_move, replay_table, restore
from quatro_server.journal.saved import SavedMove, SavedSeat, SavedTable
from quatro_server.journal.store import (
    FILE_NAME,
    FLUSH_TIMEOUT,
    GATHER,
    KEEP_FINISHED_DAYS,
    LOCK_NAME,
    SCHEMA_VERSION,
    WRITER_NICENESS,
    Journal,
    JournalError,
    default_data_dir,
    read_journal,
)
from quatro_server.rules import RulesTable

__all__ = [
    "FILE_NAME",
    "FLUSH_TIMEOUT",
    "GATHER",
    "KEEP_FINISHED_DAYS",
    "LOCK_NAME",
    "SCHEMA_VERSION",
    "WRITER_NICENESS",
    "Checkpoints",
    "AnyCodec",
    "Codec",
    "Journal",
    "JournalError",
    "Mismatch",
    "Notes",
    "Opening",
    "Recorder",
    "RestoredTable",
    "RulesTable",
    "SavedMove",
    "SavedSeat",
    "SavedTable",
    "SeatRecord",
    "default_data_dir",
    "json_text",
    "read_journal",
    "replay_move",
    "replay_table",
    "restore",
]
