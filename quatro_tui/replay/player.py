"""The replay player: a seat's replay on the very screens of a live table, stepped by keys on a virtual clock.

The player holds a ``Tape`` (``quatro_tui.replay.tape``) and a position in it. The app's table state (``app.game``)
is the seat's state after the frames up to the position, kept by the table's game (``ClientGame.take``) exactly as
live updates are, and the app's usual routing shows the screen it calls for: the same table screen, signing,
reveal or board. Nothing is sent: there is no connection to the table.

Time is the replay's own: ``clock`` is the match time at the position (the frames' ``times``), moved on by the
player's timer while it plays, at ``SPEEDS`` times the match's pace; countdowns on the screens count on that clock.
Stepping back rebuilds the state from the first frame (a frame only moves the state forward).

The notes the replay brought (what the whole record says, once it is no secret: a round's truth after its reveal)
show in a panel beside the table from the frame they belong to.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.text import Text
from textual.containers import Vertical
from textual.widgets import Footer, Static

from quatro_tui import words
from quatro_tui.games import client_game
from quatro_tui.replay.tape import Tape
from quatro_tui.table import AnyTable

if TYPE_CHECKING:
    from quatro_tui.app import QuatroApp

#: The speeds the player cycles through, times the match's own pace.
SPEEDS = (1, 2, 4, 8)
#: Columns of the notes' panel (less on a narrower screen).
NOTES_WIDTH = 40
#: Lines of the notes' panel at most, its border included.
NOTES_HEIGHT = 19
#: Seconds of real time between two moves of the player's clock while it plays.
TICK = 0.1


def clock_text(ms: int) -> str:
    minutes, rest = divmod(max(ms, 0) // 100, 600)
    return f"{minutes:02d}:{rest / 10:04.1f}"


class ReplayBar(Vertical):
    """Where the replay stands and its keys (bottom of every screen while a replay plays)."""

    DEFAULT_CLASSES = "replay-bar"

    def __init__(self) -> None:
        self.where = Static("", id="replay-status")
        self.keys = Static("", id="replay-keys")
        super().__init__(self.where, self.keys)


class ReplayNotes(Static):
    """What the whole record says beside the table, once the seat's frames have reached it."""

    DEFAULT_CLASSES = "replay-notes"


