"""A real Quarto table in the test's process for the Quarto screen: the pure engine, a bot in the other seat.

The screen's ``act`` callback goes to ``LocalQuarto.act``, which applies the action to the engine for seat 0
(noting any refusal: the screen must never cause one), lets the bot in seat 1 answer, and shows the screen the new
view with the events, one loop turn later, as a connection would. Time is virtual: it moves a second per action.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Any

from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quarto.contract import Phase, QuartoView

from quatro_server.games.quarto.bots import make_quarto_bot
from quatro_server.games.quarto.engine import QuartoTable, view
from quatro_tui.app import QuatroApp
from quatro_tui.games.quarto.screen import QuartoScreen
from quatro_tui.games.quarto.widgets import CELL, POOL_COLUMNS, POOL_GAP, POOL_ORDER, QuartoBoard

#: The frozen clock of snapshots: every view arrived now, and time never moves.
NOW = 1000.0
ME, BOT = 0, 1
NAMES = ("you", "normal-bot")


@dataclass
class LocalQuarto:
    """Seat 0 plays through a screen; seat 1 is a bot of ``level``. ``games`` games, starter drawn from ``seed``."""

    seed: int = 1
    level: str = "normal"
    games: int = 2
    table: QuartoTable = field(init=False)
    now: float = 0.0
    screen: QuartoScreen | None = None
    #: Every action the screen handed over, and every refusal the engine gave it (there must be none).
    sent: list[q.Action] = field(default_factory=list)
    refusals: list[tuple[q.Action, q.Refusal]] = field(default_factory=list)
    events: list[q.Event] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.table = QuartoTable(rng=random.Random(self.seed), bots={BOT}, games=self.games)
        self.bot = make_quarto_bot(self.level, random.Random(self.seed + 1))

    def view(self) -> QuartoView:
        return view(self.table, ME, self.now)

    def start(self) -> list[q.Event]:
        out = self.table.start(self.now)
        out += self.bot_moves()
        self.events += out
        return out

    def bot_moves(self) -> list[q.Event]:
        """The bot plays until it has nothing to do (its turn done, or the game over)."""
        out: list[q.Event] = []
        while True:
            actions = self.bot.decide(view(self.table, BOT, self.now), self.now)
            if not actions:
                return out
            for action in actions:
                self.now += 1.0
                outcome = self.table.act(BOT, action, self.now)
                assert outcome.ok, (action, outcome.refusal)
                out += outcome.events

    def act(self, action: q.Action) -> None:
        """The screen's callback: seat 0 acts; the bot answers; the screen sees the result a moment later."""
        self.sent.append(action)
        self.now += 1.0
        outcome = self.table.act(ME, action, self.now)
        if not outcome.ok:
            assert outcome.refusal is not None
            self.refusals.append((action, outcome.refusal))
        out = list(outcome.events)
        if outcome.ok:
            out += self.bot_moves()
        self.events += out
        screen = self.screen
        assert screen is not None
        if outcome.ok:
            screen.app.call_later(screen.show, self.view(), out)
        else:
            screen.app.call_later(screen.refused, outcome.refusal.message)  # type: ignore[union-attr]

    def play_alone(self, turns: int, rng: random.Random) -> None:
        """Seat 0 plays ``turns`` actions chosen by ``rng`` among the legal ones, without a screen (for pictures)."""
        for _ in range(turns):
            legal = q.legal(self.view())
            if not legal:
                return
            self.now += 1.0
            outcome = self.table.act(ME, rng.choice(legal), self.now)
            assert outcome.ok
            self.events += outcome.events + self.bot_moves()

    def screen_for(self, **kwargs: Any) -> QuartoScreen:
        self.screen = QuartoScreen(self.act, names=NAMES, **kwargs)
        return self.screen


async def open_quarto(app: QuatroApp, local: LocalQuarto, *, start: bool = True, **kwargs: Any) -> QuartoScreen:
    """Push a Quarto screen for ``local`` on ``app`` (no guard: it is the run's first screen) and show the table."""
    screen = local.screen_for(**kwargs)
    screen.guard = 0.0
    await app.push_screen(screen)
    events = local.start() if start else []
    screen.show(local.view(), events, received_at=kwargs["clock"]() if "clock" in kwargs else None)
    return screen


def square_offset(square: int) -> tuple[int, int]:
    """Where to click on the board for ``square``: the middle line of its cell."""
    col, shown = square % q.SIZE, q.SIZE - 1 - square // q.SIZE
    return QuartoBoard.LEFT + col * (CELL + 1) + CELL // 2, QuartoBoard.TOP + shown * 4 + 1


def piece_offset(piece: int) -> tuple[int, int]:
    """Where to click in the pool for ``piece``: the middle line of its slot (under the title)."""
    index = POOL_ORDER.index(piece)
    return (index % POOL_COLUMNS) * (CELL + POOL_GAP) + CELL // 2, 1 + (index // POOL_COLUMNS) * 3 + 1


def won_position(level: str = "normal") -> LocalQuarto:
    """A table whose first game just ended with a winner (the first seed, from 1, where random play loses one)."""
    for seed in range(1, 200):
        local = LocalQuarto(seed=seed, level=level, games=2)
        local.start()
        rng = random.Random(seed)
        while local.table.phase is Phase.PLAYING:
            local.play_alone(1, rng)
        if local.table.phase is Phase.BETWEEN and local.table.winner is not None:
            return local
    raise AssertionError("no seed up to 200 ends the first game with a win")


def _placing() -> tuple[LocalQuarto, QuartoView]:
    """Mid-game, this seat to place, the move clock on (25.3 s left)."""
    local = LocalQuarto(seed=3, games=4)
    local.start()
    local.play_alone(7, random.Random(11))
    v = local.view()
    assert v.step is q.Step.PLACE and v.turn == ME
    return local, replace(v, clock_ms=25_300)


def _giving() -> tuple[LocalQuarto, QuartoView]:
    """Mid-game, this seat to give, half a piece typed (see ``PICTURE_KEYS``)."""
    local = LocalQuarto(seed=3, games=4)
    local.start()
    local.play_alone(8, random.Random(11))
    v = local.view()
    assert v.step is q.Step.GIVE and v.turn == ME
    return local, v


def _won() -> tuple[LocalQuarto, QuartoView]:
    local = won_position()
    return local, replace(local.view(), phase_ms=24_000)


def _over() -> tuple[LocalQuarto, QuartoView]:
    """The match over: one game, played to its end."""
    for seed in range(1, 200):
        local = LocalQuarto(seed=seed, games=1)
        local.start()
        local.play_alone(40, random.Random(seed))
        if local.table.winner is not None:
            return local, local.view()
    raise AssertionError("no seed up to 200 ends a one-game match with a win")


#: The positions the snapshots and the fit test draw, each a table and the view shown.
PICTURES = {"placing": _placing, "giving": _giving, "won": _won, "over": _over}
#: Keys pressed on a picture before it is taken.
PICTURE_KEYS = {"giving": ["t", "r"], "placing": ["left"]}


async def show_picture(app: QuatroApp, name: str) -> QuartoScreen:
    """Push the Quarto screen showing picture ``name`` with the frozen clock, and press its keys."""
    local, shown = PICTURES[name]()
    screen = local.screen_for(clock=lambda: NOW)
    screen.guard = 0.0
    await app.push_screen(screen)
    screen.show(shown, local.events[-4:], received_at=NOW)
    return screen
