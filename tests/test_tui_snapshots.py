"""SVG snapshots of every screen, at 80×24 and at a larger size, for 4, 6 and 8 players.

Each screen is built from a hand-made view with a frozen clock (``helpers.snapshot_games``), so the pictures are
stable. After a deliberate change of the drawing: ``pytest tests/test_tui_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

import pytest

from helpers.snapshot_games import over_game, reveal_game, room_game, round_game, signing_game, tables
from quatro_tui.app import QuatroApp

SIZES = {"80x24": (80, 24), "120x36": (120, 36)}
GAMES = {
    "room": room_game,
    "signing": signing_game,
    "table": round_game,
    "reveal": reveal_game,
    "over": over_game,
}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("players", [4, 6, 8])
@pytest.mark.parametrize("screen", GAMES)
def test_screen(snap_compare, screen, players, size):
    assert snap_compare(QuatroApp(game=GAMES[screen](players)), terminal_size=SIZES[size])


@pytest.mark.parametrize("size", SIZES)
def test_table_with_a_vote_running(snap_compare, size):
    assert snap_compare(QuatroApp(game=round_game(4, vote=True)), terminal_size=SIZES[size])


def test_table_in_ascii(snap_compare):
    assert snap_compare(QuatroApp(game=round_game(4), ascii_only=True), terminal_size=(80, 24))


def test_signing_in_ascii(snap_compare):
    """The footer spells out its keys ("enter", not a return symbol)."""
    assert snap_compare(QuatroApp(game=signing_game(4), ascii_only=True), terminal_size=(80, 24))


def test_a_dialog_in_ascii(snap_compare):
    game = round_game(4, hand=("KS", "KH", "KD", "KC"))
    assert snap_compare(QuatroApp(game=game, ascii_only=True), press=["space"], terminal_size=(80, 24))


def test_table_with_cards_selected(snap_compare):
    assert snap_compare(QuatroApp(game=round_game(4)), press=["a", "right", "up"], terminal_size=(80, 24))


@pytest.mark.parametrize("key", ["space", "question_mark", "p"])
def test_dialogs_over_the_table(snap_compare, key):
    game = round_game(4, hand=("KS", "KH", "KD", "KC"))
    assert snap_compare(QuatroApp(game=game), press=[key], terminal_size=(80, 24))


def test_counter_asks_the_team_with_six(snap_compare):
    app = QuatroApp(game=round_game(6))
    app.send = lambda body: None
    assert snap_compare(app, press=["x"], terminal_size=(80, 24))


LOBBY_TABLES = [
    {
        "table": 1,
        "game": "quatro",
        "players": 4,
        "taken": 2,
        "bots": 1,
        "phase": "lobby",
        "timing": "standard",
        "password": False,
        "scores": [0, 0],
        "names": ["ann", "normal-bot-1", "", ""],
        "bot_seats": [1],
        "idle_s": 4,
    },
    {
        "table": 2,
        "game": "quatro",
        "players": 8,
        "taken": 8,
        "bots": 5,
        "phase": "playing",
        "timing": "fast",
        "password": True,
        "scores": [1, 3, 0, 2],
        "names": ["zoë", "hard-bot-1", "bartholomew", "hard-bot-3", "hard-bot-4", "cid", "hard-bot-6", "hard-bot-7"],
        "bot_seats": [1, 3, 4, 6, 7],
        "idle_s": 2400,
    },
    {
        "table": 3,
        "game": "quarto",
        "players": 2,
        "taken": 2,
        "bots": 1,
        "phase": "playing",
        "timing": "standard",
        "password": False,
        "scores": [1, 2],
        "names": ["dee", "perfect-bot-1"],
        "bot_seats": [1],
        "idle_s": 12,
    },
]


@pytest.mark.parametrize("size", SIZES)
def test_lobby(snap_compare, size):
    from quatro_tui.screens.lobby import LobbyScreen

    app = QuatroApp()
    app.tables = tables(*LOBBY_TABLES)

    async def open_lobby(pilot):
        await pilot.app.push_screen(LobbyScreen())
        await pilot.pause()

    assert snap_compare(app, run_before=open_lobby, terminal_size=SIZES[size])


@pytest.mark.parametrize("ascii_only", [False, True])
def test_connection_lost_covers_the_table_with_the_ways_on(snap_compare, ascii_only):
    app = QuatroApp(game=round_game(4), ascii_only=ascii_only)

    async def lose(pilot) -> None:
        app.show_link(
            "The connection to the server was lost.",
            "The server closed the connection.\nTrying again in 0.5s (attempt 2).",
            retrying=True,
        )
        await pilot.pause()

    assert snap_compare(app, run_before=lose, terminal_size=(80, 24))


def test_quitting_mid_round_asks(snap_compare):
    from quatro_tui.screens.link import ConfirmQuit

    app = QuatroApp(game=round_game(4))

    async def ask(pilot) -> None:
        app.push_screen(ConfirmQuit(private=False))
        await pilot.pause()

    assert snap_compare(app, run_before=ask, terminal_size=(80, 24))
