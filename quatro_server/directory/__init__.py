"""The table directory: which server holds which table, for servers that share one lobby (docs/operating.md).

Without one (the default), a server's lobby is its own tables: ``Lobby.directory`` is None and nothing of this
package runs. With one (``quatro-server --directory redis://HOST:PORT/DB``), table ids are global, every server's
lobby lists every server's tables, and a request naming a table held elsewhere is answered ``moved`` with the
address of the server that holds it (protocol section 21). The lobby sees the directory through ``TableDirectory``
alone: synchronous, no clock and no socket of its own; the Redis side (``quatro_server.directory.redis_directory``)
does its I/O off the event loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from quatro_shared import messages as m

#: Seconds a table's record lives in the directory unless its server refreshes it (``--directory-ttl``): the longest
#: a dead server's tables stay listed by the others. Its server refreshes it three times in that time.
DEFAULT_TTL = 15.0


class DirectoryError(Exception):
    """The directory cannot be used: a bad URL, or no Redis server answering there."""


class TableDirectory(Protocol):
    """What the lobby asks of a directory shared with other servers."""

    #: This server's address as the others send players to it (``HOST:PORT``, ``:PORT``): what a ``moved`` to it
    #: says, and what its proofs are bound to (``prove``, protocol 8).
    address: str

    def new_id(self) -> int:
        """A table id no server of the directory has given or will give. Raises ``DirectoryError`` when none can be
        had (the directory does not answer)."""
        ...

    def holder(self, table: int) -> tuple[str, int] | None:
        """The address (host, port) of the other server that holds ``table``; None if no other server does."""
        ...

    def others(self) -> Sequence[m.TableSummary]:
        """The tables the other servers hold, as they last told them."""
        ...

    async def find(self, table: int) -> tuple[str, int] | None:
        """Look ``table`` up in the directory itself (a table created a moment ago elsewhere, not yet told here):
        the address of the other server that holds it, known to ``holder`` from then on; None if none does.
        Raises ``DirectoryError`` when the directory does not answer."""
        ...

    def changed(self) -> None:
        """This server's list of tables changed: the other servers are told soon (never on the caller's time)."""
        ...


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[V6]:PORT`` too) as (host, port); ``ValueError`` when it is not one. ``:PORT`` (or
    ``*:PORT``) has the host "": a client sent there keeps the host it reached this server at (servers of one
    machine that listen on every interface, where a server cannot know which of its addresses a client used)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{text!r} is not HOST:PORT")
    host = host.strip("[]")
    return ("" if host == "*" else host), int(port)
