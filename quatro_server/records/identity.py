"""Who a player is across sessions: a person key, never the name alone.

A client sends a random key of its own in ``hello`` (``person``): the terminal client keeps one per player name in its
settings file. A door's visitor cannot be trusted to keep one, and must not be able to claim another's: the door
derives its visitor's key from who the visitor is to the door (the SSH key's fingerprint, the browser's visitor) with
an HMAC under a secret of the server's own, kept in its data directory (``person_secret``, mode 0600), and hands it to
the visitor's client in its environment (``PERSON_KEY_ENV``), which only that process and its owner can read. A local
process that knows a fingerprint still cannot make the key from it.

The server keeps only a digest of a key (``person_of``), as it does for seat secrets (``quatro_server.tables.credentials``):
the records never hold anything that would let someone play as another.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from pathlib import Path

from quatro_shared.protocol import PERSON_KEY_ENV

#: The server's secret for the doors' person keys, in its data directory.
SECRET_FILE = "person_secret"
SECRET_BYTES = 32
#: The prefix of a person derived from a key, as the records and the wire name it (bots are ``bot:LEVEL``).
PERSON_PREFIX = "p:"
BOT_PREFIX = "bot:"


def person_of(key: str) -> str:
    """The person a key stands for, as the server keeps it: a digest of the key (128 bits of it), never the key."""
    return PERSON_PREFIX + hashlib.sha256(b"quatro person\0" + key.encode()).hexdigest()[:32]


def bot_person(level: str) -> str:
    """The person every bot of ``level`` is, in the records: one per level, so players see where they stand."""
    return BOT_PREFIX + level


def is_bot(person: str) -> bool:
    return person.startswith(BOT_PREFIX)


def server_secret(data_dir: Path) -> bytes:
    """The server's secret for door keys, made once (mode 0600) and read back ever after."""
    path = Path(data_dir) / SECRET_FILE
    try:
        data = path.read_bytes()
        if len(data) >= SECRET_BYTES:
            return data
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fresh = secrets.token_bytes(SECRET_BYTES)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes()  # another process made it meanwhile: theirs stands
    with os.fdopen(fd, "wb") as f:
        f.write(fresh)
    return fresh


def door_key(data_dir: Path, visitor: str) -> str:
    """The person key of a door's ``visitor`` (an SSH key's fingerprint, a browser visitor's id): the same visitor
    gets the same key from every session of this server, and nobody can make it without the server's secret."""
    digest = hmac.new(server_secret(data_dir), b"quatro door\0" + visitor.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def door_environment(data_dir: Path, visitor: str) -> dict[str, str]:
    """What a door adds to its visitor's client's environment so that the client plays as that person: the key, for
    a visitor the door knows. An unknown visitor (``visitor`` empty: an SSH login without a key) gets the variable
    empty: the client then plays anonymously and unrated, rather than as whoever last used the name at the door."""
    return {PERSON_KEY_ENV: door_key(data_dir, visitor) if visitor else ""}
