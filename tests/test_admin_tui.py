"""What a player sees of ``quatro-server admin`` in the terminal client: a notice on the lobby and at a table, a table
closed by the operator (a screen that says so, then the lobby), a draining server in the lobby. A real server
process, the real command, the app through ``App.run_test``."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import Static

from quatro_shared import protocol as p

from helpers.tui import Player, armed, run, timing_file, until
from quatro_tui.app import Join, QuatroApp
from quatro_tui.local_server import LocalServer
from quatro_tui.screens.link import TableEnded
from quatro_tui.screens.lobby import LobbyScreen
from quatro_tui.screens.room import RoomScreen
from test_tui_names import screen_text

pytestmark = pytest.mark.timeout(90)


def operator(data: Path, *argv: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "quatro_server", "admin", "--data", str(data), *argv],
        capture_output=True,
        check=True,
        timeout=30,
    )
    return done.stdout.decode()


def notices(app: QuatroApp) -> list[str]:
    return [notification.message for notification in app._notifications]


def test_notices_show_on_every_screen_and_a_closed_table_says_so_and_leads_to_the_lobby(tmp_path):
    data = tmp_path / "data"
    server = LocalServer(str(timing_file(tmp_path)), data_dir=data)
    port = server.start()

    async def body():
        app = QuatroApp(Join("127.0.0.1", port, "ann"))
        async with app.run_test(size=(100, 30)) as pilot:
            await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            await asyncio.to_thread(operator, data, "notice", "back in five minutes")
            await until(lambda: "back in five minutes" in notices(app), what="the notice in the lobby")
            await until(lambda: "back in five minutes" in screen_text(app), what="the toast drawn")

            await armed(app)
            await pilot.press("c")
            await until(lambda: isinstance(app.screen, RoomScreen), what="the new table's room")
            await asyncio.to_thread(operator, data, "notice", "the [b]bar[/b] closes at ten")
            await until(lambda: "the [b]bar[/b] closes at ten" in notices(app), what="the notice at the table")
            await until(lambda: "the [b]bar[/b] closes at ten" in screen_text(app), what="drawn as it was written")

            await asyncio.to_thread(operator, data, "close", "1", "--reason", "closing for the night")
            await until(lambda: isinstance(app.screen, TableEnded), what="the screen that says what happened")
            text = await until(lambda: (lambda t: "closed table 1" in t and t)(screen_text(app)), what="it drawn")
            assert "The server's operator closed table 1." in text
            assert "Closing for the night." in text and "You are in the lobby" in text
            assert app.conn is not None and app.conn.seat is None  # the secret is forgotten: nothing to come back to
            await pilot.press("l")
            await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby again")
            assert app.game.me is None

            def drains() -> bool:  # the line under the list (a toast may cover part of the screen's text)
                line = app.screen.query_one("#lobby-draining", Static)
                return bool(line.display) and "This server is draining" in str(line.render())

            assert not drains()
            bob = await Player(port, "bob").start()  # a match runs on while the server drains
            await bob.act(p.CREATE_TABLE, players=4)
            for _ in range(3):
                await bob.act(p.ADD_BOT, level="easy")
            await bob.act(p.START)
            await asyncio.to_thread(operator, data, "drain", "--timeout", "30")
            await until(drains, what="the lobby says it drains")
            await pilot.press("ctrl+q")
        await bob.close()

    try:
        run(body)
    finally:
        server.stop()
