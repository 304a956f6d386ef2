"""A table that treats its players well: late keys that do nothing, signals written down, bells, plain words."""

from __future__ import annotations

from dataclasses import replace

import pytest

from quatro_shared.games.quatro.views import Phase

from helpers.snapshot_games import NOW, round_game, sent_fields, signing_game
from helpers.tui import quatro_server, run, until  # noqa: F401 - quatro_server is a fixture
from quatro_tui.app import QuatroApp
from quatro_tui.games.quatro.screens.dialogs import ConfirmCall
from quatro_tui.games.quatro.screens.reveal import RevealScreen
from quatro_tui.games.quatro.screens.signing import SigningScreen
from quatro_tui.games.quatro.screens.table import TableScreen
from quatro_tui.guard import KEY_GUARD, KeyGuard

pytestmark = pytest.mark.timeout(60)


def footer_key_disabled(screen, action: str) -> bool:
    """Whether the footer shows ``action``'s key dimmed (Textual marks it ``-disabled``)."""
    from textual.widgets._footer import FooterKey

    return any(key.action == action and key.has_class("-disabled") for key in screen.query(FooterKey))


def test_a_late_space_after_the_round_opens_calls_nothing(monkeypatch):
    """``enter`` readies at signing; the round opens; a ``space`` a moment later lands on the table: no call.
    The guard is stretched here so that a loaded machine cannot outlast it between two lines of the test."""
    guard = 3.0
    monkeypatch.setattr(KeyGuard, "guard", guard)

    async def body():
        game = signing_game(4)
        app = QuatroApp(game=game)
        sent: list[tuple[str, dict]] = []
        app.send = lambda body: sent.append(sent_fields(body))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, SigningScreen), what="signing")
            await pilot.press("enter")
            assert [kind for kind, _ in sent] == ["ready"]  # the team already has its sign
            game.apply(round_game(4).view, [], NOW)
            app.route()
            await until(lambda: isinstance(app.screen, TableScreen), what="the table")
            await pilot.pause()
            assert not app.screen.armed()
            assert footer_key_disabled(app.screen, "call"), "the call key looks armed while it is not"
            await pilot.press("space", "x", "a", "q", "c", "1", "v", "y")
            assert [kind for kind, _ in sent] == ["ready"]
            await until(lambda: app.screen.armed(), timeout=guard + 2, what="the keys armed")
            await pilot.pause()
            assert not footer_key_disabled(app.screen, "call"), "the call key still looks disarmed"
            await pilot.press("space")
            await until(lambda: [kind for kind, _ in sent] == ["ready", "call"], what="the call")

    run(body)


def test_a_late_n_at_the_reveal_starts_no_round_and_a_double_space_confirms_no_call(monkeypatch):
    monkeypatch.setattr(KeyGuard, "guard", 3.0)  # stretched: a loaded machine cannot outlast it

    async def body():
        game = round_game(4, hand=("KS", "KH", "KD", "KC"))
        app = QuatroApp(game=game)
        sent: list[str] = []
        app.send = lambda body: sent.append(body.kind)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, TableScreen), what="the table")
            await pilot.press("space", "space")  # one press too many on one's own four (R13's reminder)
            await until(lambda: isinstance(app.screen, ConfirmCall), what="the reminder")
            await pilot.pause()
            assert sent == [] and isinstance(app.screen, ConfirmCall)
            await pilot.press("escape")
            game.apply(replace(game.view, phase=Phase.BREAK), [], NOW)
            app.route()
            await until(lambda: isinstance(app.screen, RevealScreen), what="the reveal")
            await pilot.press("n")  # a vote's "no", pressed late
            await pilot.pause()
            assert sent == []

    run(body)


