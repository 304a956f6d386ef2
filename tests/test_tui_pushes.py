"""Pushes that reach a screen before it is composed, or after it is gone: a lobby list, a note, a drain, arriving
the moment the player changes screens. The screen keeps what it is told and shows it once it is there; nothing
crashes the client. Against a real server process, through ``App.run_test``."""

from __future__ import annotations

import pytest

from helpers.tui import armed, quatro_server, run, until  # noqa: F401 - quatro_server is a fixture
from quatro_tui.app import Join, QuatroApp
from quatro_tui.screens.lobby import LobbyScreen
from quatro_tui.screens.room import RoomScreen
from test_tui_names import screen_text

pytestmark = pytest.mark.timeout(60)


def test_a_lobby_told_its_list_and_a_note_before_it_is_composed_shows_both_once_it_is(quatro_server):
    async def body():
        app = QuatroApp(Join("127.0.0.1", quatro_server, "ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            app._show_lobby(app.tables)
            fresh = app.screen
            assert isinstance(fresh, LobbyScreen)
            # In the same turn of the loop as the push: nothing of the new screen is composed yet.
            app.draining = True
            fresh.fill()
            fresh.note("Watching ended: the host closed the table to watchers.")
            await until(lambda: "Watching ended" in screen_text(app), what="the note, shown once composed")
            assert "draining before a restart" in screen_text(app)
            await pilot.press("ctrl+q")

    run(body)


def test_leaving_the_waiting_room_with_l_again_and_again_never_crashes(quatro_server):
    async def body():
        app = QuatroApp(Join("127.0.0.1", quatro_server, "ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            for _ in range(6):
                await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
                await armed(app)
                await pilot.press("c")
                await until(lambda: isinstance(app.screen, RoomScreen), what="the room")
                await armed(app)
                await pilot.press("l")
            await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby at last")
            await pilot.pause()
            assert app.return_code is None
            await pilot.press("ctrl+q")

    run(body)
