"""The rules of Quarto (Q1–Q7) as a pure state machine: one two-seat table, its games and its match.

Shaped like Quatro's ``quatro_server.games.quatro.engine.Table``, and as pure: it never reads a clock, never sleeps, never
touches a socket, and draws randomness only from the source it is given. Two doors, each with ``now``:

- ``table.act(seat, action, now)`` -> ``Outcome``: the events that happened (time-driven ones first) and,
  if refused, a ``Refusal`` with a stable reason and its words.
- ``table.advance(now)`` -> events: the move clock running out (when the timing profile sets one), the
  break between games ending.

``table.next_deadline()`` says when ``advance`` is next needed. What each phase and step accepts is the one
table ``quatro_shared.games.quarto.contract.ACCEPTS``. Quarto hides nothing: every event goes to both seats, and every update
carries the seat's ``view`` (``quatro_server.games.quarto.game.QuartoBatch``), the one way the table's state leaves it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from math import inf

from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quarto.contract import Phase, Reason, Refusal, Step
from quatro_shared.tables import Connect, Disconnect

from quatro_server.rules import Outcome
from quatro_server.timing import STANDARD, Timing, declare

#: Quarto's move clock (docs/quarto.md): seconds for each step of a turn, in every timing profile; 0 (the standard
#: value) is no clock.
MOVE_CLOCK = declare("quarto_move_clock", 0.0, optional=True)


@dataclass(slots=True)
class _Seat:
    bot: bool
    connected: bool = True
    ready: bool = False


@dataclass(slots=True)
class _Game:
    """One game's state: the board (square -> piece or None), the pool, the piece in hand, whose turn and step."""

    number: int
    starter: int
    board: list[int | None] = field(default_factory=lambda: [None] * q.SQUARES)
    pool: set[int] = field(default_factory=lambda: set(range(q.PIECES)))
    in_hand: int | None = None
    turn: int = 0
    step: Step = Step.GIVE
    moves: list[q.Turn] = field(default_factory=list)
    pending_square: int | None = None  # the square of the turn under way, until its give completes it


