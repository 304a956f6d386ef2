"""An unexpected error in the client never ends a person's session in silence: its traceback goes to a file of its
own, and the next screen names that file and offers the ways on (back to the seat, the lobby, quit)."""

from __future__ import annotations

import pytest

from quatro_shared import protocol as p

from helpers.tui import Player, quatro_server, run, until  # noqa: F401 - quatro_server is a fixture
from quatro_tui.app import Join, QuatroApp
from quatro_tui.crash import CrashScreen, write_log
from quatro_tui.screens.lobby import LobbyScreen
from test_tui_names import screen_text

pytestmark = pytest.mark.timeout(90)


class Fault(Exception):
    """The error the test plants in the client."""


def test_two_crash_logs_at_the_same_moment_never_share_a_file(tmp_path):
    first, second = write_log(Fault("one"), "a"), write_log(Fault("two"), "b")
    assert first is not None and second is not None and first != second
    assert "Fault: one" in first.read_text() and "Fault: two" in second.read_text()


def test_a_crash_at_the_table_is_logged_and_r_brings_the_player_back_to_the_seat(quatro_server, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))

    async def body():
        ann = await Player(quatro_server, "ann").start()
        created = await ann.act(p.CREATE_TABLE, players=4)
        table = created["table"]
        app = QuatroApp(Join("127.0.0.1", quatro_server, "bea", table=table))

        def fault() -> None:
            raise Fault("planted")

        with pytest.raises(Fault):
            async with app.run_test(size=(80, 24)) as pilot:
                await until(
                    lambda: app.game.my_seat is not None and app.conn is not None and app.conn.seat, what="a seat"
                )
                seat = app.game.my_seat
                app.game.say("a line of the table's story")
                app.call_later(fault)
                await pilot.pause()
        crash = app.crash
        assert crash is not None and crash.log is not None and crash.seat == (table, seat)
        logged = crash.log.read_text()
        assert crash.log.is_relative_to(tmp_path / "state") and "Fault: planted" in logged and "'bea'" in logged

        follow = app.successor()
        assert follow is not None
        async with follow.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(follow.screen, CrashScreen), what="the crash screen")
            await pilot.pause()
            shown = screen_text(follow)
            assert "unexpected error" in shown and crash.log.name in shown.replace("\n", "")
            assert "r back to your seat" in shown and "l to the lobby" in shown and "q quit" in shown
            await pilot.press("r")
            await until(
                lambda: follow.game.my_seat == seat and follow.conn is not None and follow.conn.seat,
                what="back in the seat",
            )
            assert follow.conn.seat.table == table
            assert "a line of the table's story" in follow.game.feed  # the feed came back with the seat
            await pilot.press("ctrl+q")
        await ann.act(p.LEAVE)
        await ann.close()

    run(body)


def test_l_after_a_crash_in_the_lobby_goes_back_to_the_lobby_and_a_fourth_crash_ends_it(
    quatro_server, tmp_path, monkeypatch
):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))

    async def body():
        app: QuatroApp | None = QuatroApp(Join("127.0.0.1", quatro_server, "cid"))

        def fault() -> None:
            raise Fault("again")

        crashes = 0
        while app is not None:
            current = app
            with pytest.raises(Fault):
                async with current.run_test(size=(80, 24)) as pilot:
                    if current.after is not None:
                        await until(lambda: isinstance(current.screen, CrashScreen), what="the crash screen")
                        assert current.after.seat is None and "back to your seat" not in screen_text(current)
                        await pilot.press("l")
                    await until(lambda: isinstance(current.screen, LobbyScreen), what="the lobby")
                    current.call_later(fault)
                    await pilot.pause()
            crashes += 1
            app = current.successor()
        assert crashes == 4  # three crash screens, then the program ends with the last log named

    run(body)
