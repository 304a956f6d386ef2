"""The lobby's past matches (key ``p``, App.run_test) against a real server, when the answer is not a replay: the
screen says what happened (the server's refusal, or a reply this client cannot read), never that the connection
was lost when it was not, and the player stays on the list with a way on (another match, another seat, back)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from quatro_shared import protocol as p
from quatro_shared.games.quatro.views import Phase

from conftest import STEADY
from helpers.lobby_peer import RecordingPeer as Peer
from helpers.tui import run, until
from quatro_server import journal as j
from quatro_server.tables.lobby import Lobby
from quatro_tui.app import Join, QuatroApp
from quatro_tui.local_server import LocalServer
from quatro_tui.replay.past import PastMatchesScreen
from test_journal import ask

#: Run before the server in its process: a server whose replies break the framing's limits (an array over 256), as
#: a server before replays came in chunks of at most 256 frames did. ``QUATRO_TEST_LONG`` says which reply.
_OVER_THE_LIMITS = """
import dataclasses, os
import quatro_server.replay.archive as _archive
from quatro_shared import messages as _m
_which = os.environ.get("QUATRO_TEST_LONG", "")
_real_chunk, _real_past = _archive.chunk, _archive.Archive.past_matches
def _long_chunk(*args, **kwargs):
    part = _real_chunk(*args, **kwargs)
    return dataclasses.replace(part, times=part.times * 300) if _which == "replay" else part
def _long_past(self, *args, **kwargs):
    found = _real_past(self, *args, **kwargs)
    return dataclasses.replace(found, matches=found.matches * 300) if _which == "past" and found.matches else found
_archive.chunk, _archive.Archive.past_matches = _long_chunk, _long_past
"""


class OverTheLimits(LocalServer):
    """The real server, with its replay or its list of past matches too long for the framing (``_OVER_THE_LIMITS``)."""

    def command(self) -> list[str]:
        command = super().command()
        assert command[1] == "-c"
        command[2] = _OVER_THE_LIMITS + command[2]
        return command


def play_a_match(tmp_path: Path, password: str | None = None) -> int:
    """A whole match (two points) between ann and three bots, journalled in ``tmp_path``; returns its table id."""
    lobby = Lobby(timing_profiles={"steady": replace(STEADY, target_score=2)}, seed=3)
    journal = j.Journal.open(tmp_path)
    lobby.restore(journal, 0.0)
    ann = Peer("ann")
    fields = {} if password is None else {"password": password}
    table_id = ask(lobby, ann, 0.0, p.CREATE_TABLE, players=4, timing="steady", **fields)["table"]
    for _ in range(3):
        ask(lobby, ann, 0.1, p.ADD_BOT, level="normal")
    ask(lobby, ann, 0.2, p.START)
    room = lobby.rooms[table_id]
    now = 0.3
    while room.table.phase is not Phase.OVER:
        if room.table.phase is Phase.SIGNING:
            ask(lobby, ann, now, "ready")
        elif room.table.phase is Phase.ROUND:
            hand, center = room.table.hand(0), room.table.center
            ask(lobby, ann, now, "swap", give=hand[0], slot=0, take=center[0])
            ask(lobby, ann, now + 0.1, "call")
        elif room.table.phase is Phase.BREAK:
            ask(lobby, ann, now, "next_round")
        now += 6.0
        room.tick(now)
    journal.close()
    return table_id


def note_of(app: QuatroApp) -> str:
    screen = app.screen
    return str(screen.query_one("#past-note").render()) if isinstance(screen, PastMatchesScreen) else ""


async def _to_the_past_matches(app: QuatroApp, pilot, listed: bool = True) -> None:
    from quatro_tui.screens.lobby import LobbyScreen

    await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
    await pilot.press("p")
    if listed:
        await until(lambda: isinstance(app.screen, PastMatchesScreen) and app.screen.matches, what="the list")


async def _back_to_the_lobby(app: QuatroApp, pilot) -> None:
    from quatro_tui.screens.lobby import LobbyScreen

    await pilot.press("escape")
    await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby again")


def test_a_replay_the_server_refuses_says_its_refusal_and_stays_on_the_list(tmp_path):
    table = play_a_match(tmp_path, password="sesame")
    server = LocalServer("fast", data_dir=tmp_path)
    server.start()
    try:

        async def body() -> None:
            app = QuatroApp(Join("127.0.0.1", server.port, "eve"))
            async with app.run_test(size=(100, 32)) as pilot:
                await _to_the_past_matches(app, pilot)
                assert app.screen.matches[0].table == table and app.screen.matches[0].password
                await pilot.press("enter")  # no password given
                await until(lambda: "Cannot replay it" in note_of(app), what="the refusal")
                assert "password" in note_of(app) and "connection" not in note_of(app), note_of(app)
                assert app.player is None and app.screen.matches  # still the list, to pick again
                await _back_to_the_lobby(app, pilot)

        run(body)
    finally:
        server.stop()


def test_a_replay_this_client_cannot_read_says_so_not_that_the_connection_was_lost(tmp_path, monkeypatch):
    table = play_a_match(tmp_path)
    monkeypatch.setenv("QUATRO_TEST_LONG", "replay")
    server = OverTheLimits("fast", data_dir=tmp_path)
    server.start()
    try:

        async def body() -> None:
            app = QuatroApp(Join("127.0.0.1", server.port, "eve"))
            async with app.run_test(size=(100, 32)) as pilot:
                await _to_the_past_matches(app, pilot)
                assert app.screen.matches[0].table == table
                await pilot.press("enter")
                await until(lambda: "Cannot replay it" in note_of(app), what="why the replay is not shown")
                note = note_of(app)
                assert "cannot read" in note and "too_large" in note and "connection was lost" not in note, note
                await until(
                    lambda: app.conn is not None and app.conn.connected and isinstance(app.screen, PastMatchesScreen),
                    what="the list again, on a new link",
                )
                assert app.player is None and app.screen.matches and "cannot read" in note_of(app)
                await _back_to_the_lobby(app, pilot)

        run(body)
    finally:
        server.stop()


def test_a_list_of_past_matches_this_client_cannot_read_says_so_and_goes_back(tmp_path, monkeypatch):
    play_a_match(tmp_path)
    monkeypatch.setenv("QUATRO_TEST_LONG", "past")
    server = OverTheLimits("fast", data_dir=tmp_path)
    server.start()
    try:

        async def body() -> None:
            app = QuatroApp(Join("127.0.0.1", server.port, "eve"))
            async with app.run_test(size=(100, 32)) as pilot:
                await _to_the_past_matches(app, pilot, listed=False)
                await until(lambda: "No past matches" in note_of(app), what="why there is no list")
                note = note_of(app)
                assert "cannot read" in note and "connection was lost" not in note, note
                await until(
                    lambda: app.conn is not None and app.conn.connected and isinstance(app.screen, PastMatchesScreen),
                    what="the screen again, on a new link",
                )
                await _back_to_the_lobby(app, pilot)

        run(body)
    finally:
        server.stop()
