"""``quatro play`` and ``quatro join`` through the app: a private server, bots, the table on screen, a swap."""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import DataTable, Input, Select

from quatro_shared import protocol as p
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.views import Phase
from quatro_shared.levels import PLAY_LEVEL

from helpers.tui import Player, armed, patient_timing, quatro_server, run, until  # noqa: F401 - fixtures
from quatro_server.games.quatro.bots import LEVELS
from quatro_server.net.addresses import machine_interfaces, reachable_addresses
from quatro_tui.app import Join, Play, QuatroApp
from quatro_tui.cli import parser, play_seats
from quatro_tui.games.quatro.screens.signing import SigningScreen
from quatro_tui.games.quatro.screens.table import TableScreen
from quatro_tui.screens.lobby import LobbyScreen
from quatro_tui.screens.room import BotLevel, RoomScreen
from quatro_tui.settings import RememberedSeat, Settings, config_path, default_name, wants_ascii
from test_tui_names import screen_text

pytestmark = pytest.mark.timeout(60)


async def swap_with_keys(app, pilot) -> None:
    """Press a then q until the server takes a swap (a bot may grab the card first: R10, then try again).

    A bot may also end the round with a call: then the host (us) starts the next one at once, and is ready."""
    for _ in range(20):
        if app.game.view.phase is Phase.BREAK:
            await armed(app)
            await pilot.press("n")
        if app.game.view.phase is Phase.SIGNING:
            await armed(app)
            await pilot.press("enter")
        await until(lambda: app.game.view.phase is Phase.ROUND and app.game.view.hand, what="a round")
        await until(lambda: isinstance(app.screen, TableScreen), what="the table")
        await armed(app)
        before = sum(isinstance(ev, e.Swapped) and ev.seat == app.game.me for ev in app.game.events)
        await until(lambda: app.game.view.swap_wait_ms == 0 or app.game.elapsed() * 1000 > app.game.view.swap_wait_ms)
        await pilot.press("a", "q")
        try:
            await until(
                lambda: sum(isinstance(ev, e.Swapped) and ev.seat == app.game.me for ev in app.game.events) > before,
                timeout=2,
                what="our swap",
            )
            return
        except AssertionError:
            continue
    raise AssertionError("no swap went through")


def test_play_starts_a_private_server_seats_bots_and_opens_the_table(patient_timing):
    async def body():
        app = QuatroApp(Play(players=4, level="normal", timing=patient_timing, name="ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(
                lambda: isinstance(app.screen, (SigningScreen, TableScreen)) and app.game.view, what="the match"
            )
            assert [s.bot for s in app.game.view.seats] == [False, True, True, True]
            if isinstance(app.screen, SigningScreen):
                await armed(app)
                await pilot.press("enter")
            await until(lambda: isinstance(app.screen, TableScreen) and app.game.view.hand, what="the table")
            await swap_with_keys(app, pilot)
            assert any(line.startswith("you put down") for line in app.game.feed)
            process = app.server.process
            await pilot.press("ctrl+q")
        assert app.server.process is None
        assert await asyncio.to_thread(process.wait, 10) is not None  # the private server is gone with the app

    run(body)


def test_play_with_an_unknown_bot_level_falls_back_to_normal_bots(patient_timing):
    async def body():
        app = QuatroApp(Play(players=4, level="hard", timing=patient_timing, name="ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: app.game.view is not None, what="the match")
            if "hard" not in LEVELS:
                assert any("normal" in line for line in app.game.feed)
            assert all(app.game.seating.seats[i].bot in ("hard", "normal") for i in (1, 2, 3))
            await pilot.press("ctrl+q")

    run(body)


@pytest.mark.parametrize("stem", ["brisk", "a-timing-file-whose-name-is-longer-than-thirty-two-characters"])
def test_play_with_a_timing_file(tmp_path, stem):
    timing = tmp_path / f"{stem}.toml"
    timing.write_text("sign_window = 300.0\nround_length = 400\npulse_shown = 0.7\n")

    async def body():
        app = QuatroApp(Play(players=4, level="normal", timing=str(timing), name="ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(
                lambda: app.game.seating is not None and app.game.view is not None or app.return_code is not None,
                what="the match",
            )
            assert app.return_code is None, app.return_value  # the table was created, whatever the file's name
            assert app.game.seating.timing_name == stem
            assert app.game.seating.timing["round_length"] == 400  # the file's durations, not a profile's
            assert app.game.timing("pulse_shown", 1.0) == 0.7  # pulses stay on screen as long as the table says
            await pilot.press("ctrl+q")

    run(body)


def test_a_timing_file_is_left_to_the_private_servers_default():
    """``create_table`` names only the built-in profiles: the server started with ``--timing FILE`` defaults to it."""
    assert QuatroApp.table_timing("fast") == "fast"
    assert QuatroApp.table_timing("standard") == "standard"
    assert QuatroApp.table_timing("/tmp/" + "x" * 40 + ".toml") is None


def test_play_open_leaves_a_seat_shows_the_address_and_starts_when_it_fills(patient_timing):
    async def body():
        app = QuatroApp(Play(players=4, level="normal", timing=patient_timing, name="ann", open=1))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, RoomScreen) and app.game.seating, what="the room")
            await until(lambda: sum(s.taken for s in app.game.seating.seats) == 3, what="the bots")
            assert app.join_addresses and all(":" in a for a in app.join_addresses)
            # The machine's LAN addresses, read from its interfaces, come first; loopback last.
            lan = reachable_addresses(machine_interfaces(), ipv6=False)
            assert [a.rsplit(":", 1)[0] for a in app.join_addresses] == lan
            assert app.join_addresses[-1].startswith("127.0.0.1:")
            port = int(app.join_addresses[-1].rsplit(":", 1)[1])
            bob = await Player(port, "bob").start()
            await bob.act(p.JOIN, table=app.game.seating.table)
            await until(lambda: app.game.view is not None and app.game.view.phase is not Phase.LOBBY, what="the start")
            assert not app.game.view.seats[bob.conn.seat.seat].bot
            await bob.close()
            await pilot.press("ctrl+q")

    run(body)


def test_join_a_table_by_id(quatro_server):
    async def body():
        ann = await Player(quatro_server, "ann").start()
        created = await ann.act(p.CREATE_TABLE, players=4)
        app = QuatroApp(Join("127.0.0.1", quatro_server, "bob", table=created["table"]))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, RoomScreen) and app.game.my_seat == 1, what="the room")
            await until(lambda: app.game.seating.seats[1].name == "bob", what="the seating")
            await pilot.press("ctrl+q")
        await ann.close()

    run(body)


