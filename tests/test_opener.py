"""``quatro play --open N``: the opener quitting does not end the others' game; the server stops by itself later."""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shlex
import socket
import sys
import time
import uuid
from pathlib import Path

import pytest
import trio

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.games.quatro.views import Phase

from helpers.terminal import WAIT, Tmux, on_the_table, wait_for
from helpers.tui import Player, run, until
from quatro_server.idle import stop_when_idle
from quatro_server.tables.lobby import Lobby
from quatro_server.tables.room import ABANDON_AFTER
from quatro_tui.app import Play, QuatroApp
from quatro_tui.cli import make_app, parser
from quatro_tui.connection import ServerBye
from quatro_tui.local_server import QUIET_STOP, LocalServer
from quatro_tui.screens.dialogs import LeaveRunning
from quatro_tui.screens.room import RoomScreen
from quatro_tui.settings import Settings

pytestmark = pytest.mark.timeout(120)

#: A short match: one point wins, and rounds end quickly.
SHORT_MATCH = {
    "sign_window": 0.5,
    "swap_cooldown": 0.2,
    "channel_cooldown": 0.2,
    "pulse_interval": 0.5,
    "pulse_shown": 0.4,
    "vote_window": 1.0,
    "vote_gap": 1.0,
    "round_length": 6.0,
    "break_length": 0.5,
    "target_score": 1,
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
            assert "1 other is still playing. Quit and leave the table running for them? y/n" in str(
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


def test_the_opener_who_says_n_stays_and_only_s_stops_the_table_for_everyone(tmp_path):
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
            await pilot.press("n")  # no: stay, as n means in every dialog
            await until(lambda: not isinstance(app.screen, LeaveRunning), what="the question to go again")
            assert app.is_running and process.poll() is None
            await pilot.press("ctrl+q")
            await until(lambda: isinstance(app.screen, LeaveRunning), what="the question a third time")
            await pilot.press("s")
        # Her stop is final: her guest is told the game is over and who ended it, not to come back later.
        bye = await until(
            lambda: next((m for m in bob.messages if isinstance(m, ServerBye)), None),
            what="bob told the server is going",
        )
        assert bye.reason == m.BYE_CLOSED and bye.text == "opal ended the game", (bye.reason, bye.text)
        await until(lambda: process.poll() is not None, what="the server to stop")
        await bob.close()

    run(body)


def test_ctrl_q_twice_quits_and_leaves_the_table_running_for_the_others(tmp_path):
    async def body():
        app = QuatroApp(Play(players=4, level="normal", timing=short_match(tmp_path), name="opal", open=1))
        async with app.run_test(size=(80, 24)) as pilot:
            bob = await open_table_with_bob(app)
            process = app.server.process
            await pilot.press("ctrl+q")
            await until(lambda: isinstance(app.screen, LeaveRunning), what="the question")
            await pilot.press("ctrl+q")
            await until(lambda: app.return_code is not None or not app.is_running, what="the opener to quit")
        await asyncio.sleep(1.0)
        assert process.poll() is None, "the second ctrl+q stopped the table for everyone"
        assert not any(isinstance(m, ServerBye) for m in bob.messages)
        assert (await bob.request("list_tables"))["kind"] == p.OK  # the server still answers
        await bob.close()
        process.terminate()
        process.wait(5)

    run(body)


def test_r19_the_opener_who_left_it_running_comes_back_to_her_seat_with_quatro_join(tmp_path, monkeypatch):
    """Her seat is remembered like anyone's, under every address she may type: ``quatro join HOST:PORT`` brings
    her back to it mid-match (not refused "the match has started: its seats are fixed")."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))

    async def body():
        app = make_app(["play", "--open", "1", "--timing", short_match(tmp_path), "--name", "cleo", "--level", "hard"])
        assert isinstance(app, QuatroApp)
        async with app.run_test(size=(80, 24)) as pilot:
            bob = await open_table_with_bob(app)
            await bob.wait_view(lambda v: v.phase is not Phase.LOBBY, "the match")
            process, seat, table = app.server.process, app.game.my_seat, app.game.seating.table
            port, addresses = app.server.port, list(app.server.addresses)
            await pilot.press("ctrl+q")
            await until(lambda: isinstance(app.screen, LeaveRunning), what="the question")
            await pilot.press("y")
        settings = Settings.load()
        for address in [*addresses, f"127.0.0.1:{port}", f"localhost:{port}"]:
            remembered = settings.remembered_seat(address, "cleo")
            assert remembered is not None and remembered.table == table, address
        again = make_app(["join", f"127.0.0.1:{port}", "--name", "cleo"])
        assert isinstance(again, QuatroApp)
        async with again.run_test(size=(80, 24)) as pilot:
            await until(lambda: again.game.my_seat == seat and again.game.view is not None, what="her seat again")
            feed = list(again.game.feed)
            assert "Back in your seat." in feed
            # A new process, and yet the feed of the match she left (protocol 7's ``recent``), before her return.
            told = [line for line in feed if line.startswith("The match starts: ") or line.startswith("Round 1: ")]
            assert len(told) == 2 and feed.index(told[-1]) < feed.index("Back in your seat."), feed
            await until(lambda: bob.seating is not None and bob.seating.seats[seat].connected, what="bob sees her back")
            await again.conn.close()
        await bob.close()
        process.terminate()
        process.wait(5)

    run(body)


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def test_the_open_private_server_outlives_a_client_gone_without_a_word_and_a_solo_one_does_not():
    """The client's end without a word (its terminal closed, the process killed) closes the server's stdin. A
    server with open seats runs on for the others (in a session of its own, the terminal's hang-up never
    reaches it) and stops by itself once nobody is left; a solo game's stops with its player."""
    open_server = LocalServer("fast", public=True, idle_stop=2.0)
    solo = LocalServer("fast")
    try:
        open_port, solo_port = open_server.start(), solo.start()
        assert open_server.process is not None and solo.process is not None
        assert os.getsid(open_server.process.pid) != os.getsid(0)  # not the terminal's session
        open_process, solo_process = open_server.process, solo.process
        for process in (open_process, solo_process):
            assert process.stdin is not None
            process.stdin.close()  # what the client's death does
        solo_process.wait(10)
        time.sleep(0.5)
        assert open_process.poll() is None and _answers(open_port)
        assert not _answers(solo_port)
        open_process.wait(15)  # nobody connected: it stops after its quiet time
    finally:
        open_server.stop()
        solo.stop()


def test_the_quiet_time_is_shorter_than_a_tables_and_said_where_the_opener_looks():
    assert QUIET_STOP < ABANDON_AFTER
    said = f"{QUIET_STOP / 60:g} minutes"
    commands = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert said in " ".join(commands.choices["play"].format_help().split())
    assert said in " ".join((Path(__file__).parent.parent / "README.md").read_text().split())


# --- in a real terminal ------------------------------------------------------------------------------------


def _quatro(home: Path, *args: str) -> str:
    return " ".join(
        [
            "env",
            f"XDG_CONFIG_HOME={shlex.quote(str(home))}",
            "LANG=C.UTF-8",
            shlex.quote(sys.executable),
            "-m",
            "quatro_tui",
            *map(shlex.quote, args),
        ]
    )


def _over(screen: str) -> bool:
    """The match end's screen: its way on is playing again."""
    return "play again" in screen or "plays again" in screen


def _play_on(tmux: Tmux, session: str, screen: str) -> None:
    """One step of a player who wants the match over: ready at signing, Counter! at the table (right or wrong, a
    team scores: R14), the next round at the reveal when hosting."""
    if "pick this sign" in screen:
        tmux("send-keys", "-t", session, "Enter")
    elif on_the_table(screen):
        tmux("send-keys", "-t", session, "x")
    elif "starts the next round now" in screen:
        tmux("send-keys", "-t", session, "n")


@pytest.mark.timeout(240)
def test_r19_in_tmux_the_openers_window_is_killed_mid_round_the_guest_finishes_and_the_opener_comes_back(
    tmp_path, tmux
):
    opener_home, guest_home = tmp_path / "cleo", tmp_path / "ben"
    tag = uuid.uuid4().hex[:8]
    opener, guest, back = f"cleo-{tag}", f"ben-{tag}", f"cleo-back-{tag}"
    cwd = os.getcwd()
    tmux(
        "-u",
        "new-session",
        "-d",
        "-s",
        opener,
        "-x",
        "80",
        "-y",
        "24",
        "-c",
        cwd,
        _quatro(opener_home, "play", "--open", "1", "--timing", "fast", "--name", "cleo"),
    )
    try:
        room = wait_for(tmux, opener, lambda t: "Others join with:" in t and "--table" in t, "the join address")
        found = re.search(r"quatro join 127\.0\.0\.1:(\d+) --table (\d+)", room)
        assert found, room
        port, table = int(found.group(1)), found.group(2)
        address = f"127.0.0.1:{port}"
        tmux(
            "-u",
            "new-session",
            "-d",
            "-s",
            guest,
            "-x",
            "80",
            "-y",
            "24",
            "-c",
            cwd,
            _quatro(guest_home, "join", address, "--table", table, "--name", "ben"),
        )
        # Everyone seated: the match starts by itself. Mid-round, the opener's window goes.
        deadline = time.monotonic() + WAIT
        while not on_the_table(tmux("capture-pane", "-p", "-t", opener)):
            assert time.monotonic() < deadline, tmux("capture-pane", "-p", "-t", opener)
            _play_on(tmux, guest, tmux("capture-pane", "-p", "-t", guest))
            time.sleep(0.3)
        tmux("kill-window", "-t", opener)
        assert opener not in tmux("list-sessions", "-F", "#{session_name}")
        time.sleep(1.0)
        assert _answers(port), "the private server stopped with its opener's terminal"

        # The guest plays on; after a round or two the opener comes back to her seat.
        deadline = time.monotonic() + 150
        came_back = False
        rounds_seen = 0
        screen = ""
        while not _over(screen):
            assert time.monotonic() < deadline, f"the match never ended; the guest's screen:\n{screen}"
            screen = tmux("capture-pane", "-p", "-t", guest)
            assert "shutting down" not in screen and "Nobody is serving" not in screen, screen
            if "starts the next round now" in screen or "next round" in screen:
                rounds_seen += 1  # a round has ended since the opener left
            if not came_back and rounds_seen:
                tmux(
                    "-u",
                    "new-session",
                    "-d",
                    "-s",
                    back,
                    "-x",
                    "80",
                    "-y",
                    "24",
                    "-c",
                    cwd,
                    _quatro(opener_home, "join", address, "--name", "cleo"),
                )
                again = wait_for(
                    tmux,
                    back,
                    lambda t: "Back in your seat" in t or "its seats are fixed" in t,
                    "the opener back in her seat",
                )
                assert "its seats are fixed" not in again, again
                came_back = True
            _play_on(tmux, guest, screen)
            time.sleep(0.3)
        assert came_back
        wait_for(tmux, back, _over, "the match end on the opener's screen too")
        # Everyone leaves once the match is over: the server stops by itself.
        for session in (guest, back):
            tmux("send-keys", "-t", session, "C-q")
        deadline = time.monotonic() + 20
        while _answers(port):
            assert time.monotonic() < deadline, "the private server never stopped by itself"
            time.sleep(0.3)
    finally:
        for session in (opener, guest, back):
            tmux("kill-session", "-t", session)
        deadline = time.monotonic() + 10
        while _answers(port if "port" in locals() else 0) and time.monotonic() < deadline:
            time.sleep(0.3)


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
