"""Names come from other players: the client shows them as plain text, never as Textual markup.

A name such as ``[/]`` once crashed every other client at the table (MarkupError), and ``[@click=app.quit]x``
put an action under the name. Every screen is drawn here with such names, no server, no snapshot: nothing
may fail, each name must show literally, and nothing on screen may carry a link or a click action.
"""

from __future__ import annotations

import pytest

from quatro_shared.games.quatro.views import Phase

from helpers.snapshot_games import over_game, renamed, reveal_game, room_game, round_game, signing_game, tables
from helpers.tui import run, until
from quatro_tui.app import QuatroApp
from quatro_tui.games.quatro.client import PHASE_SCREENS
from quatro_tui.games.quatro.screens.dialogs import ConfirmCall, CounterTeam, EmojiPicker
from quatro_tui.screens.help import HelpScreen
from quatro_tui.screens.lobby import LobbyScreen

pytestmark = pytest.mark.timeout(60)

HOSTILE = ("[/]", "[b]x", "[@click=app.quit]x", "[link=http://x]y")
#: The shortest cut any screen makes of a name (the own panel and the ready list keep 12 characters).
SHOWN = 12

GAMES = {
    "room": (room_game, Phase.LOBBY),
    "signing": (signing_game, Phase.SIGNING),
    "table": (lambda players: round_game(players, vote=True), Phase.ROUND),
    "reveal": (reveal_game, Phase.BREAK),
    "over": (over_game, Phase.OVER),
}


def hostile_game(screen: str, players: int):
    game = GAMES[screen][0](players)
    game.seating = renamed(game.seating, {s.seat: HOSTILE[s.seat % len(HOSTILE)] for s in game.seating.seats})
    # Feed lines and a status line built from names, as events and refusals make them.
    for name in HOSTILE:
        game.say(f"{name} took the channel.")
    game.link = f"seat lost: {HOSTILE[0]} {HOSTILE[2]}"
    return game


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def assert_inert(app) -> None:
    """No segment on screen links anywhere or runs an action that a name could have brought."""
    for strip in app.screen._compositor.render_strips():
        for segment in strip:
            style = segment.style
            if style is None:
                continue
            assert not style.link, (segment.text, style.link)
            click = str(style.meta.get("@click", ""))
            assert "app.quit" not in click, (segment.text, click)


async def shows_names(app, pilot, seats: list[int]) -> None:
    await pilot.pause()
    text = screen_text(app)
    for seat in seats:
        name = HOSTILE[seat % len(HOSTILE)]
        assert name[:SHOWN] in text, f"{name!r} not shown literally:\n{text}"
    assert_inert(app)
    assert app.is_running and app.return_code is None


@pytest.mark.parametrize("players", [4, 8])
@pytest.mark.parametrize("screen", GAMES)
def test_hostile_names_show_literally_on_every_screen(screen, players):
    async def body():
        game = hostile_game(screen, players)
        app = QuatroApp(game=game)
        app.send = lambda body: None
        async with app.run_test(size=(120, 40)) as pilot:
            wanted = PHASE_SCREENS[GAMES[screen][1]]
            await until(lambda: isinstance(app.screen, wanted), what=f"the {screen} screen")
            # Every seat's name but one's own (shown as "you" in places) somewhere on the screen.
            await shows_names(app, pilot, list(range(1, players)))
            if screen == "table":
                for key, dialog in (("p", EmojiPicker), ("x", CounterTeam if players > 4 else None)):
                    if dialog is None:
                        continue
                    await pilot.press(key)
                    await until(lambda: isinstance(app.screen, dialog), what=dialog.__name__)
                    await pilot.pause()
                    screen_text(app)
                    assert_inert(app)
                    await pilot.press("escape")
            await pilot.press("question_mark")
            await until(lambda: isinstance(app.screen, HelpScreen), what="the help")
            await pilot.pause()
            screen_text(app)
            await pilot.press("escape")
            # A new name arriving while the screen shows (a rename, a seat taken) redraws safely too.
            game.seating = renamed(game.seating, {1: "[/b][/i]"})
            app.game_changed()
            await pilot.pause()
            assert "[/b][/i]"[:SHOWN] in screen_text(app)
            assert_inert(app)
            await pilot.press("ctrl+q")

    run(body)


def test_confirm_call_dialog_with_hostile_names():
    async def body():
        game = round_game(4, hand=("KS", "KH", "KD", "KC"))
        game.seating = renamed(game.seating, {s.seat: HOSTILE[s.seat] for s in game.seating.seats})
        app = QuatroApp(game=game)
        app.send = lambda body: None
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press("space")
            await until(lambda: isinstance(app.screen, ConfirmCall), what="the reminder")
            await pilot.pause()
            assert_inert(app)
            await pilot.press("n")
            await pilot.press("ctrl+q")

    run(body)


def test_the_lobby_shows_what_the_server_sends_literally():
    async def body():
        app = QuatroApp()
        app.tables = tables(
            {
                "table": 1,
                "game": "quatro",
                "players": 4,
                "taken": 2,
                "bots": 1,
                "phase": "lobby",
                "timing": "[b]x",
                "password": False,
                "scores": [0, 0],
            },
            {
                "table": 2,
                "game": "quatro",
                "players": 4,
                "taken": 1,
                "bots": 0,
                "phase": "lobby",
                "timing": "[@click=app.quit]x",
                "password": True,
                "scores": [0, 0],
            },
        )
        app.profiles = ["[/]", "[b]x"]  # the server's timing profiles, listed in a select
        async with app.run_test(size=(120, 30)) as pilot:
            await app.push_screen(LobbyScreen())
            await pilot.pause()
            screen = app.screen
            screen.note("Cannot join: [link=http://x]y[/link] [/]")
            await pilot.pause()
            text = screen_text(app)
            for shown in ("[/]", "[b]x", "[@click=app.quit]x", "Cannot join: [link=http://x]y[/link] [/]"):
                assert shown in text, f"{shown!r} not shown literally:\n{text}"
            assert_inert(app)
            await pilot.press("ctrl+q")

    run(body)


def test_the_splash_shows_the_address_literally():
    async def body():
        app = QuatroApp()
        async with app.run_test(size=(80, 24)) as pilot:
            app._splash("Connecting to [/]:7777…")
            await pilot.pause()
            assert "Connecting to [/]:7777" in screen_text(app)
            await pilot.press("ctrl+q")

    run(body)
