"""The client's connection against a real server process (patient timing, ``helpers.tui``): hello, replies by id, pushes as messages, reconnection."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.framing import encode
from quatro_shared.games.quatro.events import HandDealt
from quatro_shared.games.quatro.views import Phase

from helpers.tui import Player, quatro_server, run, until  # noqa: F401 - quatro_server is a fixture
from quatro_tui.connection import (
    Connection,
    ConnectionLost,
    LinkBack,
    LinkDropped,
    SeatLost,
    ServerSeating,
    ServerUpdate,
)

pytestmark = pytest.mark.timeout(60)


def test_hello_then_requests_are_answered_by_id_and_pushes_arrive_as_messages(quatro_server):
    async def body():
        got = []
        conn = Connection("127.0.0.1", quatro_server, "ann", got.append)
        hello = await conn.open()
        assert isinstance(hello, m.Welcome) and hello.version == p.PROTOCOL_VERSION
        reader = asyncio.create_task(conn.run())
        # Two requests in flight at once: each reply finds its own future.
        created, pong = await asyncio.gather(conn.request(m.CreateTable(4)), conn.request(m.Ping()))
        assert isinstance(created, m.Ok) and isinstance(created.payload, m.Seated) and isinstance(pong, m.Ok)
        assert conn.seat is not None and conn.seat.seat == 0 and conn.seat.secret == created.payload.secret
        seating = await until(lambda: [m for m in got if isinstance(m, ServerSeating)], what="a seating push")
        assert seating[-1].seating.seats[0].name == "ann"
        refused = await conn.request(m.Start())
        assert isinstance(refused, m.Refused) and refused.reason == p.SEATS_EMPTY
        await conn.close()
        with pytest.raises(ConnectionLost):
            await conn.request(m.Ping())
        reader.cancel()

    run(body)


def test_updates_carry_rebuilt_events_and_views(quatro_server):
    async def body():
        ann = await Player(quatro_server, "ann").start()
        await ann.act(p.CREATE_TABLE, players=4)
        for _ in range(3):
            await ann.act(p.ADD_BOT, level="random")
        await ann.act(p.START)
        await ann.wait_phase(Phase.SIGNING)
        await ann.act("ready")  # the round opens when everyone is: no waiting for the sign window to close
        view = await ann.wait_view(lambda v: v.phase is Phase.ROUND and len(v.hand) == 4, "the round")
        assert view.seat == 0 and len(view.center) == 4
        assert any(isinstance(e, HandDealt) for e in ann.events)
        updates = [m for m in ann.messages if isinstance(m, ServerUpdate)]
        assert all(u.received_at > 0 for u in updates)
        await ann.close()

    run(body)


def test_r19_a_dropped_link_reconnects_with_the_secret_and_gets_the_seat_back(quatro_server):
    async def body():
        ann = await Player(quatro_server, "ann").start()
        bob = await Player(quatro_server, "bob").start()
        created = await ann.act(p.CREATE_TABLE, players=4)
        await bob.act(p.JOIN, table=created["table"])
        for _ in range(2):
            await ann.act(p.ADD_BOT, level="normal")
        await ann.act(p.START)
        for player in (ann, bob):
            await player.wait_phase(Phase.SIGNING)
            await player.act("ready")
        hand = (await bob.wait_view(lambda v: v.phase is Phase.ROUND and len(v.hand) == 4)).hand
        before = len(bob.messages)
        bob.conn.abort()  # as a network failure would
        await until(lambda: any(isinstance(m, LinkDropped) for m in bob.messages[before:]), what="the drop")
        await ann.wait_view(lambda v: not v.seats[1].connected or v.phase is not Phase.ROUND)
        await until(lambda: any(isinstance(m, LinkBack) for m in bob.messages[before:]), what="the reconnection")
        snapshot = await until(
            lambda: [m for m in bob.messages[before:] if isinstance(m, ServerUpdate) and m.snapshot], what="a snapshot"
        )
        assert snapshot[0].view.seat == 1
        if snapshot[0].view.phase is Phase.ROUND and snapshot[0].view.round == 1:
            assert snapshot[0].view.hand  # the same seat, with its cards (R19)
        assert hand  # the round had dealt before the drop
        await ann.wait_view(lambda v: v.seats[1].connected)
        assert (await bob.request(p.PING))["kind"] == p.OK
        await ann.close()
        await bob.close()

    run(body)


def test_a_seat_taken_over_elsewhere_is_not_fought_for(quatro_server):
    async def body():
        ann = await Player(quatro_server, "ann").start()
        await ann.act(p.CREATE_TABLE, players=4)
        twin = await Player(quatro_server, "ann").start()
        await twin.act(p.REJOIN, table=ann.conn.seat.table, secret=ann.conn.seat.secret, takeover=True)
        await until(lambda: ann._task.done(), what="the replaced connection to stop")
        assert not any(isinstance(m, LinkDropped) for m in ann.messages)
        await ann.close()
        await twin.close()

    run(body)


def test_an_unrecoverable_seat_stops_the_retries(quatro_server):
    async def body():
        ann = await Player(quatro_server, "ann").start()
        await ann.act(p.CREATE_TABLE, players=4)
        ann.conn.core.place = replace(ann.conn.core.place, secret="not-the-secret")  # as if the server forgot it
        ann.conn.abort()
        lost = await until(lambda: [m for m in ann.messages if isinstance(m, SeatLost)], what="the seat to be lost")
        assert "secret" in lost[0].why
        await ann.close()

    run(body)


def test_an_idle_connection_pings_when_the_heartbeat_is_due(quatro_server, monkeypatch):
    """Nothing sent for HEARTBEAT_INTERVAL: the connection pings (the interval shortened here), and a ping's reply
    is nobody's business but the connection's."""
    monkeypatch.setattr(p, "HEARTBEAT_INTERVAL", 0.2)

    async def body():
        got = []
        conn = Connection("127.0.0.1", quatro_server, "ann", got.append)
        await conn.open()
        opened = conn.core.ping_due()
        assert opened is not None
        reader = asyncio.create_task(conn.run())
        # Two pings sent, and the last one answered: a ping may be on its way back at any instant.
        await until(lambda: conn.core.ping_due() > opened + 0.3 and not conn.core.pending, what="two pings answered")
        assert conn.connected
        await conn.close()
        reader.cancel()

    run(body)


def test_an_unreachable_server_is_an_error_not_a_hang():
    async def body():
        conn = Connection("127.0.0.1", 1, "ann", lambda m: None)
        with pytest.raises(OSError):
            await conn.open()

    run(body)


def test_an_event_of_a_newer_server_is_skipped_not_the_update():
    from quatro_shared.wire import to_wire

    from helpers.snapshot_games import round_game

    got = []
    conn = Connection("127.0.0.1", 1, "ann", got.append)
    view = round_game(4).view
    frame = {
        "kind": "update",
        "table": 1,
        "seq": 3,
        "snapshot": True,
        "at": 0,
        "view": to_wire(view),
        "events": [{"kind": "meteor_strike", "seat": 2}, {"kind": "channel_taken", "seat": 1}],
    }

    async def body():
        for event in conn.core.receive_data(encode(frame), 0.0):
            conn._dispatch(event)

    run(body)
    (update,) = got
    assert isinstance(update, ServerUpdate) and update.view == view
    assert [e.kind for e in update.events] == ["channel_taken"]


# --- seq: every update in order, or a resync (protocol section 11) ---------------------------------------


def _update(seq: int, snapshot: bool = False) -> bytes:
    """An update of seat 0: a snapshot (the first of a seat is one), or what changed (protocol 3)."""
    from quatro_shared.games.quatro.views import Clock
    from quatro_shared.wire import to_wire

    from helpers.snapshot_games import round_game

    view = round_game(4).view
    if snapshot or seq == 1:
        return encode(
            {
                "kind": "update",
                "table": 1,
                "seq": seq,
                "snapshot": True,
                "at": 0,
                "view": to_wire(view),
                "events": [{"kind": "channel_taken", "seat": 1}],
            }
        )
    clock = Clock(
        view.phase_ms,
        tuple(s.next_pulse_ms for s in view.seats),
        tuple(s.last_pulse_ms for s in view.seats),
        vote_wait_ms=view.vote_wait_ms,
    )
    return encode(
        {
            "kind": "update",
            "table": 1,
            "seq": seq,
            "snapshot": False,
            "at": 0,
            "clock": to_wire(clock),
            "events": [{"kind": "channel_taken", "seat": 1}],
        }
    )


def test_a_gap_found_by_the_core_is_told_and_cuts_the_link_for_a_resync():
    """The seq rules themselves are the client core's (tests/test_client_core.py); the shell tells and resyncs."""
    from quatro_shared.client import Place

    got = []
    conn = Connection("127.0.0.1", 1, "ann", got.append)
    conn.core.place = Place(table=1, seat=0, secret="s3cr3t")
    cut = []
    conn.abort = lambda: cut.append(True)  # what would cut the link, and make run() reconnect and rejoin

    def feed(*frames: bytes) -> list:
        got.clear()

        async def body():
            for frame in frames:
                for event in conn.core.receive_data(frame, 0.0):
                    conn._dispatch(event)

        run(body)
        return [(type(m).__name__, getattr(m, "seq", None) or (m.expected, m.got)) for m in got]

    assert feed(_update(1), _update(2)) == [("ServerUpdate", 1), ("ServerUpdate", 2)]
    assert conn.seq == 2 and not cut
    assert feed(_update(4), _update(5)) == [("SeqGap", (3, 4))]
    assert cut == [True] and conn._resync_why is not None


