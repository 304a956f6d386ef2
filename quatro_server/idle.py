"""A server that stops by itself when nobody needs it: the private server ``quatro play --open N`` leaves
running for the others when its opener quits."""

from __future__ import annotations

from collections.abc import Callable

import trio

from quatro_server.tables.lobby import Lobby

#: Seconds between two looks at who is connected. Stopping a few tenths of a second late costs nothing.
POLL_INTERVAL = 0.5


def anyone_connected(lobby: Lobby) -> bool:
    """A client in the lobby, or at a table."""
    return bool(lobby.watchers) or any(room.humans_connected() for room in lobby.rooms.values())


async def stop_when_idle(lobby: Lobby, after: float, stop: Callable[[], None], poll: float = POLL_INTERVAL) -> None:
    """Call ``stop`` once nobody has been connected for ``after`` seconds, or at once when nobody is connected
    and every table there was has closed (its match over and everyone gone, or every player left before it)."""
    idle_since: float | None = None
    had_tables = False
    while True:
        await trio.sleep(poll)
        now = trio.current_time()
        had_tables = had_tables or bool(lobby.rooms)
        if anyone_connected(lobby):
            idle_since = None
            continue
        if idle_since is None:
            idle_since = now
        if (had_tables and not lobby.rooms) or now - idle_since >= after:
            stop()
            return
