"""What covers the table and what it must leave in sight: the too-small notice is a box of its own (in ASCII too);
the counter's team picker covers no seat."""

from __future__ import annotations

import pytest

from helpers.snapshot_games import round_game
from helpers.tui import run, until
from quatro_tui.app import QuatroApp
from quatro_tui.screens.link import TooSmall
from test_tui_ascii import screen_text

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("ascii_only", [False, True])
def test_the_too_small_notice_has_a_box_of_its_own(ascii_only):
    async def body():
        app = QuatroApp(game=round_game(4), ascii_only=ascii_only)
        app.send = lambda body: None
        async with app.run_test(size=(60, 20)) as pilot:
            await until(lambda: isinstance(app.screen, TooSmall), what="the notice")
            await pilot.pause()
            lines = screen_text(app).split("\n")
            [row] = [r for r, line in enumerate(lines) if "This terminal is 60x20." in line]
            edge = ("-" if ascii_only else "━") * 30
            assert any(edge in line for line in lines[max(0, row - 3) : row]), "no box above the notice:\n" + "\n".join(
                lines
            )
            [end] = [r for r, line in enumerate(lines) if "ctrl+q quits." in line]
            assert any(edge in line for line in lines[end + 1 : end + 4]), "no box under the notice:\n" + "\n".join(
                lines
            )
            if ascii_only:
                assert all(c.isascii() for c in "".join(lines))

    run(body)


def test_the_too_small_notice_looks(snap_compare):
    assert snap_compare(QuatroApp(game=round_game(4)), terminal_size=(60, 20))


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
@pytest.mark.parametrize("players", [6, 8])
def test_the_counter_team_picker_leaves_every_seat_in_sight(players, size):
    """Choosing whom to accuse is done watching their channels: the picker covers no seat."""
    from quatro_tui.games.quatro.screens.dialogs import CounterTeam
    from quatro_tui.games.quatro.screens.table import TableScreen
    from quatro_tui.games.quatro.widgets import SeatBox

    async def body():
        app = QuatroApp(game=round_game(players))
        app.send = lambda body: None
        async with app.run_test(size=size) as pilot:
            await until(lambda: isinstance(app.screen, TableScreen), what="the table")
            table = app.screen
            await pilot.pause(0.7)  # the table's keys are armed
            await pilot.press("x")
            await until(lambda: isinstance(app.screen, CounterTeam), what="the team picker")
            await pilot.pause()
            picker = app.screen.query_one(".dialog").region
            seats = list(table.query(SeatBox))
            assert len(seats) == players - 1
            for seat in seats:
                assert not seat.region.overlaps(picker), f"the picker {picker} covers {seat.region}"
            await pilot.press("escape")

    run(body)