def test_a_guarded_screen_not_yet_mounted_is_not_armed():
    """A screen pushed but not yet mounted has not set its guard: its keys do not work yet, so a test (or anything)
    that waits for armed keys waits for the mount too, not for a moment in which a key is then dropped."""
    screen = SigningScreen()
    assert screen.guard > 0 and not screen.armed()
    screen.guard = 0
    assert not screen.armed()  # even unguarded, a screen not shown takes no keys


def test_the_first_screen_of_a_run_is_not_guarded():
    async def body():
        app = QuatroApp(game=round_game(4))
        async with app.run_test(size=(80, 24)):
            await until(lambda: isinstance(app.screen, TableScreen), what="the table")
            assert isinstance(app.screen, KeyGuard) and app.screen.armed()

    run(body)


# --- signals nobody misses ---------------------------------------------------------------------------------------


def test_a_pulse_appears_in_every_seats_feed_and_the_partners_sign_is_marked(quatro_server, monkeypatch):
    from quatro_shared.games.quatro import events as e
    from quatro_shared.games.quatro.signs import EMOJI

    from quatro_tui.app import Join
    from quatro_tui.games.quatro.table import QuatroTable
    from quatro_tui.games.quatro.widgets import SeatBox
    from test_tui_round import close_all, shown, sit_down

    monkeypatch.setattr(KeyGuard, "guard", 0.0)  # sit_down presses keys the moment each screen appears

    async def body():
        app = QuatroApp(Join("127.0.0.1", quatro_server, "ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            (bob, cid, dee), sign = await sit_down(app, pilot, quatro_server)
            decoy = "owl" if sign != "owl" else "fox"
            await bob.act("take_channel")
            await bob.act("choose_emoji", sign=decoy)
            await until(
                lambda: any(line.startswith(f"p1 showed {EMOJI[decoy]}") for line in app.game.feed),
                what="bob's pulse in the feed",
            )
            # cid, across the table, is the partner (R1): the team's sign, marked.
            await cid.act("take_channel")
            await cid.act("choose_emoji", sign=sign)
            marked = f"p2 showed {EMOJI[sign]} = YOUR SIGN!"
            await until(
                lambda: any(line.startswith(marked) for line in app.game.feed), what="the partner's sign, marked"
            )
            assert not any("YOUR SIGN" in line for line in app.game.feed if line.startswith("p1"))
            partner_box = next(box for box in app.screen.query(SeatBox) if box.seat == 2)
            await until(lambda: "YOUR SIGN" in shown(partner_box), what="the partner's seat marked")
            # Every seat got both pulses and words them, each from its own seat.
            await until(
                lambda: all(sum(isinstance(ev, e.Pulse) for ev in player.events) >= 2 for player in (bob, cid, dee)),
                what="the pulses at every seat",
            )
            for player in (bob, cid, dee):
                game = QuatroTable()
                game.seat(player.seating)
                game.apply(player.view, player.events, 0.0)
                assert any(
                    line.startswith(f"p1 showed {EMOJI[decoy]}") or line.startswith(f"you showed {EMOJI[decoy]}")
                    for line in game.feed
                ), (player.conn.name, list(game.feed))
                assert any(f"showed {EMOJI[sign]}" in line for line in game.feed)
            # Only cid's partner (ann) is told it is her sign; bob's team has another sign.
            bob_game = QuatroTable()
            bob_game.seat(bob.seating)
            bob_game.apply(bob.view, bob.events, 0.0)
            assert not any("YOUR SIGN" in line for line in bob_game.feed)
            await close_all([bob, cid, dee])
            await pilot.press("ctrl+q")

    run(body)


def test_the_latest_pulse_stays_on_its_seat_fading_until_the_next():
    from quatro_tui.games.quatro.widgets import SeatBox

    async def body():
        game = round_game(6)  # seat 2 pulsed an owl 0.3 s ago (a decoy); the partner (seat 3) our fox
        app = QuatroApp(game=game)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, TableScreen), what="the table")
            box = next(b for b in app.screen.query(SeatBox) if b.seat == 2)
            partner = next(b for b in app.screen.query(SeatBox) if b.seat == 3)
            assert "pulse" in str(box.render())
            game.clock = lambda: NOW + 7.0  # long after the moment on show
            box.redraw()
            partner.redraw()
            await pilot.pause()
            assert "7s ago" in str(box.render()) and "🦉" in str(box.render())
            assert "YOUR SIGN" in str(partner.render()) and "🦊" in str(partner.render())

    run(body)