def test_r19_a_lost_update_is_noticed_and_a_rejoin_resyncs_the_seat(quatro_server):
    from quatro_tui.connection import SeqGap

    async def body():
        ann = await Player(quatro_server, "ann").start()
        await ann.act(p.CREATE_TABLE, players=4)
        for _ in range(3):
            await ann.act(p.ADD_BOT, level="normal")
        await ann.act(p.START)
        await ann.wait_phase(Phase.SIGNING)
        assert ann.conn.seq is not None
        # The network loses the next update (as a buggy relay would): the one after it shows the gap.
        core, lost = ann.conn.core, []
        take_update = core._update

        def lossy(frame, update, *game):
            if not lost:
                lost.append(update.seq)
                return None
            return take_update(frame, update, *game)

        core._update = lossy
        await ann.act("pick_sign", sign="owl")  # an update for ann (her team's sign): lost
        try:
            await ann.request("ready")  # another update: the gap
        except ConnectionLost:
            pass  # the resync cut the link before the reply came
        gap = await until(lambda: [m for m in ann.messages if isinstance(m, SeqGap)], what="the gap noticed")
        assert gap[0].expected == lost[0] and gap[0].got == lost[0] + 1
        back = await until(lambda: [m for m in ann.messages if isinstance(m, LinkBack)], what="the resync")
        assert back[0].resynced and not any(isinstance(m, LinkDropped) for m in ann.messages)
        snapshot = await until(
            lambda: [m for m in ann.messages if isinstance(m, ServerUpdate) and m.snapshot and m.seq > lost[0]],
            what="the rejoin's snapshot",
        )
        assert snapshot[0].seq > lost[0] + 1  # the seat's count goes on across the rejoin
        assert snapshot[0].view.sign == "owl"  # the lost update's news is in the fresh view
        # The round opens (everyone is ready) and the updates go on in order from the snapshot.
        await ann.wait_view(lambda v: v.phase is Phase.ROUND)
        await ann.act("take_channel")  # one more update, at least
        later = lambda: [m.seq for m in ann.messages if isinstance(m, ServerUpdate) and m.seq >= snapshot[0].seq]  # noqa: E731
        seqs = await until(lambda: len(later()) > 1 and later(), what="updates after the snapshot")
        assert seqs == list(range(snapshot[0].seq, snapshot[0].seq + len(seqs)))
        assert [m for m in ann.messages if isinstance(m, SeqGap)] == gap  # one gap, one resync
        assert ann.conn.seq >= seqs[-1]
        await ann.close()

    run(body)


