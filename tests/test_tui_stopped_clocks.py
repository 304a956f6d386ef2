"""While the link is down nothing on screen counts down: the phase clock and the pulse countdowns stand still,
marked as stopped, and move again from the snapshot that comes with the seat (R19)."""

from __future__ import annotations

import time

import pytest

from quatro_shared import protocol as p
from quatro_shared.games.quatro.views import Phase

from helpers.tui import Player, quatro_server, run, until  # noqa: F401 - quatro_server is a fixture
from quatro_tui.app import Join, QuatroApp
from quatro_tui.widgets.countdown import Countdown

pytestmark = pytest.mark.timeout(60)


def test_countdowns_stand_still_while_the_link_is_down_and_move_again_once_it_is_back(quatro_server):
    async def body():
        shift = [0.0]
        hal = await Player(quatro_server, "hal").start()
        try:
            table = (await hal.act(p.CREATE_TABLE, players=4))["table"]
            app = QuatroApp(Join("127.0.0.1", quatro_server, "ann", table), clock=lambda: time.monotonic() + shift[0])
            async with app.run_test(size=(100, 30)):
                await until(lambda: app.game.my_seat is not None, what="ann's seat")
                await hal.act(p.ADD_BOT)
                await hal.act(p.ADD_BOT)
                await hal.act(p.START)
                await until(lambda: app.game.view is not None and app.game.view.phase is Phase.SIGNING, what="signing")
                countdown = app.screen.query_one(Countdown)
                running = countdown.draw().plain
                assert running.startswith("opens in") and "stopped" not in running

                assert app.conn is not None
                app.conn.backoff_first = 3.0  # the link stays down long enough to look at it
                app.conn.abort()  # as a network failure would
                await until(lambda: app.game.link.startswith("connection lost"), what="the drop")
                down = countdown.draw().plain
                beat = app.game.beat_left(1500)  # a held channel's next pulse, as the seats and one's panel count it
                shift[0] += 40.0  # time passes on this side while nothing is heard from the table
                assert countdown.draw().plain == down and "stopped" in down
                assert app.game.elapsed() < 5.0 and app.game.beat_left(1500) == beat

                await until(lambda: not app.game.stopped, timeout=20, what="the snapshot after the link came back")
                again = countdown.draw().plain
                assert "stopped" not in again and again.startswith("opens in")
        finally:
            await hal.close()

    run(body)