@pytest.mark.parametrize("bell", [True, False])
def test_bell_writes_a_bel_when_the_partner_shows_the_sign_and_at_ones_own_four(bell):
    from quatro_shared.games.quatro import events as e

    from quatro_tui.connection import ServerUpdate

    async def body():
        game = round_game(4)  # the partner is seat 2, the team's sign a fox
        app = QuatroApp(game=game, bell=bell)
        async with app.run_test(size=(80, 24)) as pilot:
            written: list[str] = []
            app._driver.write = written.append
            view = game.view
            app.post_message(ServerUpdate(7, 10, False, [e.Pulse(1, "owl")], view, NOW))
            await pilot.pause()
            assert "\a" not in "".join(written)  # an opponent's pulse: no bell
            app.post_message(ServerUpdate(7, 11, False, [e.Pulse(2, "fox")], view, NOW))
            await pilot.pause()
            assert ("\a" in "".join(written)) is bell
            written.clear()
            app.post_message(ServerUpdate(7, 12, False, [e.Pulse(2, "fox")], view, NOW))
            await pilot.pause()
            assert "\a" not in "".join(written)  # the same signal repeated: once is enough
            four = replace(view, hand=("KS", "KH", "KD", "KC"))
            app.post_message(ServerUpdate(7, 13, False, [], four, NOW))
            await pilot.pause()
            assert ("\a" in "".join(written)) is bell
            assert any("four of a kind" in line for line in game.feed)

    run(body)


def test_bell_is_a_flag_and_a_remembered_setting(tmp_path, monkeypatch):
    from quatro_tui.cli import parser
    from quatro_tui.settings import Settings

    assert parser().parse_args(["play", "--bell"]).bell is True
    assert parser().parse_args(["play", "--no-bell"]).bell is False
    assert parser().parse_args(["join", "h"]).bell is None
    path = tmp_path / "client.toml"
    Settings(bell=True).save(path)
    assert Settings.load(path).bell is True
    Settings().save(path)
    assert Settings.load(path).bell is False


# --- always a way on -----------------------------------------------------------------------------------------------

#: How soon a client must show that its server is gone: a killed server's sockets close at once, so the
#: first failed read tells (the heartbeat's HEARTBEAT_TIMEOUT covers a silent one, tested with the connection).
TELLS_WITHIN = 5.0


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(port: int, timing: str, *extra: str):
    """A server on ``port``, without a journal: a restart forgets the tables (the client must find its seat gone,
    never race to rejoin a table restored from a journal shared with other runs)."""
    import socket
    import subprocess
    import sys
    import time

    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "quatro_server",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--timing",
            timing,
            "--log-level",
            "warning",
            "--no-journal",
            *extra,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return process
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise AssertionError("the server did not start")


