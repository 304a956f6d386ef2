"""Quarto's shared vocabulary: pieces, squares, the Q7 notation, actions, events, the view of a table and its legal moves.

Quarto (``docs/quarto.md``, rules Q1–Q7) is a two-player board game: a 4×4 board, 16 pieces of four binary
attributes; you place the piece your opponent chose for you, then choose the one they place. This module is
the contract a Quarto client, a bot and the server share. It does no I/O and imports neither the server nor
the client.

Quarto has **no hidden information**: both seats see the whole board, the pool, the piece in hand and the
move list. A seat's view differs from the other's only by ``seat``; ``QuartoView`` is still made per seat, so
that the server's one gate (H1) stays one gate for both games.

Encodings (compact, used on the wire, by the engine and by the solver):

- A **piece** is an int 0–15, one bit per attribute (Q1): bit 0 tall (1) / short (0), bit 1 dark / light,
  bit 2 round / square, bit 3 solid ("filled") / hollow. Written (Q7) by four letters in that order,
  ``T``/``S``, ``D``/``L``, ``R``/``Q``, ``F``/``H``: ``TDRF`` is 15, ``SLQH`` is 0, ``TDRH`` is 7.
- A **square** is an int 0–15, ``4 * row + column`` with rows and columns from 0; written ``a1``..``d4``
  (column letter a–d, row number 1–4): ``a1`` is 0, ``d1`` is 3, ``a4`` is 12, ``d4`` is 15.
- A **turn** is written ``place square, give piece``: ``b3 SLQF``. The starter's first turn is a give
  alone (``SLQF``); a game's last turn, which fills the board or wins, is a place alone (``b3``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import ClassVar

from quatro_shared import protocol as p
from quatro_shared.game import GameContract
from quatro_shared.messages import Push

#: The game's name on the wire (``create_table``'s ``game``, the ``table`` and ``lobby`` pushes, its updates).
NAME = "quarto"

# --- Q1: material --------------------------------------------------------------------------------

SIZE = 4
SQUARES = SIZE * SIZE
PIECES = 16  # every combination of four binary attributes, each exactly once (Q1)
ALL_PIECES = (1 << PIECES) - 1  # the pool as a bit set: bit p is piece p

#: The four attributes, in the bit order of a piece, each with its (set, clear) letters and names (Q7).
ATTRIBUTES: tuple[tuple[str, str, str, str], ...] = (
    ("T", "S", "tall", "short"),
    ("D", "L", "dark", "light"),
    ("R", "Q", "round", "square"),
    ("F", "H", "solid", "hollow"),
)

COLUMNS = "abcd"
ROWS = "1234"

#: The ten lines of Q4, each a tuple of four squares: rows 1–4, columns a–d, the diagonals a1–d4 and a4–d1.
LINES: tuple[tuple[int, int, int, int], ...] = (
    (0, 1, 2, 3),  # row 1: a1 b1 c1 d1
    (4, 5, 6, 7),
    (8, 9, 10, 11),
    (12, 13, 14, 15),  # row 4
    (0, 4, 8, 12),  # column a: a1 a2 a3 a4
    (1, 5, 9, 13),
    (2, 6, 10, 14),
    (3, 7, 11, 15),  # column d
    (0, 5, 10, 15),  # a1-d4
    (12, 9, 6, 3),  # a4-d1
)


class NotationError(ValueError):
    """Text that is not a piece, a square or a turn in Q7 notation; the message says what was expected."""


def is_piece(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < PIECES


def is_square(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < SQUARES


def format_piece(piece: int) -> str:
    """``7`` -> ``"TDRH"`` (Q7)."""
    if not is_piece(piece):
        raise NotationError(f"a piece is a number 0-15, not {piece!r}")
    return "".join(set_ if piece >> k & 1 else clear for k, (set_, clear, _, _) in enumerate(ATTRIBUTES))


def parse_piece(text: str) -> int:
    """``"TDRH"`` -> ``7``. Four letters, one per attribute in the order height, colour, shape, fill; any case."""
    if not isinstance(text, str):
        raise NotationError(f"a piece is four letters like TDRH, not {text!r}")
    letters = text.strip().upper()
    if len(letters) != len(ATTRIBUTES):
        raise NotationError(f"a piece is four letters (T/S, D/L, R/Q, F/H), like TDRH; {text!r} has {len(letters)}")
    piece = 0
    for k, (letter, (set_, clear, set_name, clear_name)) in enumerate(zip(letters, ATTRIBUTES)):
        if letter == set_:
            piece |= 1 << k
        elif letter != clear:
            raise NotationError(
                f"letter {k + 1} of a piece is {set_} ({set_name}) or {clear} ({clear_name}), not {letter!r} in {text!r}"
            )
    return piece


def describe_piece(piece: int) -> str:
    """``7`` -> ``"tall dark round hollow"``."""
    format_piece(piece)  # validates
    return " ".join(
        set_name if piece >> k & 1 else clear_name for k, (_, _, set_name, clear_name) in enumerate(ATTRIBUTES)
    )


def format_square(square: int) -> str:
    """``0`` -> ``"a1"``, ``15`` -> ``"d4"`` (Q7)."""
    if not is_square(square):
        raise NotationError(f"a square is a number 0-15, not {square!r}")
    return f"{COLUMNS[square % SIZE]}{ROWS[square // SIZE]}"


def parse_square(text: str) -> int:
    """``"b3"`` -> ``9``: a column a–d then a row 1–4; any case."""
    if not isinstance(text, str):
        raise NotationError(f"a square is a column a-d and a row 1-4, like b3, not {text!r}")
    s = text.strip().lower()
    if len(s) != 2 or s[0] not in COLUMNS or s[1] not in ROWS:
        raise NotationError(f"a square is a column a-d and a row 1-4, like b3, not {text!r}")
    return ROWS.index(s[1]) * SIZE + COLUMNS.index(s[0])


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn in Q7 notation: the square the given piece went to, then the piece given. Either may be absent
    (the starter's opening give has no place; the game's last place has no give), never both."""

    square: int | None
    give: int | None

    def __post_init__(self) -> None:
        if self.square is None and self.give is None:
            raise NotationError("a turn places a piece, gives one, or both")
        if self.square is not None and not is_square(self.square):
            raise NotationError(f"a square is a number 0-15, not {self.square!r}")
        if self.give is not None and not is_piece(self.give):
            raise NotationError(f"a piece is a number 0-15, not {self.give!r}")

    def __str__(self) -> str:
        return format_turn(self)


