"""A seat belongs to a person (R19): remembered by server, table and name (or an SSH key), never handed to
someone else under the same account, and taken over from a live connection only when the person says so."""

from __future__ import annotations

from contextlib import AsyncExitStack

import pytest

from quatro_shared import messages as m
from quatro_shared import protocol as p

from helpers.tui import Player, quatro_server, run, until  # noqa: F401 - quatro_server is a fixture
from quatro_tui.app import QuatroApp
from quatro_tui.cli import make_app
from quatro_tui.screens.dialogs import TakeOver
from quatro_tui.screens.lobby import LobbyScreen
from quatro_tui.screens.room import RoomScreen
from quatro_tui.settings import RememberedSeat, Settings, config_path, remember_seat

pytestmark = pytest.mark.timeout(90)


def said_goodbye(app: QuatroApp) -> bool:
    """The server told this client its seat was taken over, or said goodbye."""
    return app.game.link == "seat played elsewhere" or any("goodbye" in line for line in app.game.feed)


# --- what the settings remember -----------------------------------------------------------------------


def test_r19_seats_are_remembered_per_person_not_per_account(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    remember_seat(RememberedSeat("box:7777", 1, "ann", "ann-secret"))
    remember_seat(RememberedSeat("box:7777", 1, "ben", "ben-secret"))
    remember_seat(RememberedSeat("box:7777", 2, "ann", "ann-at-2"))
    settings = Settings.load()
    assert settings.remembered_seat("box:7777", "ben").secret == "ben-secret"
    assert settings.remembered_seat("box:7777", "ann").secret == "ann-at-2"  # the newest of ann's seats
    assert settings.remembered_seat("box:7777", "ann", table=1).secret == "ann-secret"
    assert settings.remembered_seat("box:7777", "ben", table=2) is None
    assert settings.remembered_seat("box:7777", "cy") is None
    assert settings.remembered_seat("other:7777", "ann") is None
    # A seat taken again at the same table replaces the old one; other people's stay.
    remember_seat(RememberedSeat("box:7777", 1, "ann", "ann-again"))
    assert [s.secret for s in Settings.load().seats] == ["ben-secret", "ann-at-2", "ann-again"]
    assert config_path().stat().st_mode & 0o777 == 0o600  # it holds seat secrets


def test_r19_a_key_identifies_its_person_whatever_the_name(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    remember_seat(RememberedSeat("door", 4, "ben", "keyed", person="SHA256:benskey"))
    settings = Settings.load()
    assert settings.remembered_seat("door", "benjamin", person="SHA256:benskey").secret == "keyed"
    assert settings.remembered_seat("door", "ben") is None  # the name alone is not the key's person
    assert settings.remembered_seat("door", "ben", person="SHA256:another") is None


def test_an_older_clients_single_seat_is_kept_as_its_names(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    config_path().parent.mkdir(parents=True)
    config_path().write_text('name = "ann"\n\n[seat]\nserver = "box:7777"\ntable = 3\nsecret = "old"\n')
    settings = Settings.load()
    assert settings.remembered_seat("box:7777", "ann") == RememberedSeat("box:7777", 3, "ann", "old")
    assert settings.remembered_seat("box:7777", "ben") is None


# --- over TCP, with the command line's apps ------------------------------------------------------------


def test_r19_two_names_under_one_home_get_two_seats_and_each_comes_back_to_its_own(
    quatro_server, tmp_path, monkeypatch
):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    address = f"127.0.0.1:{quatro_server}"

    async def body():
        host = await Player(quatro_server, "hal").start()
        table = (await host.act(p.CREATE_TABLE, players=4))["table"]
        async with AsyncExitStack() as stack:
            ann = make_app(["join", address, "--table", str(table), "--name", "ann"])
            ben = make_app(["join", address, "--table", str(table), "--name", "ben"])
            assert isinstance(ann, QuatroApp) and isinstance(ben, QuatroApp)
            await stack.enter_async_context(ann.run_test(size=(80, 24)))
            await until(lambda: isinstance(ann.screen, RoomScreen) and ann.game.my_seat is not None, what="ann's seat")
            ben_pilot = await stack.enter_async_context(ben.run_test(size=(80, 24)))
            await until(lambda: isinstance(ben.screen, RoomScreen) and ben.game.my_seat is not None, what="ben's seat")
            assert ann.game.my_seat != ben.game.my_seat
            await until(lambda: len(Settings.load().seats) == 2, what="two remembered seats")

            # ann again, from a second terminal, no table named: her own seat, which is live, so she is asked.
            again = make_app(["join", address, "--name", "ann"])
            assert isinstance(again, QuatroApp)
            pilot = await stack.enter_async_context(again.run_test(size=(80, 24)))
            await until(lambda: isinstance(again.screen, TakeOver), what="the take-over question")
            await pilot.press("y")
            await until(
                lambda: isinstance(again.screen, RoomScreen) and again.game.my_seat == ann.game.my_seat,
                what="ann's own seat",
            )
            await until(lambda: said_goodbye(ann), what="the first terminal told it was replaced")
            assert not said_goodbye(ben)  # ben never lost his seat

            # ben from a second terminal, who says no: he stays where he is, the new terminal goes to the lobby.
            ben2 = make_app(["join", address, "--name", "ben"])
            assert isinstance(ben2, QuatroApp)
            pilot = await stack.enter_async_context(ben2.run_test(size=(80, 24)))
            await until(lambda: isinstance(ben2.screen, TakeOver), what="ben's question")
            await pilot.press("n")
            await until(lambda: isinstance(ben2.screen, LobbyScreen), what="the lobby")
            assert not said_goodbye(ben)
            assert isinstance(await ben.conn.request(m.Ping()), m.Ok)
            assert host.seating is not None
            seats = {s.name: s.seat for s in host.seating.seats if s.taken}
            assert seats == {"hal": 0, "ann": ann.game.my_seat, "ben": ben.game.my_seat}
            await ben_pilot.press("ctrl+q")
            await until(lambda: not host.seating.seats[ben.game.my_seat].connected, what="ben to go")

        # Everyone gone, ben comes back: straight to his seat, nobody asked, nobody replaced.
        back = make_app(["join", address, "--name", "ben"])
        assert isinstance(back, QuatroApp)
        async with back.run_test(size=(80, 24)):
            await until(
                lambda: isinstance(back.screen, RoomScreen) and back.game.my_seat == ben.game.my_seat, what="ben's seat"
            )
            assert "Back in your seat." in back.game.feed
        await host.close()

    run(body)


def test_r19_a_take_over_without_the_flag_is_refused(quatro_server):
    async def body():
        ann = await Player(quatro_server, "ann").start()
        created = await ann.act(p.CREATE_TABLE, players=4)
        twin = await Player(quatro_server, "ann").start()
        refused = await twin.request(p.REJOIN, table=created["table"], secret=created["secret"])
        assert refused["kind"] == p.REFUSED and refused["reason"] == p.SEAT_IN_USE
        assert (await ann.request(p.PING))["kind"] == p.OK  # the seat's connection never noticed
        assert (await twin.request(p.REJOIN, table=created["table"], secret=created["secret"], takeover=True))[
            "kind"
        ] == p.OK
        await ann.close()
        await twin.close()

    run(body)


def test_join_without_a_name_asks_it_from_the_login_name_and_a_take_over_names_whose_seat(
    quatro_server, tmp_path, monkeypatch
):
    """Under one account the last name used is someone else's: ``quatro join`` without ``--name`` asks (the login
    name filled in), comes back to the seat of the name given, and asks about it by seat, player and table."""
    from textual.widgets import Input

    from quatro_tui.screens.dialogs import AskName
    from test_tui_names import screen_text

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setattr("getpass.getuser", lambda: "friends")
    address = f"127.0.0.1:{quatro_server}"

    async def body():
        host = await Player(quatro_server, "hal").start()
        table = (await host.act(p.CREATE_TABLE, players=4))["table"]
        async with AsyncExitStack() as stack:
            ann = make_app(["join", address, "--table", str(table), "--name", "ann"])
            assert isinstance(ann, QuatroApp)
            await stack.enter_async_context(ann.run_test(size=(80, 24)))
            await until(lambda: isinstance(ann.screen, RoomScreen) and ann.game.my_seat is not None, what="ann's seat")
            ben = make_app(["join", address, "--table", str(table), "--name", "ben"])  # the last name used here
            assert isinstance(ben, QuatroApp)
            await stack.enter_async_context(ben.run_test(size=(80, 24)))
            await until(lambda: isinstance(ben.screen, RoomScreen) and ben.game.my_seat is not None, what="ben's seat")
            await until(lambda: len(Settings.load().seats) == 2, what="two remembered seats")
            assert Settings.load().name == "ben"

            # ann, from another terminal of the same account, no name given: asked, from the login name.
            again = make_app(["join", address])
            assert isinstance(again, QuatroApp)
            pilot = await stack.enter_async_context(again.run_test(size=(80, 24)))
            await until(lambda: isinstance(again.screen, AskName), what="the name question")
            field = again.screen.query_one(Input)
            assert field.value == "friends"
            field.value = "ann"
            await pilot.press("enter")
            await until(lambda: isinstance(again.screen, TakeOver), what="the take-over question")
            await pilot.pause()
            asked = again.screen.question()
            assert asked.startswith(f"Seat {ann.game.my_seat + 1} at table {table}, ann's, is in play from another")
            assert f"Seat {ann.game.my_seat + 1} at table {table}, ann's" in screen_text(again)
            assert "ben" not in asked
            await pilot.press("y")
            await until(
                lambda: isinstance(again.screen, RoomScreen) and again.game.my_seat == ann.game.my_seat,
                what="ann's own seat",
            )
            await until(lambda: said_goodbye(ann), what="ann's first terminal told it was replaced")
            assert not said_goodbye(ben)
        await host.close()

    run(body)


def test_play_uses_the_name_its_help_names(tmp_path, monkeypatch):
    """``quatro play --help``: "default: your login name", and so it is, whatever name was used last."""
    from quatro_tui.cli import parser

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setattr("getpass.getuser", lambda: "cleo")
    Settings(name="ben").save()
    play = parser()._subparsers._group_actions[0].choices["play"]  # type: ignore[union-attr]
    assert "default: your login name" in play.format_help()
    app = make_app(["play"])
    assert isinstance(app, QuatroApp)
    try:
        assert app.plan.name == "cleo"
    finally:
        app.server.stop()
    app = make_app(["play", "--name", "dora"])
    assert isinstance(app, QuatroApp)
    try:
        assert app.plan.name == "dora"
    finally:
        app.server.stop()


def test_join_without_a_name_to_a_port_where_nobody_serves_says_so_before_asking_the_name(tmp_path, monkeypatch):
    """``quatro join HOST:PORT`` with nobody serving there asked the name first, then said nobody answers: the
    name was asked for nothing. Now it says so at once, and nothing is asked."""
    import socket

    from quatro_tui.screens.dialogs import AskName

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nobody serves there

    async def body():
        app = make_app(["join", f"127.0.0.1:{port}"])
        assert isinstance(app, QuatroApp) and app.ask_name is not None  # no name given, none kept: it would ask
        asked = []
        async with app.run_test(size=(80, 24)):
            await until(lambda: app.return_value is not None or isinstance(app.screen, AskName), what="an answer")
            asked.append(isinstance(app.screen, AskName))
        assert not asked[0], "the name was asked before the server was tried"
        assert app.return_value == f"quatro: Nobody is serving at 127.0.0.1:{port}. Is the server running?"
        assert app.return_code == 1

    run(body)
