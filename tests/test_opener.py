"""``quatro play --open N``: the opener quitting does not end the others' game; the server stops by itself later."""

from __future__ import annotations

import asyncio
import time

import pytest
import trio

from quatro_shared import protocol as p
from quatro_shared.views import Phase

from quatro_server.idle import stop_when_idle
from quatro_server.lobby import Lobby
from quatro_tui.app import Play, QuatroApp
from quatro_tui.connection import ServerBye
from quatro_tui.screens.dialogs import LeaveRunning
from quatro_tui.screens.room import RoomScreen
from tui_helpers import Player, run, until

pytestmark = pytest.mark.timeout(120)

#: A short match: one point wins, and rounds end quickly.
SHORT_MATCH = {
    "sign_window": 0.5, "swap_cooldown": 0.2, "channel_cooldown": 0.2, "pulse_interval": 0.5, "pulse_shown": 0.4,
    "vote_window": 1.0, "vote_gap": 1.0, "round_length": 6.0, "break_length": 0.5, "target_score": 1,
}


def short_match(tmp_path) -> str:
    path = tmp_path / "short.toml"
    path.write_text("".join(f"{key} = {value}\n" for key, value in SHORT_MATCH.items()))
    return str(path)


async def open_table_with_bob(app: QuatroApp) -> Player:
    await until(lambda: isinstance(app.screen, RoomScreen) and app.game.seating, what="the room")
    await until(lambda: sum(s.taken for s in app.game.seating.seats) == 3, what="the bots")
    port = int(app.join_addresses[-1].rsplit(":", 1)[1])
    bob = await Player(port, "bob").start()
    await bob.act(p.JOIN, table=app.game.seating.table)
    await until(lambda: app.others_playing() == 1, what="bob at the table")
    return bob


def test_r19_the_opener_quits_and_the_others_play_on_to_the_match_end(tmp_path):
    async def body():
        app = QuatroApp(Play(players=4, level="hard", timing=short_match(tmp_path), name="opal", open=1))
        async with app.run_test(size=(80, 24)) as pilot:
            bob = await open_table_with_bob(app)
            await bob.wait_view(lambda v: v.phase is not Phase.LOBBY, "the match")
            process = app.server.process
            await pilot.press("ctrl+q")
            await until(lambda: isinstance(app.screen, LeaveRunning), what="the question")
            assert "1 other is still playing: leave the table running for them? y/n" in str(
                app.screen.query_one("Static").render()
            )
            await pilot.press("y")
            await until(lambda: app.return_code is not None or not app.is_running, what="the opener to quit")
        assert process.poll() is None  # the server runs on without its opener
        # bob plays on, to the match's end.
        deadline = time.monotonic() + 60
        while bob.view.phase is not Phase.OVER:
            assert time.monotonic() < deadline, f"the match never ended: {bob.view.phase}, scores {bob.view.scores}"
            if bob.view.phase is Phase.SIGNING and not bob.view.seats[bob.view.seat].ready:
                await bob.request("ready")
            elif bob.view.phase is Phase.ROUND:
                await bob.request("counter")  # right or wrong, a team scores (R14), and one point wins here
            await asyncio.sleep(0.1)
        assert not any(isinstance(m, ServerBye) for m in bob.messages)
        await bob.close()
        # The match over and everyone gone: the server stops by itself.
        await until(lambda: process.poll() is not None, timeout=20, what="the server to stop by itself")

    run(body)


def test_the_opener_who_says_no_stops_the_table_for_everyone(tmp_path):
    async def body():
        app = QuatroApp(Play(players=4, level="normal", timing=short_match(tmp_path), name="opal", open=1))
        async with app.run_test(size=(80, 24)) as pilot:
            bob = await open_table_with_bob(app)
            process = app.server.process
            await pilot.press("ctrl+q")
            await until(lambda: isinstance(app.screen, LeaveRunning), what="the question")
            await pilot.press("escape")  # not quitting after all
            await until(lambda: not isinstance(app.screen, LeaveRunning), what="the question to go")
            assert app.is_running
            await pilot.press("ctrl+q")
            await until(lambda: isinstance(app.screen, LeaveRunning), what="the question again")
            await pilot.press("n")
        await until(lambda: any(isinstance(m, ServerBye) and m.reason == "shutdown" for m in bob.messages),
                    what="bob told the server is going")
        await until(lambda: process.poll() is not None, what="the server to stop")
        await bob.close()

    run(body)


# --- the idle rule itself, on trio's virtual clock ------------------------------------------------------------


class _Someone:
    pass


async def test_an_idle_server_stops_after_the_stated_time_and_not_before(autojump_clock):
    lobby = Lobby()
    stopped: list[float] = []
    lobby.watchers.add(_Someone())  # type: ignore[arg-type]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(stop_when_idle, lobby, 600.0, lambda: stopped.append(trio.current_time()))
        await trio.sleep(1000)
        assert not stopped  # someone is connected: it runs on however long
        lobby.watchers.clear()
        left = trio.current_time()
        await trio.sleep(599)
        assert not stopped
        await trio.sleep(2)
    assert stopped and 600 <= stopped[0] - left <= 601


async def test_an_idle_server_whose_tables_have_all_closed_stops_at_once(autojump_clock):
    lobby = Lobby()
    stopped: list[float] = []
    room = object()
    lobby.rooms[1] = room  # type: ignore[assignment]
    lobby.watchers.add(_Someone())  # type: ignore[arg-type]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(stop_when_idle, lobby, 600.0, lambda: stopped.append(trio.current_time()))
        await trio.sleep(5)
        lobby.watchers.clear()
        lobby.rooms.clear()  # the match is over and everyone has gone: the table closed
        await trio.sleep(2)
        assert stopped