def format_turn(turn: Turn) -> str:
    """``Turn(9, 12)`` -> ``"b3 SLQF"``; ``Turn(None, 12)`` -> ``"SLQF"``; ``Turn(9, None)`` -> ``"b3"``."""
    parts = []
    if turn.square is not None:
        parts.append(format_square(turn.square))
    if turn.give is not None:
        parts.append(format_piece(turn.give))
    return " ".join(parts)


def parse_turn(text: str) -> Turn:
    """``"b3 SLQF"``, ``"SLQF"`` or ``"b3"`` (a comma after the square is allowed: ``"b3, SLQF"``)."""
    if not isinstance(text, str):
        raise NotationError(f"a turn is written like 'b3 SLQF', not {text!r}")
    words = text.replace(",", " ").split()
    if len(words) == 2:
        return Turn(parse_square(words[0]), parse_piece(words[1]))
    if len(words) == 1:
        word = words[0]
        return Turn(parse_square(word), None) if len(word) == 2 else Turn(None, parse_piece(word))
    raise NotationError(f"a turn is a square then a piece, like 'b3 SLQF'; {text!r} has {len(words)} words")


def common_attributes(pieces: tuple[int, ...] | list[int]) -> tuple[int, int]:
    """The attributes all ``pieces`` share, as bit sets: (set in every one, clear in every one)."""
    on, off = 0xF, 0xF
    for piece in pieces:
        on &= piece
        off &= ~piece
    return on, off & 0xF


def shared_attribute_names(pieces: tuple[int, ...] | list[int]) -> tuple[str, ...]:
    """The names of the attribute values all ``pieces`` share: ``("tall", "hollow")``."""
    on, off = common_attributes(pieces)
    names = []
    for k, (_, _, set_name, clear_name) in enumerate(ATTRIBUTES):
        if on >> k & 1:
            names.append(set_name)
        if off >> k & 1:
            names.append(clear_name)
    return tuple(names)


def winning_line(board: tuple[int | None, ...] | list[int | None], square: int) -> tuple[int, ...] | None:
    """The first line through ``square`` that is full and shares an attribute (Q4), or ``None``."""
    for line in LINES:
        if square in line:
            pieces = [board[s] for s in line]
            if all(p is not None for p in pieces):
                on, off = common_attributes([p for p in pieces if p is not None])
                if on or off:
                    return line
    return None


# --- the match (Q2, Q6) --------------------------------------------------------------------------

SEATS = 2
#: Q6 decided here: a match is a fixed number of games, the start alternating, so an even number gives each
#: seat the first move equally often. The match is won by the seat with more game wins; equal wins (draws
#: included) make a drawn match. A fixed length ends even between players who draw every game.
DEFAULT_GAMES = 4
MAX_GAMES = 100


