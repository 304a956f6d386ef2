"""ASCII mode (``--ascii``, or a terminal whose locale is not UTF-8): every screen is plain ASCII.

Not only cards and signs: borders (no box drawing), the footer's and the help's key names (no arrows or
return symbol), punctuation, scrollbars, the lobby's widgets, and names players chose with letters the
terminal cannot draw. Every screen and dialog is drawn here, no server, and read back cell by cell.
"""

from __future__ import annotations

import pytest

from quatro_shared.games.quatro.views import Phase

from helpers.snapshot_games import over_game, renamed, reveal_game, room_game, round_game, signing_game, tables
from helpers.tui import run, until
from quatro_tui import words
from quatro_tui.app import QuatroApp
from quatro_tui.games.quatro.client import PHASE_SCREENS
from quatro_tui.games.quatro.screens.dialogs import ConfirmCall, CounterTeam, EmojiPicker
from quatro_tui.screens.help import HelpScreen
from quatro_tui.screens.lobby import LobbyScreen

pytestmark = pytest.mark.timeout(60)

GAMES = {
    "room": (room_game, Phase.LOBBY),
    "signing": (signing_game, Phase.SIGNING),
    "table": (lambda players: round_game(players, vote=True), Phase.ROUND),
    "reveal": (reveal_game, Phase.BREAK),
    "over": (over_game, Phase.OVER),
}
#: Names with letters an ASCII terminal cannot draw.
NAMES = {1: "Zoë 🦊", 2: "José", 3: "Ωmega"}


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def assert_ascii(app, what: str) -> str:
    text = screen_text(app)
    odd = sorted({c for c in text if not c.isascii()})
    assert not odd, f"{what}: not ASCII: {odd}\n{text}"
    return text


def test_plain_spells_out_what_ascii_cannot_draw():
    assert words.plain("Q♦ — 10♥ … 🦊 fox", True) == "QD - 10H ... fox fox"
    assert words.plain("Zoë José", True) == "Zoe Jose"
    assert words.plain("Ωmega", True) == "?mega"
    assert words.plain("Q♦ — Zoë", False) == "Q♦ — Zoë"


@pytest.mark.parametrize("players", [4, 6])
@pytest.mark.parametrize("screen", GAMES)
def test_every_screen_is_ascii(screen, players):
    async def body():
        game = GAMES[screen][0](players)
        game.seating = renamed(game.seating, NAMES)
        app = QuatroApp(game=game, ascii_only=True)
        app.send = lambda body: None
        async with app.run_test(size=(100, 30)) as pilot:
            wanted = PHASE_SCREENS[GAMES[screen][1]]
            await until(lambda: isinstance(app.screen, wanted), what=f"the {screen} screen")
            await pilot.pause()
            text = assert_ascii(app, screen)
            if screen in ("room", "table"):
                assert "Jose" in text
            if screen == "table":
                assert "+" in text and "|" in text  # the seats still have borders, in ASCII
                dialogs = [("p", EmojiPicker), ("x", CounterTeam if players > 4 else None)]
                for key, dialog in dialogs:
                    if dialog is None:
                        continue
                    await pilot.press(key)
                    await until(lambda: isinstance(app.screen, dialog), what=dialog.__name__)
                    await pilot.pause()
                    assert_ascii(app, dialog.__name__)
                    await pilot.press("escape")
            await pilot.press("question_mark")
            await until(lambda: isinstance(app.screen, HelpScreen), what="the help")
            await pilot.pause()
            assert_ascii(app, f"the help over {screen}")
            await pilot.press("escape")
            await pilot.press("ctrl+q")

    run(body)


def test_the_call_reminder_is_ascii():
    async def body():
        app = QuatroApp(game=round_game(4, hand=("KS", "KH", "KD", "KC")), ascii_only=True)
        app.send = lambda body: None
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("space")
            await until(lambda: isinstance(app.screen, ConfirmCall), what="the reminder")
            await pilot.pause()
            assert_ascii(app, "the reminder")
            await pilot.press("n")
            await pilot.press("ctrl+q")

    run(body)


def test_the_lobby_is_ascii():
    async def body():
        app = QuatroApp(ascii_only=True)
        app.tables = tables(
            {
                "table": 1,
                "game": "quatro",
                "players": 4,
                "taken": 2,
                "bots": 1,
                "phase": "lobby",
                "timing": "rápido",
                "password": False,
                "scores": [0, 0],
            },
            *(
                {
                    "table": i,
                    "game": "quatro",
                    "players": 8,
                    "taken": 8,
                    "bots": 5,
                    "phase": "playing",
                    "timing": "fast",
                    "password": True,
                    "scores": [1, 3, 0, 2],
                }
                for i in range(2, 40)  # enough to scroll
            ),
        )
        async with app.run_test(size=(80, 24)) as pilot:
            await app.push_screen(LobbyScreen())
            await pilot.pause()
            screen = app.screen
            screen.query_one("#password").value = "secret"
            await pilot.pause()
            text = assert_ascii(app, "the lobby")
            assert "rapido" in text and "******" in text
            await pilot.press("ctrl+q")

    run(body)


def test_the_splash_is_ascii():
    async def body():
        app = QuatroApp(ascii_only=True)
        async with app.run_test(size=(80, 24)) as pilot:
            app._splash("Starting a private server…")
            await pilot.pause()
            assert "Starting a private server..." in assert_ascii(app, "the splash")
            await pilot.press("ctrl+q")

    run(body)
