"""The client's side of players' records: the person key it keeps per name and says in hello, the lobby's
leaderboard (``l``) and player's card (``i``), and a friendly table chosen in the create row. Against a real server
process whose data directory holds records."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from textual.widgets import DataTable, Select, Static

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.client import ClientCore
from quatro_shared.framing import FrameDecoder
from quatro_shared.wire import request_from_wire

from helpers.door_process import DoorProcess, start_server
from helpers.tui import run, until
from quatro_server.games.quarto.game import QUARTO
from quatro_server.games.quatro.game import QUATRO
from quatro_server.records import identity
from quatro_server.records.match import MatchRecord
from quatro_server.records.store import Player, Records
from quatro_tui import settings
from quatro_tui.cli import make_app

ANN_KEY = "ann-s-key-kept-by-her-client-0001"


def test_the_client_keeps_one_person_key_per_name_in_a_file_of_the_user_s_alone(tmp_path):
    path = tmp_path / "client.toml"
    ann = settings.person_key("ann", path)
    assert settings.person_key("ann", path) == ann  # kept
    bob = settings.person_key("bob", path)
    assert bob != ann and len(ann) >= 32  # two people under one account stay apart
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert settings.Settings.load(path).persons == {"ann": ann, "bob": bob}


def test_hello_carries_the_person_key_and_a_door_s_key_comes_first(monkeypatch, tmp_path):
    _, data = ClientCore("ann", "k" * 20).hello(0.0)
    (frame,) = FrameDecoder().feed(data)
    hello = request_from_wire(frame).body
    assert isinstance(hello, m.Hello) and hello.person == "k" * 20
    (frame,) = FrameDecoder().feed(ClientCore("ann").hello(0.0)[1])
    assert "person" not in frame  # no key: anonymous, as a version-3 hello was

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    app = make_app(["join", "127.0.0.1:1", "--name", "ann"])
    assert not isinstance(app, int) and app.person_key is not None
    own = app.person_key("ann")
    assert own == settings.person_key("ann")
    monkeypatch.setenv(p.PERSON_KEY_ENV, "from-the-door")
    assert app.person_key("ann") == "from-the-door"
    monkeypatch.setenv(p.PERSON_KEY_ENV, "")  # a door's visitor it does not know: anonymous, not the name's key
    assert app.person_key("ann") is None


def _seeded(data_dir: Path) -> str:
    """Records of a few Quatro and Quarto matches: Ann against the bot levels. Returns Ann's person."""
    records = Records.open(data_dir)
    ann = identity.person_of(ANN_KEY)
    bots = {level: Player(identity.bot_person(level), f"{level} bot") for level in ("easy", "normal", "expert")}
    # Quatro: Ann and an easy bot against two expert bots, then against two normal bots.
    for rivals, ann_won in (("expert", False), ("normal", True), ("expert", False), ("normal", True)):
        record = MatchRecord(
            (0, 1, 0, 1),
            (1, 2) if ann_won else (2, 1),
            ({"calls_right": 2, "calls_wrong": 0, "counters_right": 1, "counters_wrong": 0}, {}, {}, {}),
        )
        records.match_ended(QUATRO.name, record, [Player(ann, "ann"), bots[rivals], bots["easy"], bots[rivals]], 1.0)
    for _ in range(2):
        record = MatchRecord((0, 1), (1, 2), ({"games": 4, "games_won": 3, "games_drawn": 1}, {}))
        records.match_ended(QUARTO.name, record, [Player(ann, "ann"), bots["normal"]], 1.0)
    records.close()
    return ann


@pytest.fixture
def records_server(tmp_path):
    _seeded(tmp_path / "data")
    server: DoorProcess = start_server(tmp_path, [], (), tmp_path / "data", "quatro join 127.0.0.1:", "its port")
    yield server
    server.stop()