class Phase(StrEnum):
    """The phases of a Quarto table: lobby -> playing -> between (after each game) -> ... -> over."""

    LOBBY = "lobby"  # seats filling; the match has not started
    PLAYING = "playing"  # a game is under way; ``Step`` says which step of whose turn
    BETWEEN = "between"  # a game ended; its result stays on screen until the next begins
    OVER = "over"  # the match's games are all played (Q6)


class Step(StrEnum):
    """The two steps of a turn (Q3); the starter's first turn is a give alone (Q2)."""

    PLACE = "place"  # place the piece you were given
    GIVE = "give"  # choose the piece your opponent places


class Reason(StrEnum):
    """Why a Quarto action was refused. The values are part of the protocol: never rename one."""

    # The platform's refusals of a game action (quatro_shared.protocol.GAME_ACTION_REASONS), in its words.
    UNKNOWN_ACTION = p.UNKNOWN_ACTION
    BAD_SEAT = p.BAD_SEAT
    BAD_ARGUMENT = p.BAD_ARGUMENT
    DISCONNECTED = p.DISCONNECTED
    NOT_STARTED = p.NOT_STARTED
    # Quarto's own.
    MATCH_OVER = "match_over"
    WRONG_PHASE = "wrong_phase"  # e.g. placing between games
    NOT_YOUR_TURN = "not_your_turn"  # the other seat is to act (Q3)
    WRONG_STEP = "wrong_step"  # placing when you must give, or giving before you placed (Q3)
    SQUARE_TAKEN = "square_taken"  # Q3: only an empty square
    PIECE_UNAVAILABLE = "piece_unavailable"  # Q1: already on the board or already given
    ALREADY_READY = "already_ready"


#: A refusal's words, for clients that show them and for logs.
MESSAGES: dict[Reason, str] = {
    Reason.UNKNOWN_ACTION: "that is not a Quarto action",
    Reason.BAD_SEAT: "no such seat at this table",
    Reason.BAD_ARGUMENT: "a square is 0-15 (a1-d4) and a piece 0-15 (four letters like TDRH)",
    Reason.DISCONNECTED: "this seat is not connected",
    Reason.NOT_STARTED: "the match has not started",
    Reason.MATCH_OVER: "the match is over",
    Reason.WRONG_PHASE: "no game is being played right now",
    Reason.NOT_YOUR_TURN: "it is your opponent's turn",
    Reason.WRONG_STEP: "not this step of the turn: place the piece you were given, then give one",
    Reason.SQUARE_TAKEN: "that square is taken",
    Reason.PIECE_UNAVAILABLE: "that piece is not in the pool",
    Reason.ALREADY_READY: "you are already ready for the next game",
}


@dataclass(frozen=True, slots=True)
class Refusal:
    reason: Reason
    message: str = ""

    @classmethod
    def of(cls, reason: Reason) -> Refusal:
        return cls(reason, MESSAGES[reason])


# --- actions -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Action:
    kind: ClassVar[str] = "quarto_action"


@dataclass(frozen=True, slots=True)
class Place(Action):
    """Place the piece you were given on an empty square (Q3). The piece is never named: it is the one given."""

    square: int
    kind: ClassVar[str] = "place"


@dataclass(frozen=True, slots=True)
class Give(Action):
    """Choose a piece of the pool for your opponent to place (Q2, Q3)."""

    piece: int
    kind: ClassVar[str] = "give"


@dataclass(frozen=True, slots=True)
class NextGame(Action):
    """Between games: this seat is ready for the next one (it begins when both are, or when the break ends)."""

    kind: ClassVar[str] = "next_game"


#: What each phase and step accepts from a player, in one place (the seat must also be the one to act while
#: playing). ``Connect``/``Disconnect`` come from the server alone and are accepted in every phase.
ACCEPTS: dict[tuple[Phase, Step | None], frozenset[type[Action]]] = {
    (Phase.LOBBY, None): frozenset(),
    (Phase.PLAYING, Step.GIVE): frozenset({Give}),
    (Phase.PLAYING, Step.PLACE): frozenset({Place}),
    (Phase.BETWEEN, None): frozenset({NextGame}),
    (Phase.OVER, None): frozenset(),
}

PLAYER_ACTIONS: tuple[type[Action], ...] = (Place, Give, NextGame)
#: The kinds of the player actions: a Quarto table's game requests on the wire (``place``, ``give``, ``next_game``).
ACTION_KINDS: frozenset[str] = frozenset(cls.kind for cls in PLAYER_ACTIONS)