class QuartoTable:
    """One Quarto table: two seats, a match of ``games`` games (Q6), and the game under way.

    ``bots`` are the seats played by bots (always connected, always ready). ``rng`` draws the first starter
    (Q2) and, when the move clock runs out, the move played for the seat; by default the operating system's.
    """

    players = q.SEATS

    def __init__(
        self,
        *,
        timing: Timing = STANDARD,
        rng: random.Random | None = None,
        bots: frozenset[int] | set[int] | tuple[int, ...] = (),
        games: int = q.DEFAULT_GAMES,
    ) -> None:
        if isinstance(games, bool) or not isinstance(games, int) or not 1 <= games <= q.MAX_GAMES:
            raise ValueError(f"a Quarto match has 1 to {q.MAX_GAMES} games, not {games!r}")
        self.timing = timing
        self.rng = rng if rng is not None else random.SystemRandom()
        self.games = games
        self._seats = [_Seat(bot=i in bots, ready=i in bots) for i in range(q.SEATS)]
        self.phase = Phase.LOBBY
        self.first: int | None = None  # the starter of game 1, drawn by lot (Q2)
        self.game: _Game | None = None
        self.scores = [0, 0]
        self.draws = 0
        self.winner: int | None = None  # of the last game
        self.line: tuple[int, ...] | None = None
        self.shared: tuple[str, ...] = ()
        self.winners: tuple[int, ...] = ()
        self.step_ends_at = inf  # the move clock, when on
        self.break_ends_at = inf
        self.now = -inf

    # --- reading -------------------------------------------------------------------------------

    def is_bot(self, seat: int) -> bool:
        return self._seats[seat].bot

    def is_connected(self, seat: int) -> bool:
        return self._seats[seat].connected

    @property
    def clock(self) -> float:
        """Seconds per step of a turn; 0 means no clock (the default)."""
        return float(self.timing.of(MOVE_CLOCK))

    def accepts(self) -> frozenset[type[q.Action]]:
        """What the current phase and step accept (``quatro_shared.games.quarto.contract.ACCEPTS``)."""
        step = self.game.step if self.phase is Phase.PLAYING and self.game is not None else None
        return q.ACCEPTS[(self.phase, step)]

    # --- the two doors -------------------------------------------------------------------------

    def start(self, now: float) -> list[q.Event]:
        """Start the match: the first starter is drawn by lot (Q2) and the first game begins."""
        self.now = max(self.now, now)
        if self.phase is not Phase.LOBBY:
            return []
        self.first = self.rng.randrange(q.SEATS)
        out: list[q.Event] = [q.MatchStarted(self.games, self.first)]
        self._begin_game(1, self.first, out)
        return out

    def act(self, seat: int, action: object, now: float) -> Outcome[q.Event, Refusal]:
        """Apply ``action`` from ``seat`` at ``now``. Never raises: a bad request is refused."""
        out = self.advance(now)
        refusal = self._dispatch(seat, action, out)
        return Outcome(out, refusal)

    def advance(self, now: float) -> list[q.Event]:
        """Let time run to ``now``: the move clock and the break between games, earliest first."""
        out: list[q.Event] = []
        if not now >= self.now or now == inf:
            return out
        while True:
            at, fire = self._next_due()
            if at > now:
                break
            self.now = at
            fire(out)
        self.now = now
        return out

    def next_deadline(self) -> float | None:
        at, _ = self._next_due()
        return None if at == inf else at

    def rebase(self, delta: float) -> None:
        """Move the table onto another clock, ``delta`` seconds ahead of the old one: the move clock and the break
        keep the time they had left. A restarted server resumes a journalled table this way."""
        self.now += delta
        self.step_ends_at += delta
        self.break_ends_at += delta

    # --- time ----------------------------------------------------------------------------------

    def _next_due(self) -> tuple[float, Callable[[list[q.Event]], None]]:
        if self.phase is Phase.PLAYING and self.step_ends_at < inf:
            return self.step_ends_at, self._clock_ran_out
        if self.phase is Phase.BETWEEN and self.break_ends_at < inf:
            return self.break_ends_at, self._next_game
        return inf, _nothing

    def _clock_ran_out(self, out: list[q.Event]) -> None:
        """The seat to act let the move clock run out: its step is played for it, by lot."""
        game = self.game
        assert game is not None
        if game.step is Step.PLACE:
            square = self.rng.choice([s for s, p in enumerate(game.board) if p is None])
            self._place(game.turn, square, out, by_lot=True)
        else:
            self._give(game.turn, self.rng.choice(sorted(game.pool)), out, by_lot=True)

    def _next_game(self, out: list[q.Event]) -> None:
        game = self.game
        assert game is not None
        self._begin_game(game.number + 1, 1 - game.starter, out)  # Q6: the start alternates

    # --- actions -------------------------------------------------------------------------------

    def _dispatch(self, seat: object, action: object, out: list[q.Event]) -> Refusal | None:
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < q.SEATS:
            return Refusal.of(Reason.BAD_SEAT)
        if isinstance(action, Connect):
            return self._connect(seat, out)
        if isinstance(action, Disconnect):
            return self._disconnect(seat, out)
        if type(action) not in q.PLAYER_ACTIONS:
            return Refusal.of(Reason.UNKNOWN_ACTION)
        if not self._seats[seat].connected:
            return Refusal.of(Reason.DISCONNECTED)
        if self.phase is Phase.LOBBY:
            return Refusal.of(Reason.NOT_STARTED)
        if self.phase is Phase.OVER:
            return Refusal.of(Reason.MATCH_OVER)
        if isinstance(action, q.Place) and not q.is_square(action.square):
            return Refusal.of(Reason.BAD_ARGUMENT)
        if isinstance(action, q.Give) and not q.is_piece(action.piece):
            return Refusal.of(Reason.BAD_ARGUMENT)
        if type(action) not in self.accepts():
            if self.phase is not Phase.PLAYING:
                return Refusal.of(Reason.WRONG_PHASE)
            if isinstance(action, q.NextGame):
                return Refusal.of(Reason.WRONG_PHASE)
            game = self.game
            assert game is not None
            if seat != game.turn:
                return Refusal.of(Reason.NOT_YOUR_TURN)
            return Refusal.of(Reason.WRONG_STEP)  # Q3: place, then give
        if isinstance(action, q.NextGame):
            return self._ready(seat, out)
        game = self.game
        assert game is not None
        if seat != game.turn:
            return Refusal.of(Reason.NOT_YOUR_TURN)  # Q3: a player never places a piece they chose
        if isinstance(action, q.Place):
            if game.board[action.square] is not None:
                return Refusal.of(Reason.SQUARE_TAKEN)
            self._place(seat, action.square, out)
            return None
        assert isinstance(action, q.Give)
        if action.piece not in game.pool:
            return Refusal.of(Reason.PIECE_UNAVAILABLE)  # Q1: each piece is used once
        self._give(seat, action.piece, out)
        return None

    def _place(self, seat: int, square: int, out: list[q.Event], by_lot: bool = False) -> None:
        game = self.game
        assert game is not None and game.in_hand is not None
        piece = game.in_hand
        game.board[square] = piece
        game.in_hand = None
        out.append(q.PiecePlaced(seat, square, piece, q.format_square(square), by_lot))
        line = q.winning_line(game.board, square)
        if line is not None:  # Q4: the placer wins at once
            game.moves.append(q.Turn(square, None))
            self._end_game(seat, line, out)
        elif not game.pool:  # Q5: the board is full, no line
            game.moves.append(q.Turn(square, None))
            self._end_game(None, None, out)
        else:
            game.pending_square = square
            game.step = Step.GIVE  # Q3: then choose a piece for the opponent
            self._restart_clock()

    def _give(self, seat: int, piece: int, out: list[q.Event], by_lot: bool = False) -> None:
        game = self.game
        assert game is not None
        game.pool.discard(piece)
        game.in_hand = piece
        turn = q.Turn(game.pending_square, piece)
        game.moves.append(turn)
        game.pending_square = None
        out.append(q.PieceGiven(seat, piece, q.format_turn(turn), by_lot))
        game.turn = 1 - seat
        game.step = Step.PLACE
        self._restart_clock()

    def _ready(self, seat: int, out: list[q.Event]) -> Refusal | None:
        s = self._seats[seat]
        if s.ready:
            return Refusal.of(Reason.ALREADY_READY)
        s.ready = True
        out.append(q.PlayerReady(seat))
        if all(x.ready for x in self._seats if x.connected):
            self._next_game(out)
        return None

    def _connect(self, seat: int, out: list[q.Event]) -> Refusal | None:
        s = self._seats[seat]
        if not s.connected:
            s.connected = True
            out.append(q.SeatConnected(seat))
        return None

    def _disconnect(self, seat: int, out: list[q.Event]) -> Refusal | None:
        s = self._seats[seat]
        if s.connected and not s.bot:
            s.connected = False  # the seat stays; nobody plays in its place (the move clock, if on, still runs)
            out.append(q.SeatDisconnected(seat))
            if self.phase is Phase.BETWEEN and all(x.ready for x in self._seats if x.connected):
                self._next_game(out)
        return None

    # --- games ---------------------------------------------------------------------------------

    def _begin_game(self, number: int, starter: int, out: list[q.Event]) -> None:
        self.game = _Game(number=number, starter=starter, turn=starter, step=Step.GIVE)  # Q2: the starter gives
        self.phase = Phase.PLAYING
        self.winner, self.line, self.shared = None, None, ()
        self.break_ends_at = inf
        for s in self._seats:
            s.ready = s.bot
        out.append(q.GameStarted(number, starter))
        self._restart_clock()

    def _restart_clock(self) -> None:
        self.step_ends_at = self.now + self.clock if self.clock > 0 else inf

    def _end_game(self, winner: int | None, line: tuple[int, ...] | None, out: list[q.Event]) -> None:
        game = self.game
        assert game is not None
        self.step_ends_at = inf
        self.winner, self.line = winner, line
        self.shared = q.shared_attribute_names([game.board[s] for s in line]) if line else ()  # type: ignore[misc]
        if winner is None:
            self.draws += 1
        else:
            self.scores[winner] += 1
        out.append(
            q.GameEnded(
                game.number, winner, line, self.shared, (self.scores[0], self.scores[1]), self.draws, self.moves_text()
            )
        )
        if game.number >= self.games:  # Q6: the match's games are all played
            self.phase = Phase.OVER
            top = max(self.scores)
            self.winners = tuple(i for i in range(q.SEATS) if self.scores[i] == top)
            out.append(q.MatchOver(self.winners, (self.scores[0], self.scores[1]), self.draws))
            return
        self.phase = Phase.BETWEEN
        self.break_ends_at = self.now + self.timing.break_length
        if all(s.ready for s in self._seats if s.connected):  # bots alone: no one to wait for
            self._next_game(out)

    def moves_text(self) -> tuple[str, ...]:
        """The current (or last) game's turns in Q7 notation, with a turn under way shown by its square alone."""
        game = self.game
        if game is None:
            return ()
        text = [q.format_turn(t) for t in game.moves]
        if game.pending_square is not None:
            text.append(q.format_square(game.pending_square))
        return tuple(text)


