"""What the app asks of a game: one ``ClientGame`` per game, found in the registry (``quatro_tui.games``).

The app, the lobby, the room, the help and the command line hold a ``ClientGame`` and never a game's name: which
screen a table in a given state calls for, how an update is kept, what the bots of each level are like, how
``quatro play --game G`` reads its options, and the rules the help page shows. Everything else about a game (its
actions, views, table sizes and levels) is its contract's (``quatro_shared.game.GameContract``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from rich.text import Text
from textual.message import Message
from textual.screen import Screen

from quatro_shared.games import AnyContract
from quatro_shared.messages import Reply, RequestBody

from quatro_tui import words
from quatro_tui.table import AnyTable

if TYPE_CHECKING:
    from quatro_tui.app import QuatroApp
    from quatro_tui.lessons.steps import Lesson

#: A line of the help's marks: (the mark, what it means), each in Textual markup.
MarkRow = tuple[str, str]


class WayOn(Message):
    """A game's screen asks for something beyond the game's moves: ``rematch``, ``lobby`` or ``chat``."""

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what


#: A game's own table (``quatro_tui.table.Table`` or its subclass): what its methods below are handed.
T = TypeVar("T", bound=AnyTable)


class ClientGame(ABC, Generic[T]):
    """One game as this client plays it. Subclasses set the class attributes and implement the abstract methods;
    the others do what most games need."""

    #: The game's contract: its name, title, table sizes and bot levels.
    contract: AnyContract
    #: What the client keeps of one of its tables (the platform's ``Table``, or a subclass of its own).
    table_type: type[T]
    #: What the game is, for ``quatro play --help`` ("the board game for two, against a bot").
    summary: str
    #: The bots a host may seat, weakest first: (level, what it is like). The levels are the contract's.
    bot_levels: tuple[tuple[str, str], ...]
    #: The level of the bots ``quatro play`` seats unless told, and why that one (said in ``--help``; "" for none).
    play_level: str
    play_level_why: str = ""
    #: Whether a table's seats form teams of partners (the room shows each seat's team).
    teams: bool = False

    def team_of(self, seat: int, players: int) -> int:
        """The team of ``seat`` at a table of ``players``: each seat its own, unless the game seats teams."""
        return seat

    #: The rules in short, in Textual markup, for the help page of a screen that brings none of its own.
    help_rules: str
    #: Its guided first match (``quatro learn``), if it has one.
    lesson: Lesson[T] | None = None
    #: The symbols its words draw beyond ASCII, and the stand-in of each where the terminal has no Unicode
    #: (``quatro_tui.words.plain``): one character to its ASCII.
    ascii_stand_ins: Mapping[str, str] = MappingProxyType({})

    @property
    def name(self) -> str:
        return self.contract.name

    @property
    def title(self) -> str:
        return self.contract.title

    # --- a table's state ----------------------------------------------------------------------------

    def urgent(self, line: str) -> bool:
        """Whether a line of the feed is one the player must not miss (drawn so that it cannot be): by default none."""
        return False

    @abstractmethod
    def take(self, game: T, view: Any, events: Sequence[Any], received_at: float) -> bool:
        """Keep an update of this game's table (``view``: the seat's view after ``events``) in ``game``. True when
        the player must not miss it (the bell rings, if asked for)."""

    def recall(self, game: T, events: Sequence[Any]) -> None:
        """What this seat saw of its match before it rejoined (the ``recent`` push), into a feed that has none of
        it. By default nothing: a game whose screen keeps no feed."""

    @abstractmethod
    def screen(self, game: T) -> type[Screen[None]] | None:
        """The screen the table's state calls for (None: none yet, whatever shows stays)."""

    def watch_screen(self, game: T) -> type[Screen[None]] | None:
        """The screen of a table watched from no seat (``game.watching``; its views are from ``NO_SEAT``). By default
        the game's own screen once a view came: a game that hides nothing draws a watcher's view as a seat's, with
        no move its legal moves allow (``quatro_tui.screens.watch.WatchScreen`` before the first view)."""
        from quatro_tui.screens.watch import WaitingToWatch

        wanted = self.screen(game) if game.view is not None else None
        return wanted or WaitingToWatch

    def phase_clock(self, game: T) -> tuple[str, float] | None:
        """What the table's phase counts down to and the seconds left now (the status line's countdown), or None
        when no clock runs. By default none: a game whose screen shows its own clock, or has none."""
        return None

    def progress(self, game: T) -> str:
        """How far the match is, for the status line beside the game's name ("round 3"); "" for nothing."""
        return ""

    def scores(self, game: T, tells_target: bool) -> Text:
        """The score, for the status line (with what it is played to, if ``tells_target``); empty for none."""
        return Text("")

    def watch_outcome(self, game: T) -> Text | None:
        """Who won, as the watch banner's second line says it once the match is over; None before then. By default
        none: a game whose watch screen tells its end itself."""
        return None

    @abstractmethod
    def in_match(self, game: T) -> bool:
        """Whether a match is under way at the table (quitting asks first; the session does not close when idle)."""

    @abstractmethod
    def help_marks(self, screen: Screen[Any], ascii_only: bool) -> tuple[str, list[MarkRow]]:
        """The title and the rows of the help's marks for ``screen``, a screen that brings none of its own."""

    def refusal(self, request: RequestBody, reply: Reply, ascii_only: bool) -> str:
        """A refused request (or one answered ``error``) in words, for the feed. By default the platform's words
        (``quatro_tui.words.refusal``), which name no move of the game."""
        return words.refusal(request, reply)

    # --- its screens, told by the app ---------------------------------------------------------------

    def make_screen(self, app: QuatroApp, wanted: type[Screen[None]]) -> Screen[None]:
        """A new screen of the class ``screen`` asked for."""
        return wanted()

    def updated(self, app: QuatroApp, view: Any, events: Sequence[Any], received_at: float) -> None:
        """An update was kept and the screen it calls for shows: tell a screen that draws the view itself."""

    def changed(self, app: QuatroApp) -> None:
        """Names, the host or the link changed: tell a screen that does not redraw from ``app.game`` by itself."""

    def chat(self, app: QuatroApp, line: str) -> None:
        """A chat line (already in the feed): show it on a screen that has no feed."""

    # --- replays ------------------------------------------------------------------------------------

    #: What the replay player's jump key goes to ("next call"): the frames ``replay_mark`` marks.
    replay_jump: str = "next move"

    def replay_mark(self, events: Sequence[Any]) -> bool:
        """Whether a frame with ``events`` is one the replay player's jump stops at (a move that decided something)."""
        return False

    # --- how its words read -------------------------------------------------------------------------

    def table_words(self, players: int) -> str:
        """The table's game and size as the room's heading says them: the title, then the seats."""
        return f"{self.title}, {players} seats"