# --- bots ----------------------------------------------------------------------------------------

#: The levels of a Quarto bot, weakest first: ``add_bot``'s ``level`` at a Quarto table. ``random`` plays any
#: legal move; ``normal`` takes a win and never hands one over when it can help it; ``perfect`` plays exactly
#: near the end (``docs/bots.md``).
LEVELS: tuple[str, ...] = ("random", "normal", "perfect")
#: The level of a bot added to a Quarto table with no level named.
DEFAULT_LEVEL = "perfect"


# --- events --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Event:
    kind: ClassVar[str] = "quarto_event"


@dataclass(frozen=True, slots=True)
class MatchStarted(Event):
    """The match begins; ``first`` is the seat drawn by lot to start the first game (Q2)."""

    games: int
    first: int
    kind: ClassVar[str] = "quarto_match_started"


@dataclass(frozen=True, slots=True)
class GameStarted(Event):
    """Game ``game`` (from 1) begins; ``starter`` gives the first piece (Q2, Q6: the start alternates)."""

    game: int
    starter: int
    kind: ClassVar[str] = "quarto_game_started"


@dataclass(frozen=True, slots=True)
class PieceGiven(Event):
    """``seat`` gave ``piece`` to its opponent. ``notation`` is the whole turn in Q7 (``b3 SLQF``, or ``SLQF``
    for the opening give); ``by_lot`` when the move clock ran out and the piece was drawn for the seat."""

    seat: int
    piece: int
    notation: str
    by_lot: bool = False
    kind: ClassVar[str] = "piece_given"


@dataclass(frozen=True, slots=True)
class PiecePlaced(Event):
    """``seat`` placed ``piece`` (the one it was given) on ``square``; ``notation`` is the square (``b3``)."""

    seat: int
    square: int
    piece: int
    notation: str
    by_lot: bool = False
    kind: ClassVar[str] = "piece_placed"


@dataclass(frozen=True, slots=True)
class GameEnded(Event):
    """A game ended: ``winner`` completed ``line`` sharing ``shared`` (Q4), or the board filled (Q5, ``winner`` None).

    ``scores`` are the match's game wins per seat, ``draws`` its drawn games (Q6); ``moves`` the game in Q7.
    """

    game: int
    winner: int | None
    line: tuple[int, ...] | None
    shared: tuple[str, ...]
    scores: tuple[int, int]
    draws: int
    moves: tuple[str, ...]
    kind: ClassVar[str] = "quarto_game_ended"


@dataclass(frozen=True, slots=True)
class PlayerReady(Event):
    """Between games: ``seat`` is ready for the next one."""

    seat: int
    kind: ClassVar[str] = "quarto_player_ready"


@dataclass(frozen=True, slots=True)
class MatchOver(Event):
    """All games played (Q6): ``winners`` has the seat with more wins, or both seats for a drawn match."""

    winners: tuple[int, ...]
    scores: tuple[int, int]
    draws: int
    kind: ClassVar[str] = "quarto_match_over"


@dataclass(frozen=True, slots=True)
class SeatConnected(Event):
    seat: int
    kind: ClassVar[str] = "quarto_seat_connected"


@dataclass(frozen=True, slots=True)
class SeatDisconnected(Event):
    seat: int
    kind: ClassVar[str] = "quarto_seat_disconnected"


# --- the view ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SeatState:
    seat: int
    bot: bool
    connected: bool
    #: Between games: ready for the next one.
    ready: bool


@dataclass(frozen=True, slots=True)
class QuartoView:
    """A Quarto table as seat ``seat`` sees it: everything, since Quarto hides nothing (see the module's docstring)."""

    seat: int
    phase: Phase
    #: Whose turn it is and which step, while playing (``None`` otherwise).
    turn: int | None
    step: Step | None
    #: The board, square by square (0 = a1 .. 15 = d4): a piece, or ``None`` for an empty square.
    board: tuple[int | None, ...]
    #: The pieces neither on the board nor in hand, ascending.
    pool: tuple[int, ...]
    #: The piece given and waiting to be placed (by ``turn``), if any.
    in_hand: int | None
    #: The current (or last) game, from 1, and the match's length (Q6).
    game: int
    games: int
    starter: int | None
    #: The match score: game wins per seat, and drawn games (Q6).
    scores: tuple[int, int]
    draws: int
    #: The last game's end: winner (``None`` for a draw), its winning line and the attribute values it shares.
    winner: int | None
    line: tuple[int, ...] | None
    shared: tuple[str, ...]
    #: The current (or last) game's turns in Q7 notation.
    moves: tuple[str, ...]
    seats: tuple[SeatState, ...]
    #: Milliseconds left on the move clock (``None`` when the clock is off), or in the break between games.
    clock_ms: int | None
    phase_ms: int | None
    #: When the match is over: the winners (both seats for a drawn match).
    winners: tuple[int, ...]


