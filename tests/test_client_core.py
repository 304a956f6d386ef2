"""The sans-I/O client core, fed bytes directly: no socket, no clock, no server process."""

from __future__ import annotations

import dataclasses

import pytest

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.client import (
    Answered,
    ClientCore,
    Place,
    ResyncNeeded,
    SeatingChanged,
    ServerBye,
    ServerError,
    TablesListed,
    Updated,
)
from quatro_shared.framing import FrameDecoder, ProtocolError, encode
from quatro_shared.games.quatro.actions import Ready
from quatro_shared.games.quatro.events import PlayerReady, Swapped
from quatro_shared.games.quatro.update import Update
from quatro_shared.games.quatro.views import Phase
from quatro_shared.tables import TablePhase
from quatro_shared.wire import to_wire

from helpers.engine import new_table
from quatro_server.games.quatro.engine import Table, clock, own_timers, view
from quatro_server.timing import FAST

SECRET = "s3cret-s3cret-s3cret-x"


def frame(message: object) -> bytes:
    """The bytes the server would send for a typed message."""
    return encode(to_wire(message))


def sent(data: bytes) -> dict:
    (message,) = FrameDecoder().feed(data)
    return message


@pytest.fixture
def table() -> Table:
    table = new_table(4)
    table.start(0.0)
    return table


def update(table: Table, seq: int, snapshot: bool = False) -> bytes:
    """Seat 0's update ``seq``: a snapshot (the first of a seat is one), or what changed (protocol 3)."""
    if snapshot or seq == 1:
        return frame(Update(1, seq, True, 0, (PlayerReady(0),), view(table, 0, 0.0)))
    return frame(Update(1, seq, False, 0, (PlayerReady(0),), clock=clock(table, 0.0)))


def welcomed(now: float = 0.0) -> ClientCore:
    core = ClientCore("ann")
    request_id, data = core.hello(now)
    assert sent(data) == {"kind": "hello", "id": request_id, "version": p.PROTOCOL_VERSION, "name": "ann"}
    (answered,) = core.receive_data(
        frame(m.Ok(request_id, m.Welcome(p.PROTOCOL_VERSION, "quatro", ("fast",), ()))), now
    )
    assert isinstance(answered, Answered) and isinstance(answered.reply.payload, m.Welcome)
    return core


def seated(now: float = 0.0) -> ClientCore:
    core = welcomed(now)
    request_id, _ = core.send(m.Join(1), now)
    core.receive_data(frame(m.Ok(request_id, m.Seated(1, 0, SECRET))), now)
    assert core.place == Place(1, 0, SECRET)
    return core


# --- requests and replies ---------------------------------------------------------------------------


def test_requests_are_numbered_and_leave_out_absent_fields():
    core = ClientCore("ann")
    first, data = core.send(m.CreateTable(4), 0.0)
    second, _ = core.send(m.Ping(), 0.0)
    assert (first, second) == (1, 2)
    assert sent(data) == {"kind": "create_table", "id": 1, "players": 4}  # null would be a bad_request
    assert set(core.pending) == {1, 2}


def test_replies_out_of_order_are_matched_to_their_requests_with_typed_payloads():
    core = welcomed()
    ping_id, _ = core.send(m.Ping(), 1.0)
    create_id, _ = core.send(m.CreateTable(4), 1.0)
    rename_id, _ = core.send(m.Rename("anna"), 1.0)
    data = (
        frame(m.Ok(rename_id, m.Renamed("anna")))
        + frame(m.Ok(create_id, m.Seated(3, 0, SECRET)))
        + frame(m.Ok(ping_id))
    )
    events = core.receive_data(data, 1.1)
    assert [(e.id, type(e.request), type(e.reply.payload)) for e in events] == [
        (rename_id, m.Rename, m.Renamed),
        (create_id, m.CreateTable, m.Seated),
        (ping_id, m.Ping, m.Done),
    ]
    assert core.place == Place(3, 0, SECRET) and not core.pending


def test_refusals_and_errors_answer_their_request():
    core = seated()
    swap_id, _ = core.send(m.Start(), 0.0)
    bad_id, _ = core.send(m.Ping(), 0.0)
    events = core.receive_data(
        frame(m.refused(swap_id, p.SEATS_EMPTY, "every seat needs a player or a bot", 1.25))
        + frame(m.Error(bad_id, p.BAD_REQUEST, "no")),
        0.0,
    )
    assert isinstance(events[0].reply, m.Refused) and events[0].reply.wait_ms == 1250 and not events[0].ok
    assert isinstance(events[1].reply, m.Error) and events[1].reply.code == p.BAD_REQUEST


