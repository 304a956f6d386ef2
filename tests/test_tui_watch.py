"""Watching a table in the terminal client (protocol section 18): the lobby's ``w``, ``quatro join --watch``, the
watch screens of Quatro and Quarto (no hand, no move keys, ``WATCHING`` and the count of watchers), ``j`` to take a
free seat, and ``q`` back to the lobby. Against a real server process, through ``App.run_test``."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from quatro_shared import protocol as p
from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quatro.views import Phase
from quatro_shared.tables import NO_SEAT

from helpers.tui import Player, quatro_server, run, until  # noqa: F401 - quatro_server is a fixture
from quatro_tui.app import Join, QuatroApp
from quatro_tui.cli import parser
from quatro_tui.connection import ServerWatchEnded
from quatro_tui.games.quarto.screen import QuartoWatchScreen
from quatro_tui.games.quatro.screens.watch import WatchScreen
from quatro_tui.games.quatro.widgets import CardRow
from quatro_tui.screens.lobby import LobbyScreen
from quatro_tui.screens.room import RoomScreen
from quatro_tui.screens.watch import WaitingToWatch
from test_tui_names import screen_text

pytestmark = pytest.mark.timeout(60)


async def table_with_bots(port: int, bots: int = 3, **fields) -> tuple[Player, int]:
    ann = await Player(port, "ann").start()
    created = await ann.act(p.CREATE_TABLE, players=4, **fields)
    for _ in range(bots):
        await ann.act(p.ADD_BOT, level="easy")
    return ann, created["table"]


def test_lobby_w_watches_the_highlighted_table_and_follows_its_match_from_no_seat(quatro_server):
    async def body():
        ann, table_id = await table_with_bots(quatro_server)
        app = QuatroApp(Join("127.0.0.1", quatro_server, "wes"))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            table = app.screen.query_one(DataTable)
            await until(lambda: any(t.table == table_id for t in app.tables), what="the table listed")
            await until(lambda: table.row_count == len(app.tables), what="the list drawn")
            table.move_cursor(row=next(i for i, t in enumerate(app.tables) if t.table == table_id))
            table.focus()
            await pilot.press("w")
            await until(lambda: isinstance(app.screen, WaitingToWatch), what="the watched table, waiting")
            await until(lambda: "1 watching" in screen_text(app), what="the count of watchers")
            text = screen_text(app)
            assert "WATCHING" in text and "every seat is taken" in text
            await until(lambda: ann.seating is not None and ann.seating.watchers == 1, what="the host told")
            await ann.act(p.START)
            await until(lambda: isinstance(app.screen, WatchScreen), what="the watch screen")
            assert "j" not in app.screen.active_bindings or not app.check_action("take_seat", ())
            await ann.wait_phase(Phase.SIGNING)
            await ann.act("ready")
            await until(
                lambda: app.game.view is not None and app.game.view.phase is Phase.ROUND, timeout=20, what="the round"
            )
            view = app.game.view
            assert view.seat == NO_SEAT and view.hand == () and view.sign is None
            rows = [row.row for row in app.screen.query(CardRow)]
            assert rows == ["center"]  # no hand panel
            await until(lambda: ann.view is not None and app.game.view.center == ann.view.center, what="the center")
            text = screen_text(app)
            assert "WATCHING" in text and "1 watching" in text
            for name in ("ann", "easy-bot-1", "easy-bot-2", "easy-bot-3"):
                assert name in text, (name, text)
            # No key of a seat's does anything here: a swap key is not bound at all.
            assert "a" not in app.screen.active_bindings and "space" not in app.screen.active_bindings
            await pilot.press("q")
            await until(lambda: isinstance(app.screen, LobbyScreen), what="back in the lobby")
            assert app.game.watching is None
            await until(lambda: ann.seating.watchers == 0, timeout=5, what="the count down again")
            await pilot.press("ctrl+q")
        await ann.close()

    run(body)


def test_the_lobby_shows_how_many_watch_a_table_and_a_closed_one(quatro_server):
    async def body():
        ann, table_id = await table_with_bots(quatro_server)
        wen = await Player(quatro_server, "wen").start()
        await wen.act(p.WATCH, table=table_id)
        app = QuatroApp(Join("127.0.0.1", quatro_server, "wes"))
        async with app.run_test(size=(100, 24)) as pilot:
            await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            await until(lambda: any(t.table == table_id and t.watchers == 1 for t in app.tables), what="the count")
            table = app.screen.query_one(DataTable)
            await until(lambda: table.row_count == len(app.tables), what="the list drawn")
            row = next(i for i, t in enumerate(app.tables) if t.table == table_id)
            watch = [str(column.label) for column in table.ordered_columns].index("watch")
            assert str(table.get_row_at(row)[watch]) == "1"
            await ann.act(p.WATCHERS, open=False)
            await until(lambda: str(table.get_row_at(row)[watch]) == "closed", what="closed to watchers")
            table.move_cursor(row=row)
            table.focus()
            await pilot.press("w")
            await until(
                lambda: "Cannot watch: the host has closed this table to watchers" in screen_text(app),
                what="the refusal said",
            )
            assert isinstance(app.screen, LobbyScreen) and app.game.watching is None
            await pilot.press("ctrl+q")
        await ann.close()
        await wen.close()

    run(body)


def test_j_takes_a_free_seat_of_the_watched_table_before_its_match(quatro_server):
    async def body():
        ann, table_id = await table_with_bots(quatro_server, bots=2)
        app = QuatroApp(Join("127.0.0.1", quatro_server, "wes", watch=table_id))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, WaitingToWatch), what="the watched table")
            await until(lambda: "j takes a free seat" in screen_text(app), what="the free seat offered")
            await pilot.press("j")
            await until(lambda: isinstance(app.screen, RoomScreen) and app.game.my_seat == 3, what="seated")
            assert app.game.watching is None
            await until(lambda: ann.seating.seats[3].name == "wes", what="the host sees the new player")
            await pilot.press("ctrl+q")
        await ann.close()

    run(body)


def test_the_host_closes_the_waiting_room_to_watchers_with_v_and_opens_it_again(quatro_server):
    async def body():
        wen = await Player(quatro_server, "wen").start()
        app = QuatroApp(Join("127.0.0.1", quatro_server, "ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            await pilot.pause()
            await pilot.press("c")
            await until(lambda: isinstance(app.screen, RoomScreen) and app.game.is_host(), what="our room")
            table_id = app.game.seating.table
            await wen.act(p.WATCH, table=table_id)
            try:
                await until(
                    lambda: "1 watching" in screen_text(app) and "v close to watchers" in screen_text(app),
                    what="the count in the room, and the host's v",
                )
            except AssertionError:
                raise AssertionError(screen_text(app) + repr(app.game.seating))
            await pilot.press("v")
            await until(lambda: any(isinstance(msg, ServerWatchEnded) for msg in wen.messages), what="wen sent away")
            await until(lambda: "closed to watchers" in screen_text(app), what="closed")
            refused = await wen.request(p.WATCH, table=table_id)
            assert refused["reason"] == p.NOT_WATCHABLE
            await pilot.press("v")
            await until(lambda: "v close to watchers" in screen_text(app), what="open again")
            assert (await wen.request(p.WATCH, table=table_id))["kind"] == p.OK
            await pilot.press("ctrl+q")
        await wen.close()

    run(body)


def test_quatro_join_watch_shows_a_quarto_board_without_move_keys(quatro_server):
    async def body():
        cy = await Player(quatro_server, "cy").start()
        created = await cy.act(p.CREATE_TABLE, game=q.NAME)
        await cy.act(p.ADD_BOT, level="random")
        await cy.act(p.START)
        app = QuatroApp(Join("127.0.0.1", quatro_server, "wes", watch=created["table"]))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, QuartoWatchScreen), what="the Quarto watch screen")
            view = app.game.view
            assert isinstance(view, q.QuartoView) and view.seat == NO_SEAT and q.legal(view) == []
            await until(lambda: "WATCHING" in screen_text(app) and "1 watching" in screen_text(app), what="WATCHING")
            bound = set(app.screen.active_bindings)
            assert "q" in bound and "enter" not in bound and "n" not in bound
            assert not app.check_action("take_seat", ())  # the match is under way: no seat to take
            await pilot.press("escape")
            await until(lambda: isinstance(app.screen, LobbyScreen), what="back in the lobby")
            await pilot.press("ctrl+q")
        await cy.close()

    run(body)


def test_a_watchers_dropped_link_watches_again_with_a_fresh_snapshot(quatro_server):
    """The client's connection comes back to what it watched, as a seat's comes back to its seat (R19)."""

    async def body():
        ann, table_id = await table_with_bots(quatro_server)
        await ann.act(p.START)
        wes = await Player(quatro_server, "wes").start()
        await wes.act(p.WATCH, table=table_id)
        await until(lambda: wes.view is not None, what="the first snapshot")
        snapshots = sum(1 for msg in wes.messages if getattr(msg, "snapshot", False))
        wes.conn.abort()
        await until(
            lambda: sum(1 for msg in wes.messages if getattr(msg, "snapshot", False)) > snapshots,
            timeout=20,
            what="a fresh snapshot after the reconnection",
        )
        assert wes.conn.core.watching == table_id and wes.conn.core.place is None
        assert wes.view is not None and wes.view.seat == NO_SEAT
        await ann.close()
        await wes.close()

    run(body)


def test_a_watcher_whose_link_came_back_is_told_it_watches_again_not_that_it_has_a_seat(quatro_server):
    async def body():
        ann, table_id = await table_with_bots(quatro_server)
        await ann.act(p.START)
        app = QuatroApp(Join("127.0.0.1", quatro_server, "wes", watch=table_id))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, WatchScreen), what="the watch screen")
            app.conn.abort()
            await until(
                lambda: any(line.startswith("Reconnected") for line in app.game.feed),
                timeout=20,
                what="the reconnection",
            )
            assert "Reconnected: watching again." in app.game.feed, list(app.game.feed)
            assert not any("your seat" in line for line in app.game.feed)
            await pilot.press("ctrl+q")
        await ann.close()

    run(body)


def test_quatro_join_watch_takes_a_table_number():
    args = parser().parse_args(["join", "127.0.0.1:7777", "--watch", "3"])
    assert args.watch == 3 and args.table is None


@pytest.mark.parametrize("phase", [Phase.ROUND, Phase.BREAK], ids=["round", "reveal"])
def test_the_watch_screen_looks(snap_compare, phase):
    """A watcher's Quatro table: every seat alike, the center, no hand, WATCHING with the count; the reveal after."""
    from helpers.snapshot_games import watched_game

    assert snap_compare(QuatroApp(game=watched_game(4, phase)), terminal_size=(80, 24))


@pytest.mark.parametrize("attempt", range(3))
def test_a_watcher_sent_away_lands_in_the_lobby_told_why_without_a_crash(quatro_server, attempt):
    """The host closes the table to watchers while it is watched: the watcher's lobby comes up and says why. The
    note arrives before the new lobby screen is composed; it must wait for it, not crash the client."""

    async def body():
        ann, table_id = await table_with_bots(quatro_server, bots=2)
        app = QuatroApp(Join("127.0.0.1", quatro_server, "wes", watch=table_id))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, WaitingToWatch), what="the watched table")
            await until(lambda: ann.seating is not None and ann.seating.watchers == 1, what="the host told")
            await ann.act(p.WATCHERS, open=False)
            await until(
                lambda: isinstance(app.screen, LobbyScreen) and "Watching ended" in screen_text(app),
                what="the lobby, told why",
            )
            await pilot.pause()
            assert app.return_code is None  # still running: no unhandled error ended it
            await pilot.press("ctrl+q")
        await ann.act(p.LEAVE)  # the table goes with its host: the module's server is shared, tables are counted
        await ann.close()

    run(body)
