"""Quarto through the whole client over real TCP: ``quatro play --game quarto`` plays a match against ``perfect``
on a private server, and the lobby lists, creates and opens Quarto tables beside Quatro's."""

from __future__ import annotations

import random

import pytest
from textual.widgets import DataTable, Select

from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quarto.contract import Phase

from helpers.quarto_tui import piece_offset, square_offset
from helpers.tui import Player, armed, patient_timing, quatro_server, run, until  # noqa: F401 - fixtures
from quatro_tui.app import Join, Play, QuatroApp
from quatro_tui.games.quarto.screen import QuartoScreen
from quatro_tui.games.quarto.widgets import QuartoBoard, QuartoPool, QuartoTurn
from quatro_tui.screens.lobby import LobbyScreen
from quatro_tui.screens.room import RoomScreen
from test_tui_ascii import screen_text
from test_tui_quarto import keys_for

pytestmark = pytest.mark.timeout(240)


async def play_a_move(app: QuatroApp, pilot, screen: QuartoScreen, rng: random.Random, how: str) -> None:
    """Choose a legal action and make it by typing, by the arrows, or by the mouse; wait for the server's update."""
    view = screen.view
    assert view is not None
    action = rng.choice(q.legal(view))
    if how == "mouse" and isinstance(action, q.Place):
        await pilot.click(QuartoBoard, offset=square_offset(action.square), times=2)  # choose, then confirm
    elif how == "mouse" and isinstance(action, q.Give):
        await pilot.click(QuartoPool, offset=piece_offset(action.piece), times=2)
    else:
        await pilot.press(*keys_for(action, screen, by_arrows=how == "arrows", rng=rng))
    try:
        await until(lambda: screen.view is not view and not screen.waiting, what=f"the server's answer to {action}")
    except AssertionError:
        print(how, action, screen.waiting, screen.picture.news, screen.picture.typed, list(app.game.feed)[-5:])
        print(screen_text(app))
        raise


def test_play_quarto_plays_a_whole_match_against_perfect_over_tcp(patient_timing):
    async def body():
        app = QuatroApp(Play(players=2, level="perfect", timing=patient_timing, name="ann", game="quarto"))
        rng = random.Random(7)
        ways = ["typed", "arrows", "mouse"]
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, QuartoScreen) and app.screen.view is not None, what="the board")
            screen = app.screen
            assert isinstance(screen, QuartoScreen)
            assert [s.bot for s in screen.view.seats] == [False, True]
            assert screen.picture.names[1].startswith("perfect")  # the bot's name, from the table push
            # The screen replaced the room under the player's fingers: its keys wait a moment (guard.py).
            await until(lambda: screen.is_mounted, what="the board on screen")
            await pilot.pause()
            await armed(app)
            moves = 0
            while screen.view.phase is not Phase.OVER:
                view = screen.view
                if view.phase is Phase.BETWEEN:
                    await pilot.press("n")
                    await until(lambda: screen.view.phase is not Phase.BETWEEN, what="the next game")
                elif q.legal(view):
                    await play_a_move(app, pilot, screen, rng, ways[moves % 3])
                    moves += 1
                else:
                    await until(lambda: screen.view is not view, timeout=30, what="the bot's move")
            view = screen.view
            assert view.game == view.games == 4 and sum(view.scores) + view.draws == 4
            assert "Match over" in str(screen.query_one(QuartoTurn).render())
            assert not any("Not done" in line for line in app.game.feed)  # no refusal, ever
            assert app.game.kind == "quarto" and not app.in_match()
            await pilot.press("ctrl+q")

    run(body, timeout=220)