def test_the_feed_says_an_update_went_missing_and_that_the_table_is_resynced():
    from helpers.snapshot_games import round_game
    from quatro_tui.app import QuatroApp
    from quatro_tui.connection import SeqGap

    async def body():
        app = QuatroApp(game=round_game(4))
        async with app.run_test(size=(80, 24)) as pilot:
            app.post_message(SeqGap(5, 7))
            app.post_message(LinkBack(resynced=True))
            await until(lambda: "Resynced: the table as it is now." in app.game.feed, what="resynced in the feed")
            assert any("went missing" in line and "catching up" in line for line in app.game.feed)
            await pilot.press("ctrl+q")

    run(body)


# --- a server that says goodbye ----------------------------------------------------------------------------


def test_a_server_that_said_goodbye_is_tried_for_a_while_then_the_connection_stops_and_says_so(tmp_path):
    """``bye`` ``shutdown`` (protocol section 8): a restart may bring the seat back, so the connection tries
    again, but for ``restart_patience`` only; then ``ServerGone``, and no endless retries."""
    from helpers.tui import timing_file
    from quatro_tui.connection import ServerBye, ServerGone
    from test_tui_manners import _free_port, _serve

    port = _free_port()
    server = _serve(port, str(timing_file(tmp_path)))

    async def body():
        got: list[object] = []
        conn = Connection("127.0.0.1", port, "ann", got.append, backoff_cap=0.2, restart_patience=1.5)
        await conn.open()
        reader = asyncio.create_task(conn.run())
        assert isinstance(await conn.request(m.CreateTable(4)), m.Ok)
        server.terminate()  # an operator's stop: the server says goodbye
        await asyncio.wait_for(reader, 10)  # run() ends by itself
        byes = [message for message in got if isinstance(message, ServerBye)]
        assert byes and byes[0].reason == m.BYE_SHUTDOWN
        drops = [message for message in got if isinstance(message, LinkDropped)]
        assert drops and all(drop.goodbye for drop in drops)
        assert isinstance(got[-1], ServerGone)
        count = len(got)
        await asyncio.sleep(1.0)
        assert len(got) == count  # nothing more: no endless "trying again"

    try:
        run(body)
    finally:
        server.kill()
        server.wait()