class ReplayPlayer:
    """One replay, played on ``app``."""

    def __init__(self, tape: Tape, *, autoplay: bool = True, on_close: Callable[[], None] | None = None) -> None:
        self.tape = tape
        self.game_client = client_game(tape.game)
        #: The frame shown (-1: none yet).
        self.index = -1
        #: The match time the screens count on, in seconds.
        self.time = 0.0
        self.playing = autoplay
        self.speed = SPEEDS[0]
        self.app: QuatroApp | None = None
        #: Called when the player is closed (None: the app exits).
        self.on_close = on_close
        self._saved_game: AnyTable | None = None

    # --- on the app ---------------------------------------------------------------------------------

    def start(self, app: QuatroApp) -> None:
        """Take over ``app``'s table state and screens for the replay; its own state comes back on ``close``."""
        self.app = app
        self._saved_game = app.game
        app.set_class(True, "-replay")
        self._rebuild(0 if self.tape.steps else -1)
        app.set_interval(TICK, self._tick, name="replay")

    def close(self) -> None:
        app = self.app
        if app is None:
            return
        self.app = None
        app.set_class(False, "-replay")
        if self.on_close is not None:
            assert self._saved_game is not None
            app.game = self._saved_game
            self.on_close()
        else:
            app.exit()

    def clock(self) -> float:
        return self.time

    def _fresh_game(self) -> AnyTable:
        assert self.app is not None
        old = self.app.game
        game: AnyTable = client_game(self.tape.game).table_type(
            ascii_only=old.ascii_only, clock=self.clock, rng=old.rng, kind=self.tape.game
        )
        game.replay = True
        game.my_seat = self.tape.seat
        game.seat(self.tape.seating())
        return game

    def _take(self, index: int) -> None:
        assert self.app is not None
        step = self.tape.steps[index]
        # As a live update: the table is kept as the step's game keeps one (the app may have begun a table of its
        # own meanwhile, the lobby's, which is the default game's).
        client_game(step.game).take(self.app.table_of(step.game), step.view, step.events, step.at_ms / 1000)

    def _rebuild(self, index: int) -> None:
        """The state after frames 0 to ``index``, built afresh, and a fresh screen for it."""
        app = self.app
        assert app is not None
        app.game = self._fresh_game()
        for i in range(index + 1):
            self._take(i)
        self.index = index
        if index >= 0:
            self.time = self.tape.steps[index].at_ms / 1000
        wanted = app.wanted_screen()
        if wanted is not None:
            from textual.screen import ModalScreen

            while isinstance(app.screen, ModalScreen):
                app.pop_screen()
            screen = app.make_screen(wanted)
            if app.base_screen() is None:
                app.push_screen(screen)
            else:
                app.switch_screen(screen)
        self._shown()

    def _forward(self) -> None:
        """The next frame, as a live update arrives."""
        app = self.app
        assert app is not None
        self.index += 1
        step = self.tape.steps[self.index]
        self.time = max(self.time, step.at_ms / 1000)
        self._take(self.index)
        app.route()
        client_game(step.game).updated(app, step.view, step.events, step.at_ms / 1000)
        self._shown()

    def _shown(self) -> None:
        app = self.app
        assert app is not None
        app.game_changed()
        app.call_after_refresh(self.dress)

    def dress(self) -> None:
        """The bar and the notes on the screen that shows (every screen the routing brings gets them)."""
        app = self.app
        if app is None:
            return
        screen = app.screen
        bars = screen.query(ReplayBar)
        bar = bars.first() if bars else ReplayBar()
        ascii_only = app.game.ascii_only
        # Plain text, never markup: names and notes are players' and the server's words.
        bar.where.update(Text(self.text(self.status(), ascii_only)))
        bar.keys.update(Text(self.text(self.keys(), ascii_only)))
        panels = screen.query(ReplayNotes)
        panel = panels.first() if panels else ReplayNotes()
        lines = self.note()
        panel.update(Text(self.text("\n".join(lines), ascii_only)))
        panel.display = bool(lines)
        # Over the right of the screen, down on its feed, above the replay's bar: the reveal above stays in view.
        width = min(NOTES_WIDTH, max(screen.size.width - 2, 10))
        inside = max(width - 4, 1)  # the border and the padding
        height = min(sum(max(1, -(-len(line) // inside)) for line in lines) + 2, NOTES_HEIGHT)
        panel.styles.width = width
        panel.styles.offset = (max(screen.size.width - width - 1, 0), max(screen.size.height - height - 3, 1))
        if not bars:
            footers = screen.query(Footer)
            screen.mount(bar, before=footers.first() if footers else None)
        if not panels:
            screen.mount(panel)

    # --- what shows -----------------------------------------------------------------------------------

    @staticmethod
    def text(line: str, ascii_only: bool) -> str:
        return words.plain(line.replace(" · ", " | ") if ascii_only else line, ascii_only)

    def note(self) -> tuple[str, ...]:
        return self.tape.note_at(self.index) if self.index >= 0 else ()

    def status(self) -> str:
        tape = self.tape
        end = tape.steps[-1].at_ms if tape.steps else 0
        state = "playing" if self.playing else "paused"
        if self.index >= len(tape.steps) - 1:
            state = "the end"
        # What changes first: a narrow terminal cuts the end of the line.
        return (
            f"{state} x{self.speed} · {clock_text(round(self.time * 1000))} / {clock_text(end)} · "
            f"frame {self.index + 1}/{len(tape.steps)} · replay of table {tape.table} as {tape.seat_words(tape.seat)}"
        )

    def keys(self) -> str:
        jump = self.game_client.replay_jump
        return f"space play/pause · ←/→ step · n {jump} · s speed · home/end · q close"

    # --- the keys -----------------------------------------------------------------------------------

    def step(self, by: int) -> None:
        """One frame on (``by`` 1) or back (-1); playing stops."""
        self.playing = False
        target = max(0, min(self.index + by, len(self.tape.steps) - 1))
        if target == self.index + 1:
            self._forward()
        elif target != self.index:
            self._rebuild(target)
        else:
            self._shown()

    def toggle(self) -> None:
        if self.index >= len(self.tape.steps) - 1:
            self._rebuild(0)  # at the end: play again from the start
        self.playing = not self.playing
        self._shown()

    def faster(self) -> None:
        self.speed = SPEEDS[(SPEEDS.index(self.speed) + 1) % len(SPEEDS)]
        self._shown()

    def jump(self) -> None:
        """To the next frame the game marks (a call, a move); playing stops there."""
        for i in range(self.index + 1, len(self.tape.steps)):
            if self.game_client.replay_mark(self.tape.steps[i].events):
                self.goto(i)
                return
        self.goto(len(self.tape.steps) - 1)

    def goto(self, index: int) -> None:
        """To frame ``index``; playing stops."""
        self.playing = False
        index = max(0, min(index, len(self.tape.steps) - 1))
        if index == self.index + 1:
            self._forward()
        elif index != self.index:
            if index > self.index:
                while self.index < index - 1:
                    self.index += 1
                    self._take(self.index)
                self._forward()
            else:
                self._rebuild(index)
        else:
            self._shown()

    # --- time -----------------------------------------------------------------------------------------

    def _tick(self) -> None:
        if self.playing and self.app is not None:
            self.advance(TICK * self.speed)

    def advance(self, seconds: float) -> None:
        """Match time passes (the player's timer, or a test): every frame due by then is shown, in order."""
        if self.app is None or not self.tape.steps:
            return
        self.time += seconds
        steps = self.tape.steps
        moved = False
        while self.index + 1 < len(steps) and steps[self.index + 1].at_ms / 1000 <= self.time:
            self._forward()
            moved = True
        if self.index >= len(steps) - 1:
            self.time = min(self.time, steps[-1].at_ms / 1000)
            self.playing = False
        if not moved:
            self._shown()
