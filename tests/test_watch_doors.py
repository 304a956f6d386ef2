"""Watching a table through the doors, as people do: a real OpenSSH client in tmux presses ``w`` in the lobby and
follows a whole match (the fast profile's durations, two points) against bots to its end; so does a browser visitor.
The host plays over plain TCP (the test's own client), calling at every round so that the match ends quickly.

Without ssh, tmux or chromium the tests are skipped on a developer's machine but fail in CI (.ci/run installs them).
"""

from __future__ import annotations

import threading
from dataclasses import fields
from pathlib import Path

import pytest
import trio

from quatro_shared import protocol as p
from quatro_shared.games.quatro.views import Phase

from helpers.netclient import TestClient
from helpers.ssh import start_door
from helpers.terminal import wait_for
from helpers.web import Page, start_web
from quatro_server.timing import FAST
from test_ssh_terminal import ssh_client, ssh_command  # noqa: F401 - ssh_client is a fixture
from test_web_door import browser  # noqa: F401 - a fixture: one Chromium for the module

pytestmark = pytest.mark.timeout(180)


#: The watched match's profile, on the door's server (``--timing FILE``, named by the file's stem): the fast
#: profile's durations, and a match of two points rather than five, so that the watcher follows a whole match
#: from its first round to its end in fewer rounds.
MATCH = "match"


def match_timing(directory: Path) -> str:
    numbers = {f.name: getattr(FAST, f.name) for f in fields(FAST) if isinstance(getattr(FAST, f.name), (int, float))}
    path = directory / f"{MATCH}.toml"
    path.write_text("".join(f"{key} = {value}\n" for key, value in {**numbers, "target_score": 2}.items()))
    return str(path)


class Host:
    """The table's host in a thread of its own, over TCP: a 4-seat table of the ``MATCH`` profile with three bots;
    once told to start, it readies, calls as each round opens and starts the next round, until the match is over."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.table: int | None = None
        self.created = threading.Event()
        self.go = threading.Event()
        self.over = threading.Event()
        self.failed: list[BaseException] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            trio.run(self._play)
        except BaseException as exc:  # noqa: BLE001 - told to the test
            self.failed.append(exc)
            self.created.set()

    async def _play(self) -> None:
        host = await TestClient.connect(self.port, "ann")
        assert (await host.request(p.CREATE_TABLE, players=4, timing=MATCH))["kind"] == p.OK
        for _ in range(3):
            assert (await host.request(p.ADD_BOT, level="easy"))["kind"] == p.OK
        self.table = host.table
        self.created.set()
        while not self.go.is_set():
            await trio.sleep(0.05)
        assert (await host.request(p.START))["kind"] == p.OK
        with trio.fail_after(150):
            while not self.stop.is_set():
                await host.drain(0.2)
                view = host.view
                if view is None:
                    continue
                if view.phase is Phase.OVER:
                    self.over.set()
                    break
                if view.phase is Phase.SIGNING and not view.seats[view.seat].ready:
                    await host.request("ready")
                elif view.phase is Phase.ROUND:
                    await host.request("call")
                elif view.phase is Phase.BREAK and view.host == view.seat:
                    await host.request("next_round")
        while not self.stop.is_set():
            await host.drain(0.2)
        await host.aclose()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=10)


def test_a_watcher_over_ssh_follows_a_whole_match_from_the_lobby_w_key(tmp_path, tmux, ssh_client):  # noqa: F811
    door = start_door(tmp_path, "--timing", match_timing(tmp_path))
    host = Host(door.port)
    try:
        assert host.created.wait(20) and not host.failed, host.failed
        tmux("-u", "new-session", "-d", "-s", "wes", "-x", "100", "-y", "30", ssh_command(ssh_client, door, "wes"))
        wait_for(tmux, "wes", lambda t: "Tables on this server" in t and "ann" in t, "wes's lobby, ann's table")
        tmux("send-keys", "-t", "wes", "w")
        wait_for(tmux, "wes", lambda t: "WATCHING" in t and "1 watching" in t, "the watched table")
        host.go.set()
        wait_for(tmux, "wes", lambda t: "center" in t and "WATCHING" in t, "the round, watched")
        screen = tmux("capture-pane", "-p", "-t", "wes")
        assert "hand" not in screen.split("center")[1].split("\n")[0], screen  # no hand row beside the center
        wait_for(tmux, "wes", lambda t: "MATCH OVER" in t, "the end of the match, watched", timeout=150)
        assert host.over.wait(10) and not host.failed, host.failed
        screen = tmux("capture-pane", "-p", "-t", "wes")
        assert "WATCHING" in screen and "wins" in screen, screen
        tmux("send-keys", "-t", "wes", "q")
        wait_for(tmux, "wes", lambda t: "Tables on this server" in t, "back in the lobby")
    finally:
        host.close()
        tmux("kill-server")
        door.stop()


def test_a_browser_visitor_follows_a_whole_match_from_the_lobby_w_key(browser, tmp_path):
    server = start_web(tmp_path, "--timing", match_timing(tmp_path))
    host = Host(server.port)
    visitor = Page(browser, server.url)
    try:
        assert host.created.wait(20) and not host.failed, host.failed
        response = visitor.open()
        assert response is not None and response.status == 200
        visitor.wait_for("Your name at the tables", "the name question")
        visitor.type("wes")
        visitor.press("Enter")
        visitor.wait_for(lambda t: "Tables on this server" in t and "ann" in t, "the lobby with ann's table")
        visitor.press("w")
        visitor.wait_for(lambda t: "WATCHING" in t and "1 watching" in t, "the watched table")
        host.go.set()
        visitor.wait_for(lambda t: "center" in t and "WATCHING" in t, "the round, watched", timeout=30)
        visitor.wait_for(lambda t: "MATCH OVER" in t, "the end of the match, watched", timeout=150)
        assert host.over.wait(20) and not host.failed, host.failed
        visitor.press("q")
        visitor.wait_for("Tables on this server", "back in the lobby")
    finally:
        visitor.close()
        host.close()
        server.stop()
