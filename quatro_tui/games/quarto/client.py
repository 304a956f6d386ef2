"""Quarto as this client plays it: the waiting room until the first view, then Quarto's own screen, which draws
the whole view every update carries and hands its moves to the app."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from textual.screen import Screen

from quatro_shared import messages as m
from quatro_shared.games.quarto import contract as q
from quatro_shared.tables import TablePhase

from quatro_tui import words as client_words
from quatro_tui.games.base import ClientGame, MarkRow
from quatro_tui.games.quarto import words
from quatro_tui.games.quarto.lesson import LESSON
from quatro_tui.games.quarto.screen import (
    MARKS_ASCII,
    MARKS_TITLE,
    MARKS_UNICODE,
    RULES,
    QuartoScreen,
    QuartoWatchScreen,
)
from quatro_tui.games.quarto.table import QuartoTable
from quatro_tui.screens.room import RoomScreen

if TYPE_CHECKING:
    from quatro_tui.app import QuatroApp


class QuartoClient(ClientGame[QuartoTable]):
    contract = q.CONTRACT
    table_type = QuartoTable
    summary = "the board game for two, against a bot"
    bot_levels = tuple(
        zip(
            q.LEVELS, ("any legal move", "takes a win, never hands one over", "plays exactly near the end"), strict=True
        )
    )
    play_level = q.DEFAULT_LEVEL
    help_rules = RULES
    lesson = LESSON

    def take(self, game: QuartoTable, view: Any, events: Sequence[Any], received_at: float) -> bool:
        """Every update carries the whole view: it replaces the last one; its events go to the feed."""
        assert isinstance(view, q.QuartoView)
        game.took(view, received_at)
        for ev in events:
            line = words.event(ev, game.name, view.seat) if isinstance(ev, q.Event) else None
            if line:
                game.say(line)
        return False

    def screen(self, game: QuartoTable) -> type[Screen[None]] | None:
        if game.view is not None:
            return QuartoScreen
        # Before the first view: the room while the table waits; a match under way shows with its first update.
        return RoomScreen if game.table_phase is TablePhase.LOBBY else None

    def watch_screen(self, game: QuartoTable) -> type[Screen[None]] | None:
        from quatro_tui.screens.watch import WaitingToWatch

        return QuartoWatchScreen if game.view is not None else WaitingToWatch

    def in_match(self, game: QuartoTable) -> bool:
        view = game.view
        return isinstance(view, q.QuartoView) and view.phase in (q.Phase.PLAYING, q.Phase.BETWEEN)

    def help_marks(self, screen: Screen[Any], ascii_only: bool) -> tuple[str, list[MarkRow]]:
        return MARKS_TITLE, list(MARKS_ASCII if ascii_only else MARKS_UNICODE)

    replay_jump = "next move"

    def replay_mark(self, events: Sequence[Any]) -> bool:
        return any(isinstance(ev, q.PieceGiven | q.PiecePlaced) for ev in events)

    # --- its screen -----------------------------------------------------------------------------------

    def make_screen(self, app: QuatroApp, wanted: type[Screen[None]]) -> Screen[None]:
        if wanted not in (QuartoScreen, QuartoWatchScreen):
            return wanted()
        game = app.game
        kind = QuartoWatchScreen if wanted is QuartoWatchScreen else QuartoScreen
        screen = kind(
            lambda action: self.act(app, action),
            names=self.names(app),
            ascii_only=game.ascii_only,
            clock=game.clock,
            replay=game.replay,
        )
        screen.host = game.is_host()
        if isinstance(game.view, q.QuartoView):
            screen.show(game.view, [], game.received_at)
        return screen

    def updated(self, app: QuatroApp, view: Any, events: Sequence[Any], received_at: float) -> None:
        screen = self.shown(app)
        if screen is not None and isinstance(view, q.QuartoView):
            screen.show(view, [ev for ev in events if isinstance(ev, q.Event)], received_at)

    def changed(self, app: QuatroApp) -> None:
        screen = self.shown(app)
        if screen is not None:
            screen.set_names(self.names(app), host=app.game.is_host())
            screen.set_link(app.game.link)

    def chat(self, app: QuatroApp, line: str) -> None:
        screen = self.shown(app)
        if screen is not None:
            screen.say(line)

    @staticmethod
    def shown(app: QuatroApp) -> QuartoScreen | None:
        base = app.base_screen()
        return base if isinstance(base, QuartoScreen) else None

    @staticmethod
    def names(app: QuatroApp) -> tuple[str, str]:
        return app.game.raw_name(0), app.game.raw_name(1)

    def act(self, app: QuatroApp, action: q.Action) -> None:
        """The screen's choice, to the server; a refusal (the screen offers only legal moves) is told there."""
        app.run_worker(self._request(app, action), group="requests", exit_on_error=False)

    async def _request(self, app: QuatroApp, action: q.Action) -> None:
        reply = await app.request(action)
        screen = self.shown(app)
        if screen is not None and not isinstance(reply, m.Ok):
            screen.refused(client_words.why_not(reply))


CLIENT = QuartoClient()
