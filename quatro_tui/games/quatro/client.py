"""Quatro as this client plays it: a screen per phase of the table (h11-style: the phases and what shows them,
in one place), the seat's state kept by ``QuatroTable.apply``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.screen import Screen

from quatro_shared.games.quatro import contract as quatro
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro import seating
from quatro_shared.games.quatro.views import Phase, SeatView
from quatro_shared.levels import LADDER, PLAY_LEVEL
from quatro_shared.messages import Reply, RequestBody
from quatro_shared.tables import TablePhase

from quatro_tui import words as client_words
from quatro_tui.games.base import ClientGame, MarkRow
from quatro_tui.games.quatro import words
from quatro_tui.games.quatro.help import RULES, symbols_rows
from quatro_tui.games.quatro.lesson import LESSON
from quatro_tui.games.quatro.screens.reveal import MatchEndScreen, RevealScreen
from quatro_tui.games.quatro.screens.signing import SigningScreen
from quatro_tui.games.quatro.screens.table import TableScreen
from quatro_tui.games.quatro.table import QuatroTable
from quatro_tui.screens.room import RoomScreen
from quatro_tui.widgets.scoreboard import TEAM_STYLES

#: The screen of each phase of a table.
PHASE_SCREENS: dict[Phase, type[Screen[None]]] = {
    Phase.LOBBY: RoomScreen,
    Phase.SIGNING: SigningScreen,
    Phase.ROUND: TableScreen,
    Phase.BREAK: RevealScreen,
    Phase.OVER: MatchEndScreen,
}

#: What the phase's clock counts down to, by phase (the status line's countdown).
PHASE_CLOCKS: dict[Phase, str] = {
    Phase.SIGNING: "opens in",
    Phase.ROUND: "round",
    Phase.BREAK: "next in",
}


class QuatroClient(ClientGame[QuatroTable]):
    contract = quatro.CONTRACT
    table_type = QuatroTable
    summary = "the team card game"
    # The random baseline is for tests and simulations, not an opponent: a host seats one of the ladder.
    bot_levels = tuple(
        zip(
            LADDER,
            ("slow, for learning", "quicker, for learning", "reads the table: a good player", "the strongest there is"),
            strict=True,
        )
    )
    play_level = PLAY_LEVEL
    play_level_why = "a new player's pace"
    teams = True

    def team_of(self, seat: int, players: int) -> int:
        return seating.team_of(seat, players)  # R1: partners across

    help_rules = RULES
    lesson = LESSON
    ascii_stand_ins = words.ASCII_STAND_INS

    def take(self, game: QuatroTable, view: Any, events: Sequence[Any], received_at: float) -> bool:
        assert isinstance(view, SeatView)
        return game.apply(view, [ev for ev in events if isinstance(ev, e.Event)], received_at)

    def urgent(self, line: str) -> bool:
        return words.YOUR_SIGN in line  # the partner showed the team's sign: four of a kind to call on

    def recall(self, game: QuatroTable, events: Sequence[Any]) -> None:
        game.recall([ev for ev in events if isinstance(ev, e.Event)])

    def screen(self, game: QuatroTable) -> type[Screen[None]] | None:
        if game.view is not None:
            return PHASE_SCREENS[game.view.phase]
        # Before the first view: the room while the table waits; a match under way shows with its first update.
        return PHASE_SCREENS[Phase.LOBBY] if game.table_phase is TablePhase.LOBBY else None

    def watch_screen(self, game: QuatroTable) -> type[Screen[None]] | None:
        from quatro_tui.games.quatro.screens.watch import WatchScreen
        from quatro_tui.screens.watch import WaitingToWatch

        return WatchScreen if game.view is not None else WaitingToWatch

    def phase_clock(self, game: QuatroTable) -> tuple[str, float] | None:
        """The current phase's label and seconds left, counted down locally from the last view (R7, R18)."""
        view = game.view
        if view is None or view.phase not in PHASE_CLOCKS or view.phase_ms is None:
            return None
        return PHASE_CLOCKS[view.phase], game.left(view.phase_ms) or 0.0

    def progress(self, game: QuatroTable) -> str:
        return f"round {game.view.round}" if game.view is not None else ""

    def scores(self, game: QuatroTable, tells_target: bool) -> Text:
        """Team by team, one's own starred as well as coloured, then the target (R20)."""
        view = game.view
        text = Text()
        if view is None:
            return text
        for team, score in enumerate(view.scores):
            mine = team == view.team
            text.append(
                f"{client_words.team_letter(team)}{'*' if mine else ''}:{score}", style=f"bold {TEAM_STYLES[team]}"
            )
            text.append(" ")
        if tells_target:
            text.append(f"(to {view.target_score})", style="dim")
        return text

    def watch_outcome(self, game: QuatroTable) -> Text | None:
        from quatro_tui.games.quatro.screens.watch import match_over

        return match_over(game)

    def refusal(self, request: RequestBody, reply: Reply, ascii_only: bool) -> str:
        return words.refusal(request, reply, ascii_only)

    def in_match(self, game: QuatroTable) -> bool:
        if game.view is not None:
            return game.view.phase in (Phase.SIGNING, Phase.ROUND, Phase.BREAK)
        return game.table_phase in (TablePhase.PLAYING, TablePhase.BETWEEN)

    def help_marks(self, screen: Screen[Any], ascii_only: bool) -> tuple[str, list[MarkRow]]:
        return "What the marks mean", symbols_rows(screen, ascii_only)

    replay_jump = "next call"

    def replay_mark(self, events: Sequence[Any]) -> bool:
        """A call or a counter: the reveal that follows it."""
        return any(isinstance(ev, e.RoundEnded) and ev.outcome != "draw" for ev in events)

    def table_words(self, players: int) -> str:
        # The default game goes unnamed, as everywhere on the screens.
        return f"{players} seats"


CLIENT = QuatroClient()