def test_the_lobby_lists_tables_as_they_come_and_enter_joins_one(quatro_server):
    async def body():
        app = QuatroApp(Join("127.0.0.1", quatro_server, "bob"))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            ann = await Player(quatro_server, "ann").start()
            created = await ann.act(p.CREATE_TABLE, players=6, password="pw")
            table = app.screen.query_one(DataTable)
            # Other tables may exist on the shared server: wait for ours, then put the cursor on it.
            await until(lambda: any(t.table == created["table"] for t in app.tables), what="the new table listed")
            await until(lambda: table.row_count == len(app.tables), what="the list drawn")
            row = next(i for i, t in enumerate(app.tables) if t.table == created["table"])
            table.move_cursor(row=row)
            app.screen.query_one("#password", Input).value = "pw"
            table.focus()
            await pilot.press("enter")
            await until(lambda: isinstance(app.screen, RoomScreen) and app.game.my_seat is not None, what="the room")
            assert app.game.seating.table == created["table"] and app.game.seating.players == 6
            await pilot.press("ctrl+q")
        await ann.close()

    run(body)


def test_the_host_seats_and_unseats_bots_with_keys_then_starts(quatro_server):
    async def body():
        app = QuatroApp(Join("127.0.0.1", quatro_server, "ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            await pilot.pause()
            await pilot.press("c")
            await until(lambda: isinstance(app.screen, RoomScreen) and app.game.is_host(), what="our room")
            bots = lambda: [s.bot for s in app.game.seating.seats if s.bot]  # noqa: E731
            # b asks the level: its number chooses one, enter the one highlighted (the server's default).
            await pilot.press("b")
            await until(lambda: isinstance(app.screen, BotLevel), what="the level question")
            await pilot.pause()
            assert "expert" in screen_text(app) and "random" not in screen_text(app)
            await pilot.press("3")
            await until(lambda: bots() == ["hard"], what="a hard bot")
            await until(lambda: isinstance(app.screen, RoomScreen), what="the room again")
            await until(lambda: "bot hard" in screen_text(app), what="the level on its seat")
            await pilot.press("b", "enter")
            await until(lambda: bots() == ["hard", "normal"], what="a normal bot")
            await pilot.press("b", "escape")
            await pilot.pause(0.3)
            assert bots() == ["hard", "normal"]  # escape adds none
            await pilot.press("r")
            await until(lambda: bots() == ["hard"], what="one bot removed")
            await pilot.press("s")
            await until(lambda: any("every seat" in line for line in app.game.feed), what="the refusal to start")
            await pilot.press("b", "1")
            await until(lambda: len(bots()) == 2, what="an easy bot")
            await pilot.press("b", "4")
            await until(lambda: sorted(bots()) == ["easy", "expert", "hard"], what="a full table")
            await pilot.press("s")
            await until(lambda: isinstance(app.screen, SigningScreen), what="the match")
            await pilot.press("ctrl+q")

    run(body)


def test_r19_join_comes_back_to_the_seat_it_remembers(quatro_server):
    async def body():
        ann = await Player(quatro_server, "ann").start()
        created = await ann.act(p.CREATE_TABLE, players=4)
        remembered = []
        app = QuatroApp(
            Join("127.0.0.1", quatro_server, "bob", table=created["table"]),
            remember_seat=lambda table, secret, name: remembered.append((table, secret)),
        )
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: remembered and app.game.my_seat == 1, what="the seat")
            await pilot.press("ctrl+q")
        table, secret = remembered[0]
        # A new client, no table asked for: straight back to the seat rather than to the lobby.
        again = QuatroApp(Join("127.0.0.1", quatro_server, "bob", rejoin_table=table, rejoin_secret=secret))
        async with again.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(again.screen, RoomScreen) and again.game.my_seat == 1, what="the same seat")
            assert again.conn.seat.secret == secret
            await pilot.press("ctrl+q")
        # A secret the server no longer knows: on to the lobby as if nothing was remembered.
        stale = QuatroApp(Join("127.0.0.1", quatro_server, "bob", rejoin_table=table, rejoin_secret="stale"))
        async with stale.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(stale.screen, LobbyScreen), what="the lobby")
            await pilot.press("ctrl+q")
        await ann.close()

    run(body)