def test_the_lobby_lists_and_creates_both_games(quatro_server):
    async def body():
        watcher = await Player(quatro_server, "watcher").start()
        app = QuatroApp(Join("127.0.0.1", quatro_server, "ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            lobby = app.screen
            assert "quarto" in app.games and "quatro" in app.games  # the server's hello says which it hosts
            game = lobby.query_one("#game", Select)
            await until(
                lambda: bool(game.query("#label")), what="the game choice drawn"
            )  # a Select's value needs its label
            game.value = "quarto"
            await until(lambda: lobby.query_one("#players", Select).value == 2, what="two seats")  # Quarto is for two
            await pilot.press("c")
            await until(lambda: isinstance(app.screen, RoomScreen), what="the Quarto table's room")
            text = await until(
                lambda: "Quarto, 2 seats" in screen_text(app) and screen_text(app), what="the room drawn"
            )
            assert "team" not in text and "QUARTO" in text
            # Another client's lobby lists the table as Quarto.
            reply = await watcher.request("list_tables")
            quarto_table = app.game.seating.table
            mine = [t for t in reply["tables"] if t["table"] == quarto_table]
            assert mine and mine[0]["game"] == "quarto" and mine[0]["players"] == 2
            await pilot.press("b")  # a bot: the level question offers Quarto's own levels, perfect first in line
            await until(lambda: "perfect" in screen_text(app) and "expert" not in screen_text(app), what="the levels")
            await pilot.press("enter")
            await until(lambda: app.game.seating and all(s.taken for s in app.game.seating.seats), what="the bot")
            await pilot.press("s")
            await until(lambda: isinstance(app.screen, QuartoScreen) and app.screen.view is not None, what="the board")
            assert "QUARTO" in screen_text(app)
            await pilot.press("ctrl+q")
            if not isinstance(app.screen, QuartoScreen):
                await pilot.press("y")

        # Another player's lobby lists it as Quarto; a Quatro table created there sits beside it.
        app = QuatroApp(Join("127.0.0.1", quatro_server, "bob"))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            table = app.screen.query_one(DataTable)

            def rows() -> dict[str, str]:
                return {str(table.get_row_at(i)[0]): str(table.get_row_at(i)[1]) for i in range(table.row_count)}

            await until(
                lambda: rows().get(str(quarto_table)) == "Quarto", what=f"table {quarto_table} listed as Quarto"
            )
            await pilot.press("c")
            await until(lambda: isinstance(app.screen, RoomScreen), what="the Quatro table's room")
            assert app.game.kind == "quatro" and app.game.seating.players == 4
            reply = await watcher.request("list_tables")
            games = {t["table"]: t["game"] for t in reply["tables"]}
            assert games[quarto_table] == "quarto" and games[app.game.seating.table] == "quatro"
            await pilot.press("ctrl+q")
        await watcher.close()

    run(body)


def test_the_create_row_keeps_the_players_choices_after_a_visit_to_a_table(quatro_server):
    async def body():
        app = QuatroApp(Join("127.0.0.1", quatro_server, "ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            lobby = app.screen
            await until(lambda: bool(lobby.query_one("#game", Select).query("#label")), what="the choices drawn")
            lobby.query_one("#game", Select).value = "quatro"
            lobby.query_one("#players", Select).value = 6
            lobby.query_one("#rated", Select).value = "friendly"
            await pilot.pause()
            await pilot.press("c")
            await until(lambda: isinstance(app.screen, RoomScreen), what="the room")
            assert app.game.seating.players == 6
            await pilot.press("l")
            await until(lambda: isinstance(app.screen, LobbyScreen) and app.screen is not lobby, what="the lobby again")
            again = app.screen
            await until(
                lambda: bool(again.query("#players")) and bool(again.query_one("#players").query("#label")),
                what="the create row drawn",
            )
            assert again.query_one("#players", Select).value == 6, (
                app.create_choices,
                again.query_one("#players", Select).value,
            )
            assert again.query_one("#rated", Select).value == "friendly"
            await pilot.press("ctrl+q")

    run(body)


def test_a_server_gone_mid_game_shows_the_ways_on_and_a_restart_says_the_seat_is_lost(tmp_path):
    """Quarto tables live in the server's memory only: after a restart the seat cannot come back (protocol 17),
    and the client says so, with the lobby as the way on."""
    from quatro_shared import messages as m

    from helpers.tui import timing_file
    from quatro_tui.screens.link import LinkScreen
    from test_tui_manners import TELLS_WITHIN, _free_port, _serve

    port, timing = _free_port(), str(timing_file(tmp_path))
    server = _serve(port, timing)

    async def body():
        nonlocal server
        app = QuatroApp(Join("127.0.0.1", port, "ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            assert isinstance(await app.request(m.CreateTable(game="quarto")), m.Ok)
            await app.request(m.AddBot(level="random"))
            await app.request(m.Start())
            await until(lambda: isinstance(app.screen, QuartoScreen) and app.screen.view is not None, what="the board")
            server.kill()
            server.wait()
            await until(lambda: isinstance(app.screen, LinkScreen), timeout=TELLS_WITHIN, what="the trouble told")
            told = "\n".join(str(w.render()) for w in app.screen.query("Static"))
            assert "connection to the server was lost" in told and "back to the lobby" in told, told
            server = _serve(port, timing)
            await until(
                lambda: isinstance(app.screen, LinkScreen) and app.screen.title_text == "Your seat is gone.",
                timeout=15,
                what="the seat lost",
            )
            await pilot.press("l")
            await until(lambda: isinstance(app.screen, LobbyScreen), timeout=15, what="the lobby after the restart")
            await pilot.press("ctrl+q")

    try:
        run(body)
    finally:
        server.kill()
        server.wait()


def test_a_closed_client_comes_back_to_its_quarto_seat(quatro_server):
    """``quatro join`` remembers the seat's secret; the next run rejoins and the board is as it was (R19's way)."""
    from quatro_shared import messages as m

    async def body():
        seats: list[tuple[int, str]] = []
        app = QuatroApp(Join("127.0.0.1", quatro_server, "ann"), remember_seat=lambda t, s, n: seats.append((t, s)))
        async with app.run_test(size=(80, 24)):
            await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            await app.request(m.CreateTable(game="quarto"))
            await app.request(m.AddBot(level="random"))
            await app.request(m.Start())
            await until(lambda: isinstance(app.screen, QuartoScreen) and app.screen.view is not None, what="the board")
            if q.legal(app.screen.view):  # this seat starts: give, and let the bot answer
                app.screen.act(q.legal(app.screen.view)[0])  # as a confirmed move hands it over
                await until(lambda: app.screen.view.moves, what="a move")
            moves = app.screen.view.moves
            await app.conn.close()
            app.exit()
        table, secret = seats[-1]
        back = QuatroApp(Join("127.0.0.1", quatro_server, "ann", rejoin_table=table, rejoin_secret=secret))
        async with back.run_test(size=(80, 24)):
            await until(
                lambda: isinstance(back.screen, QuartoScreen) and back.screen.view is not None, what="the board"
            )
            assert back.screen.view.moves[: len(moves)] == moves
            assert back.game.kind == "quarto"
            await back.conn.close()
            back.exit()

    run(body)


def test_quatro_play_game_quarto_in_tmux_with_a_plain_locale(tmp_path, tmux):
    """The command itself in a real terminal, LANG=C: the board draws in ASCII (no box drawing, pieces as ``(#)``),
    a move typed as a player would is made and seen, and ctrl+q asks before leaving the match."""
    import os
    import shlex
    import sys
    import uuid

    from helpers.terminal import quit_with_ctrl_q, wait_for
    from helpers.tui import timing_file

    session = f"quarto-e2e-{uuid.uuid4().hex[:8]}"
    command = " ".join(
        [
            "env",
            f"XDG_CONFIG_HOME={shlex.quote(str(tmp_path))}",
            "LANG=C",
            "LC_ALL=C",
            shlex.quote(sys.executable),
            "-m",
            "quatro_tui",
            "play",
            "--game",
            "quarto",
            "--timing",
            shlex.quote(str(timing_file(tmp_path))),
            "--name",
            "tess",
        ]
    )
    tmux("new-session", "-d", "-s", session, "-x", "80", "-y", "24", "-c", os.getcwd(), command)
    try:
        text = wait_for(
            tmux,
            session,
            lambda t: "pool:" in t and ("You start" in t or "yours to place" in t),
            "the Quarto board, this seat to act",
            timeout=30,
        )
        assert "+-----+" in text and "(#)" in text and text.isascii(), text
        import time

        time.sleep(1.0)  # the board replaced the room: its keys are armed after a moment (guard.py)
        # The move shows in the move list (the news line soon tells the bot's answer instead).
        if "You start" in text:
            tmux("send-keys", "-t", session, "s", "l", "q", "h", "Enter")  # a piece by its letters
            wait_for(tmux, session, lambda t: " 1 SLQH" in t, "our give")
        else:
            tmux("send-keys", "-t", session, "b", "3", "Enter")  # a square by its name
            wait_for(tmux, session, lambda t: " 2 b3" in t, "our placement")
        tmux("send-keys", "-t", session, "C-q")  # mid-match: asks first
        wait_for(tmux, session, lambda t: "Leave the match?" in t, "the question before quitting")
        quit_with_ctrl_q(tmux, session)
    finally:
        tmux("kill-session", "-t", session)