def test_an_error_answering_no_request_is_reported_as_the_servers():
    core = ClientCore("ann")
    (event,) = core.receive_data(frame(m.Error(None, p.HELLO_FIRST, "say hello within 10 s")), 0.0)
    assert isinstance(event, ServerError) and event.reply.code == p.HELLO_FIRST


def test_a_rejoin_keeps_the_secret_it_sent_and_a_leave_forgets_the_seat():
    core = seated()
    core.connection_lost()
    core.hello(5.0)
    rejoin_id, data = core.rejoin(5.0)
    assert sent(data) == {"kind": "rejoin", "id": rejoin_id, "table": 1, "secret": SECRET}
    core.receive_data(frame(m.Ok(rejoin_id, m.Rejoined(1, 0))), 5.0)
    assert core.place == Place(1, 0, SECRET)
    leave_id, _ = core.send(m.Leave(), 6.0)
    core.receive_data(frame(m.Ok(leave_id)), 6.0)
    assert core.place is None and core.seq is None
    with pytest.raises(ValueError):
        core.rejoin(7.0)


def test_a_lost_connection_fails_its_pending_requests_and_keeps_the_seat():
    core = seated()
    a, _ = core.send(m.Ping(), 1.0)
    b, _ = core.send(Ready(), 1.0)
    assert core.connection_lost() == [a, b]
    assert core.place == Place(1, 0, SECRET) and core.welcome is None and not core.pending


# --- pushes and sequence numbers --------------------------------------------------------------------


def test_updates_in_order_are_passed_on(table):
    core = seated()
    events = core.receive_data(update(table, 1) + update(table, 2), 0.0)
    assert [type(e) for e in events] == [Updated, Updated]
    assert events[1].view.phase is Phase.SIGNING and events[1].update.events == (PlayerReady(0),)
    assert events[1].update.view is None and events[1].view.seats[0].ready and core.view == events[1].view
    assert core.seq == 2


def test_a_gap_asks_for_a_resync_and_drops_updates_until_the_rejoins_snapshot(table):
    core = seated()
    core.receive_data(update(table, 1) + update(table, 2), 0.0)
    (gap,) = core.receive_data(update(table, 4), 0.0)
    assert isinstance(gap, ResyncNeeded) and (gap.expected, gap.got) == (3, 4)
    assert core.receive_data(update(table, 5) + update(table, 6), 0.0) == []  # stale: nothing passed on
    core.connection_lost()
    core.hello(1.0)
    core.rejoin(1.0)
    (snapshot,) = core.receive_data(update(table, 9, snapshot=True), 1.0)
    assert isinstance(snapshot, Updated) and core.seq == 9 and core.resyncing is None
    assert isinstance(core.receive_data(update(table, 10), 1.0)[0], Updated)


def test_a_repeat_is_a_gap_too(table):
    core = seated()
    core.receive_data(update(table, 1) + update(table, 2), 0.0)
    (event,) = core.receive_data(update(table, 2), 0.0)
    assert isinstance(event, ResyncNeeded) and (event.expected, event.got) == (3, 2)


def test_a_first_update_that_is_neither_seq_1_nor_a_snapshot_is_a_gap(table):
    core = seated()
    (event,) = core.receive_data(update(table, 3), 0.0)
    assert isinstance(event, ResyncNeeded) and (event.expected, event.got) == (1, 3)


def test_a_snapshot_whose_seq_skips_numbers_is_not_a_gap(table):
    """Updates written to a socket that was already dropped still count: a snapshot may skip numbers."""
    core = seated()
    core.receive_data(update(table, 1) + update(table, 2), 0.0)
    core.connection_lost()
    core.hello(1.0)
    core.rejoin(1.0)
    events = core.receive_data(update(table, 7, snapshot=True) + update(table, 8), 1.0)
    assert [type(e) for e in events] == [Updated, Updated] and core.seq == 8


def test_an_update_that_cannot_be_read_is_a_lost_update(table):
    core = seated()
    core.receive_data(update(table, 1), 0.0)
    broken = to_wire(Update(1, 2, False, 0, (), view(table, 0, 0.0)))
    broken["view"]["hand"] = "not cards"
    (event,) = core.receive_data(encode(broken), 0.0)
    assert isinstance(event, ResyncNeeded) and event.got is None and "cannot read" in event.why