def winning_squares(board: Sequence[int | None], piece: int) -> tuple[int, ...]:
    """The empty squares where ``piece`` completes a line sharing an attribute (Q4)."""
    out = []
    for square, held in enumerate(board):
        if held is None:
            trial = list(board)
            trial[square] = piece
            if winning_line(trial, square) is not None:
                out.append(square)
    return tuple(out)


def pool_of(view: QuartoView) -> int:
    """The pool as a bit set (bit ``piece`` set when that piece can still be given)."""
    bits = 0
    for piece in view.pool:
        bits |= 1 << piece
    return bits


def legal(view: QuartoView) -> list[Action]:
    """The actions the seat of ``view`` may take now, by the rules (Q3) and ``ACCEPTS``; empty when it is not to act.

    A turn is two steps (Q3): what the seat may give after a placement is ``legal(placed(view, square))``."""
    me = view.seats[view.seat] if view.seat < len(view.seats) else None
    if me is None or not me.connected:
        return []  # a seat that is gone plays nothing until it comes back
    if view.phase is Phase.BETWEEN:
        return [] if me.ready else [NextGame()]
    if view.phase is not Phase.PLAYING or view.turn != view.seat:
        return []
    if view.step is Step.PLACE:
        return [Place(s) for s, p in enumerate(view.board) if p is None]
    if view.step is Step.GIVE:
        return [Give(p) for p in view.pool]
    return []


def placed(view: QuartoView, square: int) -> QuartoView:
    """The seat's view once its piece in hand is on ``square`` (a ``Place`` that ``legal(view)`` offers), as far as
    the view tells before the table answers: nothing in hand, and the seat to give (Q3). A placement that completes
    a line (Q4) or fills the board (Q5) ends the game: no step is left, and ``legal`` offers nothing more."""
    if view.phase is not Phase.PLAYING or view.turn != view.seat or view.step is not Step.PLACE:
        raise ValueError(f"seat {view.seat} has no piece to place now")
    if view.in_hand is None or not is_square(square) or view.board[square] is not None:
        raise ValueError(f"seat {view.seat} cannot place on square {square!r}")
    board = list(view.board)
    board[square] = view.in_hand
    ends = winning_line(board, square) is not None or all(p is not None for p in board)
    return replace(
        view,
        board=tuple(board),
        in_hand=None,
        turn=None if ends else view.turn,
        step=None if ends else Step.GIVE,
    )


# --- the update ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QuartoUpdate(Push):
    """A Quarto table's ``update``: its events (Quarto hides nothing: a seat is sent all of them) and, in every one,
    the seat's full ``view``: a client replaces its view with it. ``snapshot`` marks the first update a connection
    gets at its seat (and after a rejoin or ``resync``), as for Quatro; ``seq`` counts the seat's updates."""

    table: int
    seq: int
    snapshot: bool
    events: tuple[Event, ...]
    view: QuartoView
    game: str = NAME
    kind: ClassVar[str] = p.UPDATE


class Follower:
    """A Quarto seat across its updates: each carries the whole view, which replaces the last."""

    __slots__ = ("view",)

    def __init__(self, update: QuartoUpdate) -> None:
        self.view = update.view

    def advance(self, update: QuartoUpdate) -> QuartoView:
        self.view = update.view
        return self.view

    def agrees(self, snapshot: QuartoUpdate) -> bool:
        return True  # nothing is built from events: the view is the state


def _event_classes() -> tuple[type[Event], ...]:
    return tuple(
        obj
        for obj in globals().values()
        if isinstance(obj, type) and issubclass(obj, Event) and obj is not Event and obj.__module__ == __name__
    )


CONTRACT: GameContract[Action, Event, QuartoView, QuartoUpdate] = GameContract(
    name=NAME,
    title="Quarto",
    seats=(SEATS,),
    actions=PLAYER_ACTIONS,
    events=_event_classes(),
    view=QuartoView,
    update=QuartoUpdate,
    accepts=ACCEPTS,
    legal=legal,
    levels=LEVELS,
    default_level=DEFAULT_LEVEL,
    follow=Follower,
    whole_views=True,
    wire_names={"Phase": Phase, "Step": Step, "SeatState": SeatState, "QuartoView": QuartoView},
    view_parts=(QuartoView, SeatState),
    lenient=True,
)
