"""What a connection may ask in each of its states: one table (``ACCEPTS``), read once per request before its handler.

A connection is in one of six states (``PeerState``): it has not said hello yet (``greeting``); it is in the lobby,
at no table, told of every change to the list (``lobby``); it holds a seat at a table whose match has not started
(``waiting``), is under way (``playing``) or is over (``over``); or it watches a table from no seat (``watching``,
protocol section 18): it is told the table's public events, and takes a seat (``join``) or goes back to the lobby
(``leave``) from there.

For each state and each request kind the table holds one verdict: ``TAKE`` (the request goes to its handler),
``HOST`` (it goes to its handler from the table's host, anyone else is refused ``not_host``), or a ``Refusal``: the
one reason and the one wording of it, wherever it is said. Every game action, of whichever game, has one row
(``ACTION``). A server about to restart (``draining``) refuses, over the table, whatever would begin a match
(``CLOSED_WHILE_DRAINING``). ``verdict`` reads all of it at once; handlers judge only what the request itself
brings (a table's number, a password, a seat, a move); the state is never judged twice.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TypeAlias

from quatro_shared import messages as m
from quatro_shared import protocol as p

from quatro_server.tables.room import Peer


class PeerState(enum.Enum):
    GREETING = "greeting"  # connected, no hello yet
    LOBBY = "lobby"  # at no table
    WAITING = "waiting"  # seated; the match has not started
    PLAYING = "playing"  # seated; the match is under way
    OVER = "over"  # seated; the match is over (a rematch may start)
    WATCHING = "watching"  # at a table from no seat: its public events only


#: The states with a seat.
SEATED = frozenset({PeerState.WAITING, PeerState.PLAYING, PeerState.OVER})


class Take(enum.Enum):
    """A verdict that lets the request through: from anyone in the state, or from the table's host alone."""

    ANYONE = "anyone"
    HOST = "host"


TAKE = Take.ANYONE
HOST = Take.HOST


@dataclass(frozen=True, slots=True)
class Refusal:
    """A request refused for the state it came in: its reason, and the words said for that reason everywhere.
    ``error``: the exchange itself is wrong (no hello yet, a second hello), answered ``error``, not ``refused``."""

    reason: str
    message: str
    error: bool = False

    def reply(self, request_id: int | None) -> m.Reply:
        if self.error:
            return m.Error(request_id, self.reason, self.message)
        return m.refused(request_id, self.reason, self.message)


#: What the table says of one request kind in one state.
Verdict: TypeAlias = Take | Refusal

HELLO_FIRST = Refusal(p.HELLO_FIRST, "the first request must be hello", error=True)
ALREADY_HELLO = Refusal(p.ALREADY_HELLO, "hello was already said on this connection", error=True)
NOT_SEATED = Refusal(p.NOT_SEATED, "you are not at a table")
ALREADY_SEATED = Refusal(p.ALREADY_SEATED, "leave your table first")
MATCH_STARTED = Refusal(p.MATCH_STARTED, "the match has started: its seats are fixed")
NOT_STARTED = Refusal(p.NOT_STARTED, "the match has not started")
NOT_OVER = Refusal(p.NOT_OVER, "the match is not over")
NOT_HOST = Refusal(p.NOT_HOST, "only the host can do that")  # as a game's own not_host (Quatro's R18) says it
DRAINING = Refusal(p.DRAINING, "the server is about to restart: no new tables or matches")
#: Whatever a watcher may not ask (a seat's requests, another table, chat: a watcher is heard by nobody at a table).
WATCHING = Refusal(p.WATCHING, "a watcher cannot do that: leave the table, or take a free seat")

#: The row every game action shares.
ACTION = "action"