def test_an_unknown_event_is_skipped_not_the_update(table):
    core = seated()
    newer = to_wire(Update(1, 1, True, 0, (PlayerReady(2),), view(table, 0, 0.0)))
    newer["events"].insert(0, {"kind": "fireworks", "colour": "red"})
    newer["added_later"] = True  # keys a client does not know are ignored in the server's messages
    (event,) = core.receive_data(encode(newer), 0.0)
    assert isinstance(event, Updated) and event.update.events == (PlayerReady(2),)


def test_what_changed_is_applied_to_the_seats_state_with_the_updates_countdowns(table):
    core = seated()
    core.receive_data(update(table, 1), 0.0)
    outcome = table.act(1, Ready(), 0.5)
    delta = Update(
        1, 2, False, 500, tuple(e.event for e in outcome.events), clock=clock(table, 0.5), own=own_timers(table, 0, 0.5)
    )
    (event,) = core.receive_data(frame(delta), 0.5)
    assert isinstance(event, Updated) and event.view == view(table, 0, 0.5) == core.view


def test_an_update_without_a_clock_runs_the_countdowns_on_to_when_it_was_built():
    """Protocol 3: after a swap or a pulse the server sends no clock. The core runs every countdown on from the last
    one it was sent to the update's ``at`` (a pulse restarting its seat's ``last_pulse_ms`` on its beat), and takes
    the swapper's cooldowns from ``own``: the view is the server's at that instant, whatever the core's own clock."""
    from quatro_shared.games.quatro.actions import ChooseEmoji, PickSign, Swap, TakeChannel

    from quatro_server.games.quatro.updates import Batch

    table = new_table(4)
    table.start(0.0)
    for seat in range(4):
        if seat < 2:
            table.act(seat, PickSign(("fox", "owl")[seat]), 0.0)
        table.act(seat, Ready(), 0.0)
    assert table.phase is Phase.ROUND
    table.act(1, TakeChannel(), 0.1)
    table.act(1, ChooseEmoji("fox"), 0.1)
    core = seated()
    core.receive_data(frame(Update(1, 1, True, 100, (), view(table, 0, 0.1))), 0.0)
    me = view(table, 0, 0.3)
    give, take = me.hand[0], me.center[2]
    moves = [
        lambda: table.act(0, Swap(give, 2, take), 0.3).events,
        lambda: table.advance(0.1 + FAST.pulse_interval + 0.004),
    ]
    for seq, move in enumerate(moves, start=2):
        emits = move()
        assert [type(emit.event).__name__ for emit in emits] == [("Swapped", "Pulse")[seq - 2]]
        now = table.now
        data = Batch(1, table, emits, now).update(0, seq, tuple(range(len(emits))), False)
        assert "clock" not in sent(data) and ("own" in sent(data)) == (seq == 2)
        (event,) = core.receive_data(data, 99.0)  # the core's clock plays no part
        assert isinstance(event, Updated) and event.update.at == round(now * 1000)
        want = view(table, 0, now)
        assert event.view.hand == want.hand and event.view.center == want.center
        assert abs(event.view.phase_ms - want.phase_ms) <= 2  # type: ignore[operator]
        assert abs(event.view.swap_wait_ms - want.swap_wait_ms) <= 2
        assert abs(event.view.seats[1].next_pulse_ms - want.seats[1].next_pulse_ms) <= 2  # type: ignore[operator]
        if seq == 2:
            assert event.view.swap_wait_ms == round(FAST.swap_cooldown * 1000)  # from its ``own``
    assert event.view.seats[1].last_pulse == "fox" and event.view.seats[1].last_pulse_ms == 4


def test_an_update_before_any_snapshot_or_one_that_does_not_fit_the_state_asks_for_a_resync(table):
    core = seated()
    (event,) = core.receive_data(frame(Update(1, 1, False, 0, (), clock=clock(table, 0.0))), 0.0)
    assert isinstance(event, ResyncNeeded) and "no snapshot" in event.why
    core = seated()
    core.receive_data(update(table, 1), 0.0)
    odd = Update(1, 2, False, 0, (Swapped(0, 1, "AS", "KS"),), clock=clock(table, 0.0))  # nothing dealt yet
    (event,) = core.receive_data(frame(odd), 0.0)
    assert isinstance(event, ResyncNeeded) and "does not follow" in event.why