def _text(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


def test_the_lobby_shows_each_game_s_leaderboard_and_a_player_s_card(records_server):
    from quatro_tui.app import Join, QuatroApp
    from quatro_tui.screens.lobby import LobbyScreen
    from quatro_tui.screens.records import LeaderboardScreen, PlayerCardScreen

    async def body():
        app = QuatroApp(Join("127.0.0.1", records_server.port, "ann"), person_key=lambda name: ANN_KEY)
        async with app.run_test(size=(100, 30)) as pilot:
            await until(lambda: isinstance(app.screen, LobbyScreen) and app.conn is not None, what="lobby")
            await pilot.pause()
            await pilot.press("l")
            await until(
                lambda: isinstance(app.screen, LeaderboardScreen) and app.screen.standings is not None, what="board"
            )
            board = app.screen
            assert board.standings.game == "quatro" and board.standings.total == 4
            names = [s.name for s in board.standings.entries]
            assert set(names) == {"ann", "expert bot", "normal bot", "easy bot"}
            assert board.query_one(DataTable).row_count == 4
            assert "Leaderboard: Quatro  (1-4 of 4)" in _text(board, "#board-title")
            assert [s.rating for s in board.standings.entries] == sorted(
                (s.rating for s in board.standings.entries), reverse=True
            )

            await pilot.press("g")  # the other game the server hosts
            await until(lambda: board.standings is not None and board.standings.game == "quarto", what="quarto board")
            assert [s.name for s in board.standings.entries] == ["ann", "normal bot"]

            await pilot.press("i")  # the highlighted player's card: the top of the board
            await until(lambda: isinstance(app.screen, PlayerCardScreen) and app.screen.card is not None, what="card")
            card = app.screen.card
            assert card.name == "ann" and {r.game for r in card.games} == {"quatro", "quarto"}
            await pilot.press("escape")
            await until(lambda: app.screen is board, what="back on the board")
            await pilot.press("g")
            await until(lambda: board.standings.game == "quatro", what="quatro again")
            bottom = board.standings.entries[-1]
            await pilot.press("down", "down", "down", "enter")  # enter on a row opens its card too
            await until(
                lambda: isinstance(app.screen, PlayerCardScreen) and app.screen.card is not None, what="bot card"
            )
            assert app.screen.card.person == bottom.person and app.screen.card.bot
            await pilot.press("escape", "escape")
            await until(lambda: isinstance(app.screen, LobbyScreen), what="lobby again")

            await pilot.press("i")  # one's own card
            await until(
                lambda: isinstance(app.screen, PlayerCardScreen) and app.screen.card is not None, what="own card"
            )
            text = _text(app.screen, "#card-body")
            assert "ann  (you)" in text and "Quatro: #" in text and "4 matches, 2 won" in text
            assert "calls right 8" in text and "counters right 4" in text and "games won 6" in text
            await pilot.press("escape")
            await pilot.press("ctrl+q")

    run(body)


def test_a_table_made_friendly_in_the_create_row_shows_so_in_the_lobby(records_server):
    from quatro_tui.app import Join, QuatroApp
    from quatro_tui.screens.lobby import LobbyScreen

    async def body():
        app = QuatroApp(Join("127.0.0.1", records_server.port, "ann"), person_key=lambda name: ANN_KEY)
        async with app.run_test(size=(100, 30)) as pilot:
            await until(lambda: isinstance(app.screen, LobbyScreen) and app.conn is not None, what="lobby")
            lobby = app.screen
            await pilot.pause()
            lobby.query_one("#rated", Select).value = "friendly"
            lobby.query_one(DataTable).focus()
            await pilot.press("c")
            await until(lambda: app.game.seating is not None, what="seated")
            reply = await app.request(m.ListTables())
            assert isinstance(reply, m.Ok) and isinstance(reply.payload, m.Tables)
            assert [t.rated for t in reply.payload.tables] == [False]
            await pilot.press("ctrl+q")

    run(body)


def test_i_on_an_empty_leaderboard_opens_one_s_own_card_and_the_note_says_why_it_is_empty(tmp_path):
    """A new server's board is empty: ``i`` did nothing at all, under a note that named "the highlighted player's
    card". It opens one's own card (no rated match yet, and how to get one), and the note says what the board
    waits for."""
    from quatro_tui.app import Join, QuatroApp
    from quatro_tui.screens.lobby import LobbyScreen
    from quatro_tui.screens.records import LeaderboardScreen, PlayerCardScreen

    server: DoorProcess = start_server(tmp_path, [], (), tmp_path / "data", "quatro join 127.0.0.1:", "its port")

    async def body():
        app = QuatroApp(Join("127.0.0.1", server.port, "ann"), person_key=lambda name: ANN_KEY)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, LobbyScreen) and app.conn is not None, what="lobby")
            await pilot.pause()
            await pilot.press("l")
            await until(
                lambda: isinstance(app.screen, LeaderboardScreen) and app.screen.standings is not None, what="board"
            )
            board = app.screen
            assert board.standings.total == 0 and "(nobody yet)" in _text(board, "#board-title")
            note = _text(board, "#board-note")
            assert "Nobody has a rated match" in note and "i: your own card" in note and "highlighted" not in note
            await pilot.press("i")
            await until(
                lambda: isinstance(app.screen, PlayerCardScreen) and app.screen.card is not None, what="own card"
            )
            text = _text(app.screen, "#card-body")
            assert "ann  (you)" in text and "No rated match finished yet" in text
            await pilot.press("escape")
            await until(lambda: app.screen is board, what="back on the board")
            await pilot.press("ctrl+q")

    try:
        run(body)
    finally:
        server.stop()