def _nothing(out: list[q.Event]) -> None:
    return None


def _ms(seconds: float) -> int:
    return int(round(seconds * 1000)) if seconds > 0 else 0


def view(table: QuartoTable, seat: int, now: float) -> q.QuartoView:
    """Seat ``seat``'s view at ``now``: the whole table, since Quarto hides nothing (see ``quatro_shared.games.quarto.contract``)."""
    now = max(now, table.now)
    game = table.game
    playing = table.phase is Phase.PLAYING and game is not None
    board = tuple(game.board) if game is not None else (None,) * q.SQUARES
    return q.QuartoView(
        seat=seat,
        phase=table.phase,
        turn=game.turn if playing and game is not None else None,
        step=game.step if playing and game is not None else None,
        board=board,
        pool=tuple(sorted(game.pool)) if game is not None else tuple(range(q.PIECES)),
        in_hand=game.in_hand if game is not None else None,
        game=game.number if game is not None else 0,
        games=table.games,
        starter=game.starter if game is not None else None,
        scores=(table.scores[0], table.scores[1]),
        draws=table.draws,
        winner=table.winner,
        line=table.line,
        shared=table.shared,
        moves=table.moves_text(),
        seats=tuple(q.SeatState(i, s.bot, s.connected, s.ready) for i, s in enumerate(table._seats)),
        clock_ms=_ms(table.step_ends_at - now) if playing and table.step_ends_at < inf else None,
        phase_ms=_ms(table.break_ends_at - now) if table.phase is Phase.BETWEEN and table.break_ends_at < inf else None,
        winners=table.winners,
    )