def test_a_resync_request_brings_a_snapshot_that_checks_the_state_built_so_far(table):
    core = seated()
    core.receive_data(frame(Update(1, 1, True, 0, (), view(table, 0, 0.0))), 0.0)
    readied = tuple(e.event for e in table.act(0, Ready(), 0.0).events)
    core.receive_data(frame(Update(1, 2, False, 0, readied, clock=clock(table, 0.0))), 0.0)
    request_id, data = core.resync(0.0)
    assert sent(data) == {"kind": "resync", "id": request_id}
    core.receive_data(frame(Update(1, 3, True, 0, (), view(table, 0, 0.0))), 0.0)
    assert core.drift == 0 and core.seq == 3  # the snapshot agrees with the state built from events
    honest = view(table, 0, 0.0)
    lying = Update(1, 4, True, 0, (), dataclasses.replace(honest, hand=("AS", "AH", "AD", "AC")))
    (event,) = core.receive_data(frame(lying), 0.0)
    assert core.drift == 1 and isinstance(event, Updated) and core.view == event.view == lying.view  # the new base


def test_seating_lobby_and_bye_pushes_are_typed():
    core = seated()
    seating = m.Seating(
        1,
        4,
        TablePhase.LOBBY,
        0,
        {"round_length": 180.0, "target_score": 5},
        "standard",
        tuple(m.SeatInfo(i, "ann" if i == 0 else None, None, i == 0, i == 0) for i in range(4)),
    )
    summary = m.TableSummary(1, "quatro", 4, 1, 0, TablePhase.LOBBY, "standard", False, (0, 0))
    events = core.receive_data(
        frame(seating) + frame(m.LobbyList((summary,))) + frame(m.Bye(m.BYE_REPLACED, "taken over")), 0.0
    )
    assert isinstance(events[0], SeatingChanged) and events[0].seating == seating
    assert isinstance(events[1], TablesListed) and events[1].tables == (summary,)
    assert isinstance(events[2], ServerBye) and events[2].bye.reason == m.BYE_REPLACED
    assert core.replaced and core.place is None  # never come back to fight the new connection


# --- bytes --------------------------------------------------------------------------------------------


def test_frames_cut_anywhere_are_put_back_together(table):
    core = seated()
    data = update(table, 1) + frame(m.LobbyList(()))
    events = []
    for i in range(len(data)):
        events += core.receive_data(data[i : i + 1], 0.0)
    assert [type(e) for e in events] == [Updated, TablesListed]


def test_a_framing_error_raises_and_the_next_connection_starts_clean(table):
    core = seated()
    with pytest.raises(ProtocolError) as caught:
        core.receive_data(b"\xff\xff\xff\xff", 0.0)  # announces 4 GiB
    assert caught.value.code == "frame_too_large"
    with pytest.raises(ProtocolError):
        core.receive_data(update(table, 1), 0.0)  # the stream is out of step for good
    core.connection_lost()
    assert isinstance(core.receive_data(update(table, 1), 0.0)[0], Updated)


def test_a_reply_that_breaks_its_payload_is_an_error_of_that_request():
    core = welcomed()
    request_id, _ = core.send(m.CreateTable(4), 0.0)
    (event,) = core.receive_data(encode({"kind": "ok", "id": request_id, "table": "one"}), 0.0)
    assert isinstance(event, Answered) and isinstance(event.reply, m.Error) and core.place is None


# --- heartbeat ----------------------------------------------------------------------------------------


def test_no_ping_is_due_before_hello_is_answered():
    core = ClientCore("ann")
    core.hello(0.0)
    assert core.ping_due() is None and core.ping_if_due(100.0) is None


def test_a_ping_is_due_after_an_interval_with_nothing_sent():
    core = welcomed(now=0.0)
    assert core.ping_due() == p.HEARTBEAT_INTERVAL
    assert core.ping_if_due(p.HEARTBEAT_INTERVAL - 0.1) is None
    core.send(Ready(), 4.0)  # anything sent counts
    assert core.ping_due() == 4.0 + p.HEARTBEAT_INTERVAL
    ping = core.ping_if_due(4.0 + p.HEARTBEAT_INTERVAL)
    assert ping is not None and sent(ping)["kind"] == p.PING
    assert core.ping_due() == 4.0 + 2 * p.HEARTBEAT_INTERVAL


def test_a_silent_server_is_given_up_after_the_timeout():
    core = welcomed(now=0.0)
    assert core.silent_since() == 0.0
    assert not core.server_gone(p.HEARTBEAT_TIMEOUT - 0.1)
    assert core.server_gone(p.HEARTBEAT_TIMEOUT)
    core.receive_data(frame(m.LobbyList(())), 20.0)
    assert not core.server_gone(p.HEARTBEAT_TIMEOUT)