def test_a_server_killed_mid_round_shows_what_happened_and_the_lobby_after_a_restart(tmp_path):
    import time

    from quatro_shared import messages as m
    from quatro_shared.games.quatro import actions as a

    from helpers.tui import timing_file
    from quatro_tui.app import Join
    from quatro_tui.screens.link import LinkScreen
    from quatro_tui.screens.lobby import LobbyScreen

    port, timing = _free_port(), str(timing_file(tmp_path))
    server = _serve(port, timing)

    async def body():
        nonlocal server
        app = QuatroApp(Join("127.0.0.1", port, "ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            assert isinstance(await app.request(m.CreateTable(4)), m.Ok)
            for _ in range(3):
                await app.request(m.AddBot())
            await app.request(m.Start())
            await until(lambda: app.game.view is not None and app.game.view.phase is Phase.SIGNING, what="signing")
            await app.request(a.PickSign("fox"))
            await app.request(a.Ready())
            await until(lambda: isinstance(app.screen, TableScreen), what="the round")
            server.kill()
            server.wait()
            killed = time.monotonic()
            await until(lambda: isinstance(app.screen, LinkScreen), timeout=TELLS_WITHIN, what="the trouble told")
            assert time.monotonic() - killed < TELLS_WITHIN
            told = "\n".join(str(w.render()) for w in app.screen.query("Static"))
            assert "connection to the server was lost" in told and "back to the lobby" in told, told
            assert "Errno" not in told and "[" not in told.split("\n")[0]
            # Restarted without a journal, so the seat is gone (with one the client would be back at its seat by itself).
            server = _serve(port, timing)
            await pilot.press("l")
            await until(lambda: isinstance(app.screen, LobbyScreen), timeout=15, what="the lobby after the restart")
            await pilot.press("ctrl+q")

    try:
        run(body)
    finally:
        server.kill()
        server.wait()


def test_nobody_serving_is_said_in_plain_words():
    app = QuatroApp(__import__("quatro_tui.app", fromlist=["Join"]).Join("127.0.0.1", 1, "ann"))

    async def body():
        async with app.run_test(size=(80, 24)):
            await until(lambda: app.return_code is not None, what="the app to give up")

    run(body)
    assert app.return_value == "quatro: Nobody is serving at 127.0.0.1:1. Is the server running?"


def test_quitting_mid_round_asks_first():
    from quatro_tui.screens.link import ConfirmQuit

    async def body():
        app = QuatroApp(game=round_game(4))

        class Link:
            async def close(self) -> None:
                pass

        app.conn = Link()  # type: ignore[assignment]
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, TableScreen), what="the table")
            await pilot.press("ctrl+q")
            await until(lambda: isinstance(app.screen, ConfirmQuit), what="the question")
            await pilot.press("n")
            await until(lambda: isinstance(app.screen, TableScreen), what="the table again")
            assert app.is_running
            await pilot.press("ctrl+q", "y")
            await until(lambda: not app.is_running, what="the app to quit")

    run(body)


@pytest.mark.parametrize("host", [True, False])
def test_at_the_match_end_the_host_plays_again_and_only_the_host_sees_the_key(host):
    from helpers.snapshot_games import over_game
    from quatro_tui.games.quatro.screens.reveal import MatchEndScreen

    async def body():
        game = over_game(4)
        if not host:
            game.apply(replace(game.view, host=1), [], NOW)
        app = QuatroApp(game=game)
        sent: list[str] = []
        app.send = lambda body: sent.append(body.kind)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, MatchEndScreen), what="the match end")
            await pilot.pause()
            footer = " ".join(str(key.render()) for key in app.screen.query("FooterKey"))
            assert ("play again" in footer) is host
            assert "back to the lobby" in footer
            await pilot.press("p")
            await pilot.pause()
            assert sent == (["rematch"] if host else [])

    run(body)


def test_the_guard_is_short_enough_not_to_be_felt():
    assert 0.3 < KEY_GUARD <= 1.0  # longer than a late key (the tmux test presses 0.1 s late), shorter than a reaction


# --- small and plain terminals -------------------------------------------------------------------------------------