# fmt: off
_ROWS: dict[str, tuple[Verdict, Verdict, Verdict, Verdict, Verdict, Verdict]] = {
    #                  greeting     lobby           waiting          playing          over             watching
    p.HELLO:          (TAKE,        ALREADY_HELLO,  ALREADY_HELLO,   ALREADY_HELLO,   ALREADY_HELLO,   ALREADY_HELLO),
    p.PING:           (HELLO_FIRST, TAKE,           TAKE,            TAKE,            TAKE,            TAKE),
    p.LIST_TABLES:    (HELLO_FIRST, TAKE,           TAKE,            TAKE,            TAKE,            TAKE),
    p.RENAME:         (HELLO_FIRST, TAKE,           TAKE,            TAKE,            TAKE,            TAKE),
    p.CHAT:           (HELLO_FIRST, TAKE,           TAKE,            TAKE,            TAKE,            WATCHING),
    p.CREATE_TABLE:   (HELLO_FIRST, TAKE,           ALREADY_SEATED,  ALREADY_SEATED,  ALREADY_SEATED,  WATCHING),
    p.JOIN:           (HELLO_FIRST, TAKE,           ALREADY_SEATED,  ALREADY_SEATED,  ALREADY_SEATED,  TAKE),
    p.REJOIN:         (HELLO_FIRST, TAKE,           ALREADY_SEATED,  ALREADY_SEATED,  ALREADY_SEATED,  WATCHING),
    p.LEAVE:          (HELLO_FIRST, NOT_SEATED,     TAKE,            TAKE,            TAKE,            TAKE),
    p.MOVE:           (HELLO_FIRST, NOT_SEATED,     TAKE,            MATCH_STARTED,   MATCH_STARTED,   WATCHING),
    p.ADD_BOT:        (HELLO_FIRST, NOT_SEATED,     HOST,            MATCH_STARTED,   MATCH_STARTED,   WATCHING),
    p.REMOVE_BOT:     (HELLO_FIRST, NOT_SEATED,     HOST,            MATCH_STARTED,   MATCH_STARTED,   WATCHING),
    p.START:          (HELLO_FIRST, NOT_SEATED,     HOST,            MATCH_STARTED,   MATCH_STARTED,   WATCHING),
    p.REMATCH:        (HELLO_FIRST, NOT_SEATED,     NOT_OVER,        NOT_OVER,        HOST,            WATCHING),
    p.RESYNC:         (HELLO_FIRST, NOT_SEATED,     NOT_STARTED,     TAKE,            TAKE,            TAKE),
    p.WATCH:          (HELLO_FIRST, TAKE,           ALREADY_SEATED,  ALREADY_SEATED,  ALREADY_SEATED,  WATCHING),
    p.WATCHERS:       (HELLO_FIRST, NOT_SEATED,     HOST,            HOST,            HOST,            WATCHING),
    p.PAST_MATCHES:   (HELLO_FIRST, TAKE,           TAKE,            TAKE,            TAKE,            TAKE),
    p.REPLAY:         (HELLO_FIRST, TAKE,           TAKE,            TAKE,            TAKE,            TAKE),
    p.LEADERBOARD:    (HELLO_FIRST, TAKE,           TAKE,            TAKE,            TAKE,            TAKE),
    p.PLAYER_CARD:    (HELLO_FIRST, TAKE,           TAKE,            TAKE,            TAKE,            TAKE),
    p.PROVE:          (HELLO_FIRST, TAKE,           TAKE,            TAKE,            TAKE,            TAKE),
    ACTION:           (HELLO_FIRST, NOT_SEATED,     NOT_STARTED,     TAKE,            TAKE,            WATCHING),
}
# fmt: on

#: What each state does with each request kind (a game action's kind: the ``ACTION`` row).
ACCEPTS: dict[PeerState, dict[str, Verdict]] = {
    state: {kind: row[column] for kind, row in _ROWS.items()} for column, state in enumerate(PeerState)
}


def state_of(peer: Peer, greeted: bool, watching: bool = False) -> PeerState:
    """The state of ``peer``; ``greeted``: whether it said hello (a connection the server made in-process always has);
    ``watching``: whether it watches a table (the lobby keeps who watches what)."""
    if not greeted:
        return PeerState.GREETING
    if watching:
        return PeerState.WATCHING
    room = peer.room
    if room is None or peer.seat is None:
        return PeerState.LOBBY
    table = room.table
    if table is None:
        return PeerState.WAITING
    return PeerState.OVER if room.game.over(table) else PeerState.PLAYING


#: What a draining server refuses (``draining``): whatever would begin a match. A running match plays on, and its
#: players may come back to it (``rejoin``).
CLOSED_WHILE_DRAINING = frozenset({p.CREATE_TABLE, p.JOIN, p.START, p.REMATCH})


def verdict(state: PeerState, kind: str, *, hosts: bool = False, draining: bool = False) -> Take | Refusal:
    """The verdict on a request of ``kind`` in ``state``, as the connection stands: ``TAKE`` or the one refusal.
    ``hosts``: whether the connection's seat hosts its table (a ``HOST`` verdict is taken from it, refused
    ``not_host`` to anyone else); ``draining``: whether the server is about to restart. Every kind that is not a
    lobby request's is a game action's (the wire lets no unknown kind through)."""
    row = ACCEPTS[state]
    found = row.get(kind)
    said = row[ACTION] if found is None else found
    if said is HOST:
        said = TAKE if hosts else NOT_HOST
    if said is TAKE and draining and kind in CLOSED_WHILE_DRAINING:
        return DRAINING
    return said
