"""The client's picture of its table, as every game has it: who sits where, the latest view, the feed, the link, and
the local countdowns. A game whose screens need more keeps it in a subclass of ``Table`` in its own package (Quatro's
``quatro_tui.games.quatro.table.QuatroTable``), named by its client part (``ClientGame.table_type``).

The server sends remaining durations, never clock readings; the client notes when each view arrived (its own
monotonic clock) and counts down from there until the next update. The clock is injectable so that screenshots can
freeze it; so is the randomness (a game's screens may start a cursor at random, as Quatro's sign grid does).
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from quatro_shared import games
from quatro_shared.messages import Seating
from quatro_shared.tables import TablePhase

from quatro_tui import words

#: Feed lines kept (the screen shows the latest few).
FEED_LINES = 60


class SeatsView(Protocol):
    """What the platform reads of any game's view: whose seat it is drawn for."""

    @property
    def seat(self) -> int: ...


V = TypeVar("V", bound=SeatsView)
T = TypeVar("T", bound="Table[Any]")


@dataclass
class Table(Generic[V]):
    ascii_only: bool = False
    clock: Callable[[], float] = time.monotonic
    #: The seat's latest view, of the table's game (None before the first).
    view: V | None = None
    #: When ``view`` arrived, on ``clock``.
    received_at: float = 0.0
    #: The server's ``table`` message: names, bots, host, timing.
    seating: Seating | None = None
    feed: deque[str] = field(default_factory=lambda: deque(maxlen=FEED_LINES))
    #: The connection's state, for the status line ("" when connected).
    link: str = ""
    #: One's seat as the server gave it on joining (before the first view arrives).
    my_seat: int | None = None
    #: The table watched from no seat (protocol section 18), None when seated or in the lobby: its views are from
    #: ``NO_SEAT`` and its game's watch screen shows them.
    watching: int | None = None
    #: A replay's table (``quatro_tui.replay.player``): nobody plays it live, so no screen asks for a move or offers
    #: a host's key; the screens tell what happened instead.
    replay: bool = False
    #: The client's randomness for what a screen starts at random. Unpredictable by default; screenshots fix it.
    rng: random.Random = field(default_factory=random.SystemRandom)
    #: The table's game: a name of the client's registry (``quatro_tui.games``). Before a table is known, the game
    #: a table created with none named would play.
    kind: str = field(default_factory=lambda: games.DEFAULT.name)
    #: When the link went down (on ``clock``), None while it is up. Every countdown stands where it was then: nobody
    #: can act on it, and the table's clock cannot be known from here. The next view starts them again.
    stopped_at: float | None = None

    def moved_to(self, table_type: type[T], kind: str) -> T:
        """This table as ``table_type`` (the kind's own, when the game the client was told of changes): what every
        game keeps (the feed, the seat, the link, the clock) carries over; a view of another game does not."""
        kept = {f.name: getattr(self, f.name) for f in dataclasses.fields(Table) if f.init and f.name != "view"}
        kept["kind"] = kind
        return table_type(**kept)

    # --- arriving state ---------------------------------------------------------------------------

    def took(self, view: V, received_at: float) -> None:
        """A view has come: it is the table now, and the countdowns run from its arrival."""
        self.view, self.received_at, self.stopped_at = view, received_at, None

    def seat(self, seating: Seating) -> None:
        self.seating = seating

    def say(self, line: str) -> None:
        self.feed.append(line)

    # --- reading it -------------------------------------------------------------------------------

    @property
    def me(self) -> int | None:
        return self.my_seat if self.view is None else self.view.seat

    @property
    def table_phase(self) -> TablePhase | None:
        """The table's phase in the lobby's words, as the last ``table`` push said it."""
        return None if self.seating is None else self.seating.phase

    @property
    def players(self) -> int:
        if self.seating is not None:
            return self.seating.players
        return games.CONTRACTS.get(self.kind, games.DEFAULT).seats[0]

    def raw_name(self, seat: int) -> str:
        """A seat's player by name (oneself too), as this terminal can draw it (``words.plain``).

        A name is another player's text: widgets draw it as plain text, never as markup."""
        name = None
        if self.seating is not None and seat < len(self.seating.seats):
            name = self.seating.seats[seat].name
        return words.plain(words.person(seat, name), self.ascii_only)

    def name(self, seat: int) -> str:
        """A seat's player as the feed says it: "you" for oneself."""
        return "you" if seat == self.me else self.raw_name(seat)

    def is_bot(self, seat: int) -> bool:
        return bool(self.seating and seat < len(self.seating.seats) and self.seating.seats[seat].bot)

    def is_host(self) -> bool:
        return self.seating is not None and self.me is not None and self.seating.host == self.me

    def timing(self, key: str, default: float) -> float:
        if self.seating is not None and key in self.seating.timing:
            return float(self.seating.timing[key])
        return default

    def stop_clocks(self) -> None:
        """The link is down: the countdowns stop where they are, until a view arrives."""
        if self.stopped_at is None:
            self.stopped_at = self.clock()

    @property
    def stopped(self) -> bool:
        return self.stopped_at is not None

    def elapsed(self) -> float:
        """Seconds since the view arrived (until the link went down, while it is down)."""
        now = self.clock() if self.stopped_at is None else self.stopped_at
        return max(0.0, now - self.received_at)

    def left(self, ms: int | None) -> float | None:
        """Seconds left now of a countdown the view gave in milliseconds."""
        if ms is None:
            return None
        return max(0.0, ms / 1000 - self.elapsed())


#: A table of any game, as the platform holds it (the app, the lobby, the generic screens): what it reads of the view
#: is the game's to say (``ClientGame``, typed by its own table).
AnyTable = Table[Any]