def test_a_guest_whose_server_shut_down_is_told_so_and_joins_another_server(tmp_path, monkeypatch):
    """The link screen says the server has shut down, in plain words, with the ways on: try again, another
    server (j, an address typed), quit; not the lobby of a server that is gone, nor "trying again" for ever."""
    from helpers.tui import timing_file
    from quatro_tui import connection
    from quatro_tui.app import Join, QuatroApp
    from quatro_tui.screens.dialogs import AskAddress
    from quatro_tui.screens.link import LinkScreen
    from quatro_tui.screens.lobby import LobbyScreen
    from test_tui_manners import _free_port, _serve

    monkeypatch.setattr(connection, "RESTART_PATIENCE", 1.5)
    timing = str(timing_file(tmp_path))
    first, second = _free_port(), _free_port()
    server, other = _serve(first, timing), _serve(second, timing)

    def told(app: QuatroApp) -> str:
        return "\n".join(str(w.render()) for w in app.screen.query("Static"))

    async def body():
        app = QuatroApp(Join("127.0.0.1", first, "ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            assert isinstance(await app.request(m.CreateTable(4)), m.Ok)
            server.terminate()
            await until(
                lambda: (
                    isinstance(app.screen, LinkScreen)
                    and app.screen.title_text == "The server is shutting down."
                    and "said goodbye" in told(app)
                ),
                what="the goodbye told",
            )  # the words render after the title
            assert "Nobody is serving" not in told(app), told(app)
            await until(
                lambda: isinstance(app.screen, LinkScreen) and app.screen.title_text == "The server has shut down.",
                timeout=10,
                what="the server gone told",
            )
            text = await until(lambda: "has not come back" in told(app) and told(app), what="its words")
            assert f"The server at 127.0.0.1:{first} said goodbye" in text and "has not come back" in text, text
            assert "r try again" in text and "j another server" in text and "q quit" in text, text
            assert "back to the lobby" not in text and "Trying again" not in text, text
            await pilot.press("j")
            await until(lambda: isinstance(app.screen, AskAddress), what="the address asked")
            await pilot.press(*f"127.0.0.1:{second}", "enter")
            await until(lambda: isinstance(app.screen, LobbyScreen), timeout=15, what="the other server's lobby")
            assert app.conn is not None and app.conn.port == second
            await pilot.press("ctrl+q")

    try:
        run(body)
    finally:
        for process in (server, other):
            process.kill()
            process.wait()


def test_a_connections_last_word_while_the_app_closes_is_dropped_not_a_crash():
    """A connection may report its link lost (a server's goodbye among them) after the app has begun to close and
    its screens are gone: nothing is shown, and the app ends as it was asked to."""
    from helpers.snapshot_games import round_game
    from quatro_tui.app import QuatroApp

    async def body():
        app = QuatroApp(game=round_game(4))
        async with app.run_test(size=(80, 24)):
            pass
        assert not app.screen_stack
        app.show_link("The server is shutting down.", "Trying again in 0.5s (attempt 1).", retrying=True)
        assert app.stale(LinkDropped(1, 2.0, "the server closed the connection"))  # every link message: none is told

    run(body)


def test_guests_of_a_private_game_its_opener_ended_are_told_at_once_and_not_to_wait(tmp_path):
    """A private game's server (``quatro play --open``) stopped by its opener said ``bye shutdown``: its guests
    read "If it is restarting, you will be back in your seat" and waited 20 s for a restart that never comes. Its
    goodbye is ``bye closed`` (protocol version 6), with who ended it: the guest is told at once, with the ways on."""
    from helpers.tui import timing_file
    from quatro_tui.app import Join, QuatroApp
    from quatro_tui.screens.link import LinkScreen
    from quatro_tui.screens.lobby import LobbyScreen
    from test_tui_manners import _free_port, _serve

    port = _free_port()
    server = _serve(port, str(timing_file(tmp_path)), "--final-goodbye", "dan ended the game")

    def told(app: QuatroApp) -> str:
        return "\n".join(str(w.render()) for w in app.screen.query("Static"))

    async def body():
        app = QuatroApp(Join("127.0.0.1", port, "ann"))
        titles: list[str] = []
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            assert isinstance(await app.request(m.CreateTable(4)), m.Ok)
            server.terminate()  # the opener's client stops its private server

            def seen() -> bool:
                if isinstance(app.screen, LinkScreen) and app.screen.title_text not in titles:
                    titles.append(app.screen.title_text)
                return "The game is over: its server has stopped." in titles

            await until(seen, timeout=5, what="the end told at once (the restart patience is 20 s)")
            text = await until(lambda: "not coming back" in told(app) and told(app), what="its words")
            assert "dan ended the game." in text and f"The server at 127.0.0.1:{port} is not coming back" in text, text
            assert "r try again" in text and "j another server" in text and "q quit" in text, text
            assert titles == ["The game is over: its server has stopped."], titles  # no "shutting down" before it
            assert "If it is restarting" not in text and "Trying again" not in text, text
            assert "The server says goodbye: dan ended the game." in app.game.feed
            await pilot.press("ctrl+q")

    try:
        run(body)
    finally:
        server.kill()
        server.wait()