def test_join_an_unreachable_server_says_so():
    async def body():
        app = QuatroApp(Join("127.0.0.1", 1, "bob"))
        async with app.run_test(size=(80, 24)):
            await until(lambda: app.return_code == 1, what="the app to give up")

    run(body)


# --- the command line and what it remembers ------------------------------------------------------------


def test_command_line_defaults():
    args = parser().parse_args(["play"])
    assert (args.game, args.timing, args.open) == ("quatro", "standard", 0)
    assert play_seats(args) == (4, PLAY_LEVEL) and PLAY_LEVEL == "easy"
    args = parser().parse_args(["join", "host:1234", "--table", "3", "--password", "pw"])
    assert (args.address, args.table, args.password) == ("host:1234", 3, "pw")


def test_settings_live_under_xdg_config_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert config_path() == tmp_path / "quatro" / "client.toml"
    Settings(server="box:7777", name='ann "the hand"').save()
    loaded = Settings.load()
    assert loaded == Settings(server="box:7777", name='ann "the hand"')
    assert default_name(loaded) == 'ann "the hand"'
    Settings(name="ann", keys={"call": "g", "hand-1": "z"}).save()
    assert Settings.load().keys == {"call": "g", "hand-1": "z"}
    Settings(server="box:7777", seats=[RememberedSeat("box:7777", 3, "ann", "s3cr3t")]).save()
    assert Settings.load().remembered_seat("box:7777", "ann") == RememberedSeat("box:7777", 3, "ann", "s3cr3t")
    assert Settings.load().remembered_seat("other:7777", "ann") is None
    assert config_path().stat().st_mode & 0o777 == 0o600  # it holds a seat secret
    config_path().write_text("not = [toml")
    assert Settings.load() == Settings()


def test_ascii_when_asked_or_when_the_locale_is_not_utf8():
    assert wants_ascii(True, {"LANG": "en_US.UTF-8"})
    assert wants_ascii(False, {"QUATRO_ASCII": "1", "LANG": "en_US.UTF-8"})
    assert wants_ascii(False, {"LANG": "C"})
    assert wants_ascii(False, {"LC_ALL": "en_US.ISO-8859-1", "LANG": "en_US.UTF-8"})
    assert not wants_ascii(False, {"LANG": "en_US.UTF-8"})
    assert not wants_ascii(False, {"LC_CTYPE": "C.utf8"})


def test_play_quarto_is_two_seats_against_a_perfect_bot_by_default():
    assert play_seats(parser().parse_args(["play", "--game", "quarto"])) == (2, "perfect")
    assert play_seats(parser().parse_args(["play", "--game", "quarto", "--level", "random"])) == (2, "random")
    assert play_seats(parser().parse_args(["play", "--game", "quarto", "--open", "1"])) == (2, "perfect")
    assert "no 'easy' bots" in str(play_seats(parser().parse_args(["play", "--game", "quarto", "--level", "easy"])))
    assert "no 'perfect' bots" in str(play_seats(parser().parse_args(["play", "--level", "perfect"])))
    assert "--open takes 0 to 1" in str(play_seats(parser().parse_args(["play", "--game", "quarto", "--open", "2"])))