@pytest.mark.parametrize("ascii_only", [False, True])
def test_below_the_smallest_size_a_notice_says_the_size_needed(ascii_only):
    from quatro_tui.screens.link import MIN_SIZE, TooSmall
    from test_tui_ascii import assert_ascii, screen_text

    async def body():
        app = QuatroApp(game=round_game(8), ascii_only=ascii_only)
        async with app.run_test(size=(60, 20)) as pilot:
            await until(lambda: isinstance(app.screen, TooSmall), what="the notice")
            await pilot.pause()
            text = screen_text(app)
            assert "This terminal is 60x20." in text and f"at least {MIN_SIZE[0]}x{MIN_SIZE[1]}" in text, text
            if ascii_only:
                assert_ascii(app, "the size notice")
            await pilot.press("space")  # the table's keys do nothing under the notice
            await pilot.resize_terminal(80, 24)
            await until(lambda: isinstance(app.screen, TableScreen), what="the table once the terminal is larger")

    run(body)


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"LANG": "C"}, True),
        ({"LANG": "en_US.UTF-8", "TERM": "linux"}, True),
        ({"LANG": "en_US.UTF-8", "TERM": "xterm-256color"}, False),
        ({"LANG": "en_US.UTF-8", "QUATRO_ASCII": "1"}, True),
    ],
)
def test_ascii_for_the_c_locale_and_the_linux_console(environ, expected):
    from quatro_tui.settings import wants_ascii

    assert wants_ascii(False, environ) is expected


def test_the_new_dialogs_are_ascii():
    from quatro_tui.screens.chat import ChatBox
    from quatro_tui.screens.link import ConfirmQuit
    from test_tui_ascii import assert_ascii

    async def body():
        app = QuatroApp(game=round_game(6), ascii_only=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, TableScreen), what="the table")
            app.show_link("Your seat is gone.", "The server no longer has your seat: it restarted (bad secret).")
            await pilot.pause()
            assert_ascii(app, "the link screen")
            app.pop_screen()
            for dialog in (ConfirmQuit(private=True), ChatBox()):
                app.push_screen(dialog)
                await pilot.pause()
                assert_ascii(app, type(dialog).__name__)
                app.pop_screen()

    run(body)


def test_connection_failures_are_said_in_plain_words():
    import socket

    from quatro_tui import words

    assert words.unreachable(ConnectionRefusedError(111, "Connection refused"), "127.0.0.1", 1) == (
        "Nobody is serving at 127.0.0.1:1. Is the server running?"
    )
    said = words.unreachable(socket.gaierror(-2, "Name or service not known"), "nowhere.invalid", 7777)
    assert said == "No computer called nowhere.invalid was found. Is the name right?"
    assert "did not answer in time" in words.unreachable(TimeoutError(), "::1", 7777)
    assert "[::1]:7777" in words.unreachable(TimeoutError(), "::1", 7777)
    for text in (said, words.unreachable(OSError(101, "Network is unreachable"), "10.0.0.9", 7777)):
        assert "Errno" not in text and "[" not in text


def test_a_player_still_through_a_bots_match_gets_the_whole_idle_allowance_after_it_ends():
    """Issue 37: the idle count ran from the last look at the match (or key press), so the player who watched bots
    play it through was closed as soon as it ended. It runs from the update that ended the match."""
    from helpers.snapshot_games import over_game
    from quatro_tui.connection import ServerUpdate

    async def body():
        now = [NOW]
        game = round_game(4)
        game.clock = lambda: now[0]
        app = QuatroApp(game=game, clock=lambda: now[0], idle_exit=600.0)
        closed: list[str | None] = []

        async def quit(message: str | None = None, return_code: int = 0) -> None:
            closed.append(message)

        app._quit = quit
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, TableScreen), what="the table")
            app._close_if_idle()  # a look while the round runs: not idle, nothing pressed since NOW
            now[0] = NOW + 2000  # the bots play on, no look in between (a look is every few seconds at most)
            app.post_message(ServerUpdate(7, 20, False, [], over_game(4).view, now[0]))  # the match is over
            await pilot.pause()
            now[0] += 599
            app._close_if_idle()
            await pilot.pause()
            assert closed == []  # a second short of the whole allowance after the end
            now[0] += 1
            app._close_if_idle()
            await pilot.pause()
            assert closed and "without a key press" in closed[0]

    run(body)