def test_play_takes_each_game_s_own_table_sizes():
    """``--players`` offers every game's sizes; a game of one size takes its own, a size a game has not is refused."""
    assert play_seats(parser().parse_args(["play", "--game", "quarto", "--players", "2"])) == (2, "perfect")
    assert play_seats(parser().parse_args(["play", "--players", "6"]))[0] == 6
    assert play_seats(parser().parse_args(["play"]))[0] == 4
    assert play_seats(parser().parse_args(["play", "--players", "2"])) == "Quatro is played at 4, 6, 8 seats, not 2"


def test_play_back_to_the_lobby_at_the_match_end_shows_the_private_servers_lobby(tmp_path):
    """``l back to the lobby`` after a ``quatro play`` match is the lobby of its server, where the player makes the next
    table themselves: not a new match begun behind a blank screen."""
    from helpers.tui import PATIENT_TIMING
    from quatro_tui.games.quatro.screens.dialogs import ConfirmCall
    from quatro_tui.games.quatro.screens.reveal import MatchEndScreen

    timing = tmp_path / "quick.toml"
    timing.write_text("".join(f"{k} = {v}\n" for k, v in {**PATIENT_TIMING, "target_score": 1}.items()))

    async def body():
        app = QuatroApp(Play(players=4, level="easy", timing=str(timing), name="ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(
                lambda: isinstance(app.screen, (SigningScreen, TableScreen)) and app.game.view, what="the match"
            )
            if isinstance(app.screen, SigningScreen):
                await armed(app)
                await pilot.press("enter")
            await until(lambda: isinstance(app.screen, TableScreen) and app.game.view.hand, what="the round")
            await armed(app)
            await pilot.press("space")  # right or wrong, a team scores the one point the match is played to
            if isinstance(app.screen, ConfirmCall):
                await pilot.press("y")
            await until(lambda: isinstance(app.screen, MatchEndScreen), what="the match end")
            server, conn = app.server.process, app.conn
            await armed(app)
            await pilot.press("l")
            await until(lambda: isinstance(app.screen, LobbyScreen), timeout=5, what="the lobby")
            assert app.server.process is server and app.conn is conn  # the same private server, the same link
            assert app.game.view is None and app.game.seating is None
            await pilot.pause(1.0)
            assert isinstance(app.screen, LobbyScreen)  # no match begins by itself
            await pilot.press("c")  # the next table is the player's to make
            await until(lambda: isinstance(app.screen, RoomScreen) and app.game.is_host(), what="a new table's room")
            await pilot.press("ctrl+q")

    run(body)


def test_join_back_to_the_lobby_at_the_match_end_stays_on_the_same_connection(tmp_path):
    """``l`` at a match end on a server joined with ``quatro join``: the lobby at once, on the link already open (a
    new connection and hello took two seconds with nothing on screen, and keys typed meanwhile landed elsewhere)."""
    from helpers.tui import PATIENT_TIMING
    from quatro_tui.games.quatro.screens.dialogs import ConfirmCall
    from quatro_tui.games.quatro.screens.reveal import MatchEndScreen
    from quatro_tui.local_server import LocalServer

    timing = tmp_path / "quick.toml"
    timing.write_text("".join(f"{k} = {v}\n" for k, v in {**PATIENT_TIMING, "target_score": 1}.items()))
    server = LocalServer(str(timing))
    server.start()

    async def body():
        app = QuatroApp(Join("127.0.0.1", server.port, "ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            await pilot.pause()  # let the lobby's widgets finish mounting
            app.screen.query_one("#timing", Select).value = "quick"  # the file's profile: a match of one point
            await pilot.press("c")
            await until(lambda: isinstance(app.screen, RoomScreen) and app.game.is_host(), what="the room")
            for _ in range(3):
                await pilot.press("b")
                await pilot.pause(0.2)
                await pilot.press("enter")
                await pilot.pause(0.2)
            await until(lambda: all(s.taken for s in app.game.seating.seats), what="three bots")
            await pilot.press("s")
            await until(
                lambda: isinstance(app.screen, (SigningScreen, TableScreen)) and app.game.view, what="the match"
            )
            if isinstance(app.screen, SigningScreen):
                await armed(app)
                await pilot.press("enter")
            await until(lambda: isinstance(app.screen, TableScreen) and app.game.view.hand, what="the round")
            await armed(app)
            await pilot.press("space")
            await pilot.pause(0.3)
            if isinstance(app.screen, ConfirmCall):
                await pilot.press("y")
            await until(lambda: isinstance(app.screen, MatchEndScreen), what=f"the match end ({app.screen})")
            conn = app.conn
            await armed(app)
            await pilot.press("l")
            await until(lambda: isinstance(app.screen, LobbyScreen), timeout=5, what="the lobby")
            assert app.conn is conn, "back to the lobby reconnected"
            assert app.game.view is None and app.game.seating is None
            await pilot.press("ctrl+q")

    try:
        run(body)
    finally:
        server.stop()
