"""The table server over real TCP on 127.0.0.1: lobby, seats, full rounds, races, reconnection, time."""

from __future__ import annotations

import pytest
import trio

from quatro_shared import protocol as p
from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro.cards import is_four_of_a_kind
from quatro_shared.games.quatro.views import Phase
from quatro_shared.games.quatro.wire import event_from_wire

from helpers.netclient import TestClient


async def seat_four(server, timing: str = "fast") -> list[TestClient]:
    """Four humans at one 4-seat table, the match started, everyone at the signing."""
    host = await TestClient.connect(server.port, "ann")
    reply = await host.request(p.CREATE_TABLE, players=4, timing=timing)
    assert reply["kind"] == p.OK, reply
    clients = [host]
    for name in ("bob", "cid", "dee"):
        c = await TestClient.connect(server.port, name)
        reply = await c.request(p.JOIN, table=host.table)
        assert reply["kind"] == p.OK, reply
        clients.append(c)
    assert (await host.request(p.START))["kind"] == p.OK
    for c in clients:
        await c.wait_view(lambda v: v.phase is Phase.SIGNING)
    return clients


async def open_round(clients: list[TestClient]) -> None:
    for c in clients:
        assert (await c.request("ready"))["kind"] == p.OK
    for c in clients:
        await c.wait_view(lambda v: v.phase is Phase.ROUND and len(v.hand) == 4)


async def test_hello_with_another_version_is_told_both_versions(server):
    c = await TestClient.connect(server.port, hello=False)
    reply = await c.request(p.HELLO, version=99, name="old")
    assert reply["kind"] == p.REFUSED and reply["reason"] == p.INCOMPATIBLE_VERSION
    assert "99" in reply["message"] and str(p.PROTOCOL_VERSION) in reply["message"]
    assert await c.closed()


async def test_first_request_must_be_hello(server):
    c = await TestClient.connect(server.port, hello=False)
    reply = await c.request(p.LIST_TABLES)
    assert reply["kind"] == p.ERROR and reply["code"] == p.HELLO_FIRST


async def test_lobby_lists_creates_joins_and_renames(server):
    ann = await TestClient.connect(server.port, "ann")
    created = await ann.request(p.CREATE_TABLE, players=6, password="pw")
    assert created["kind"] == p.OK and created["seat"] == 0 and len(created["secret"]) >= 20
    bob = await TestClient.connect(server.port, "bob")
    listing = await bob.request(p.LIST_TABLES)
    (table,) = listing["tables"]
    assert table["players"] == 6 and table["taken"] == 1 and table["password"] is True and table["phase"] == "lobby"
    wrong = await bob.request(p.JOIN, table=created["table"], password="nope")
    assert wrong["kind"] == p.REFUSED and wrong["reason"] == p.BAD_PASSWORD
    joined = await bob.request(p.JOIN, table=created["table"], password="pw", team=0)
    assert joined["kind"] == p.OK and joined["seat"] == 3  # team 0 is seats 0 and 3 (R1)
    assert (await bob.request(p.RENAME, name="bobby"))["kind"] == p.OK
    await ann.drain(0.1)
    assert ann.seating["seats"][3]["name"] == "bobby"
    assert "secret" not in str(ann.seating)  # seating never carries secrets


async def test_host_adds_and_removes_bots_then_starts(server):
    ann = await TestClient.connect(server.port, "ann")
    await ann.request(p.CREATE_TABLE, players=4)
    refused = await ann.request(p.START)
    assert refused["kind"] == p.REFUSED and refused["reason"] == p.SEATS_EMPTY
    bob = await TestClient.connect(server.port, "bob")
    await bob.request(p.JOIN, table=ann.table)
    not_host = await bob.request(p.ADD_BOT)
    assert not_host["kind"] == p.REFUSED and not_host["reason"] == p.NOT_HOST
    for _ in range(2):
        assert (await ann.request(p.ADD_BOT, level="normal"))["kind"] == p.OK
    assert (await ann.request(p.REMOVE_BOT, seat=3))["kind"] == p.OK
    assert (await ann.request(p.ADD_BOT, seat=3, level="random"))["kind"] == p.OK
    assert (await ann.request(p.START))["kind"] == p.OK
    view = await ann.wait_view(lambda v: v.phase is not Phase.LOBBY)
    assert [s.bot for s in view.seats] == [False, False, True, True]


async def test_full_round_sign_swap_channel_pulse_call_reveal_next_round(server):
    clients = await seat_four(server, timing="steady")
    ann, bob, cid, dee = clients  # ann (0) and cid (2) are partners, team 0
    assert (await ann.request("pick_sign", sign="fox"))["kind"] == p.OK
    assert (await cid.wait_view(lambda v: v.sign is not None)).sign == "fox"  # the partner sees it appear (R6)
    await open_round(clients)

    # A swap: public to everyone, cooldown for the swapper.
    view = ann.view
    give, take = view.hand[0], view.center[1]
    assert (await ann.request("swap", give=give, slot=1, take=take))["kind"] == p.OK
    for c in clients:
        swapped = await c.wait_event("swapped")
        assert swapped == {"kind": "swapped", "seat": 0, "slot": 1, "put_down": give, "taken": take}
    again = await ann.request("swap", give=take, slot=1, take=give)
    assert again["kind"] == p.REFUSED and again["reason"] == "cooldown" and again["wait_ms"] > 0
    assert again["message"].startswith("swap cooling down — ") and again["message"].endswith("s left")  # R9, in words

    # The channel: taking it is public at once; the chosen emoji reaches everyone only at a pulse.
    assert (await bob.request("take_channel"))["kind"] == p.OK
    assert (await bob.request("choose_emoji", sign="owl"))["kind"] == p.OK
    for c in clients:
        pulse = await c.wait_event("pulse", timeout=3)
        assert pulse == {"kind": "pulse", "seat": 1, "sign": "owl"}

    # A call ends the round; the reveal shows every hand and sign.
    assert (await cid.request("call"))["kind"] == p.OK
    for c in clients:
        ended = await c.wait_event("round_ended")
        assert ended["outcome"] == "call" and ended["by"] == 2
        assert len(ended["hands"]) == 4 and ended["signs"][0] == "fox"
        assert ended["right"] == is_four_of_a_kind(ended["hands"][0])
    late = await dee.request("counter")
    assert late["kind"] == p.REFUSED and late["reason"] == "round_over"  # R17
    view = await ann.wait_view(lambda v: v.phase is Phase.BREAK)
    assert view.summary is not None and view.summary.hands[1]

    # The host starts the next round early.
    assert (await bob.request("next_round"))["reason"] == "not_host"
    assert (await ann.request("next_round"))["kind"] == p.OK
    view = await ann.wait_view(lambda v: v.phase is Phase.SIGNING)
    assert view.round == 2 and view.summary is None


async def test_r10_two_clients_swap_the_same_slot_exactly_one_wins(server):
    clients = await seat_four(server)
    await open_round(clients)
    ann, bob = clients[0], clients[1]
    take = ann.view.center[2]
    async with trio.open_nursery() as nursery:
        replies = {}

        async def swap(client):
            replies[client.name] = await client.request("swap", give=client.view.hand[0], slot=2, take=take)

        nursery.start_soon(swap, ann)
        nursery.start_soon(swap, bob)
    kinds = sorted(r["kind"] for r in replies.values())
    assert kinds == [p.OK, p.REFUSED]
    loser = next(c for c in (ann, bob) if replies[c.name]["kind"] == p.REFUSED)
    assert replies[loser.name]["reason"] == "taken"
    assert replies[loser.name]["message"] == f"too slow — {take} was taken"  # the words the client shows too
    # The refused swap cost nothing: the loser swaps elsewhere at once.
    view = await loser.wait_view(lambda v: v.center[2] != take)
    assert (await loser.request("swap", give=view.hand[0], slot=0, take=view.center[0]))["kind"] == p.OK


async def test_r19_drop_and_rejoin_with_the_secret_restores_seat_and_hand(server):
    clients = await seat_four(server)
    await open_round(clients)
    ann, bob, cid, dee = clients
    hand = bob.view.hand
    table, secret = bob.table, bob.secret
    await bob.aclose()
    view = await ann.wait_view(lambda v: not v.seats[1].connected)
    assert view.phase is Phase.ROUND

    stranger = await TestClient.connect(server.port, "eve")
    wrong = await stranger.request(p.REJOIN, table=table, secret="not-the-secret")
    assert wrong["kind"] == p.REFUSED and wrong["reason"] == p.BAD_SECRET
    other_table = await stranger.request(p.REJOIN, table=table + 1, secret=secret)
    assert other_table["kind"] == p.REFUSED and other_table["reason"] == p.BAD_SECRET

    back = await TestClient.connect(server.port, "bob")
    reply = await back.request(p.REJOIN, table=table, secret=secret)
    assert reply["kind"] == p.OK and reply["seat"] == 1
    view = await back.wait_view(lambda v: v.phase is Phase.ROUND)
    assert view.hand == hand and view.seat == 1
    await ann.wait_view(lambda v: v.seats[1].connected)


async def test_r19_a_rejoiner_is_told_what_its_seat_saw_of_the_match_before_its_snapshot_and_nothing_hidden(server):
    """Protocol 7's ``recent``: coming back from a new connection (another terminal, a new process), a seat is sent
    the match's latest events it may see, its time away included, just before its snapshot: what its feed would
    hold. Never an event of another seat or team (H1): no other hand, no other team's sign, no other's emoji."""
    clients = await seat_four(server)
    await open_round(clients)
    ann, bob, cid, dee = clients
    assert (await ann.request("take_channel"))["kind"] == p.OK
    await bob.wait_event("channel_taken")
    table, secret = bob.table, bob.secret
    await bob.aclose()
    await ann.wait_view(lambda v: not v.seats[1].connected)
    center = ann.view.center
    assert (await cid.act(a.Swap(cid.view.hand[0], 0, center[0])))["kind"] == p.OK  # while bob is away
    await ann.wait_event("swapped")

    back = await TestClient.connect(server.port, "bob")
    assert (await back.request(p.REJOIN, table=table, secret=secret))["kind"] == p.OK
    kinds = [f["kind"] for f in back.frames]
    assert kinds.index(p.RECENT) < kinds.index(p.UPDATE), kinds  # the look back, then the game as it is
    (recent,) = [f for f in back.frames if f["kind"] == p.RECENT]
    assert (recent["table"], recent["game"]) == (table, "quatro")
    events = recent["events"]
    seen = [ev["kind"] for ev in events]
    assert seen[0] == "match_started" and "round_opened" in seen and "channel_taken" in seen
    assert seen[-1] == "swapped" and events[-1]["seat"] == 2  # cid's swap, made while bob was away
    assert [ev["seat"] for ev in events if ev["kind"] == "hand_dealt"] == [1]  # his own hand alone
    assert all(ev["team"] == 1 for ev in events if ev["kind"] == "sign_chosen")  # his own team's sign alone
    assert all(ev["seat"] == 1 for ev in events if ev["kind"] == "emoji_chosen")
    for ev in events:
        event_from_wire(ev)  # each a well-formed event of the game
    snapshot = next(f for f in back.frames if f["kind"] == p.UPDATE)
    assert snapshot["snapshot"] is True  # and the look back is no update: no seq of its own


async def test_r19_partner_and_opponents_can_still_act_on_a_disconnected_seat(server):
    clients = await seat_four(server)
    await open_round(clients)
    ann, bob, cid, dee = clients
    await ann.aclose()
    await bob.wait_view(lambda v: not v.seats[0].connected)
    reply = await bob.request("counter")  # bob (team 1) counters team 0, whose seat 0 is away
    assert reply["kind"] == p.OK
    ended = await cid.wait_event("round_ended")
    assert ended["outcome"] == "counter" and ended["accused"] == 0


async def test_a_second_connection_with_the_secret_replaces_the_first_only_when_it_says_so(server):
    clients = await seat_four(server)
    bob = clients[1]
    twin = await TestClient.connect(server.port, "bob")
    refused = await twin.request(p.REJOIN, table=bob.table, secret=bob.secret)
    assert refused["kind"] == p.REFUSED and refused["reason"] == p.SEAT_IN_USE
    assert (await bob.request(p.PING))["kind"] == p.OK  # bob plays on, untouched
    not_a_flag = await twin.request(p.REJOIN, table=bob.table, secret=bob.secret, takeover=1)
    assert not_a_flag["kind"] == p.ERROR and not_a_flag["code"] == p.BAD_REQUEST
    assert (await twin.request(p.REJOIN, table=bob.table, secret=bob.secret, takeover=True))["kind"] == p.OK
    bye = None
    while bye is None or bye["kind"] != p.BYE:
        bye = await bob.next_frame()
        assert bye is not None
    assert bye["reason"] == "replaced"
    assert await bob.closed()


async def test_time_runs_on_server_sign_window_round_draw_and_break(server):
    """Nobody acts: the sign window opens the round, the round ends in a draw, the break ends (R7, R18)."""
    ann = await TestClient.connect(server.port, "ann")
    await ann.request(p.CREATE_TABLE, players=4, timing="quick")
    for _ in range(3):
        await ann.request(p.ADD_BOT, level="random")
    # Random bots might call or counter; all we need is that time moves the phases on by itself.
    await ann.request(p.START)
    await ann.wait_view(lambda v: v.phase is Phase.ROUND, timeout=5)
    await ann.wait_view(lambda v: v.phase in (Phase.BREAK, Phase.OVER), timeout=8)
    await ann.wait_view(lambda v: v.round == 2, timeout=5)


async def test_updates_are_numbered_per_seat_without_gaps(server):
    clients = await seat_four(server)
    await open_round(clients)
    ann = clients[0]
    for _ in range(3):
        await ann.request("take_channel")
        await trio.sleep(0.25)
        await ann.request("release_channel")
        await trio.sleep(0.25)
    for c in clients:
        await c.drain(0.2)
        seqs = [f["seq"] for f in c.frames if f["kind"] == p.UPDATE]
        assert seqs == list(range(1, len(seqs) + 1))


async def test_a_seat_is_not_told_when_another_team_picks_its_sign(server):
    """Even an empty update would time another team's private event (H3): none is sent."""
    clients = await seat_four(server)
    ann, bob = clients[0], clients[1]
    await bob.drain(0.1)
    before = len(bob.frames)
    assert (await ann.request("pick_sign", sign="fox"))["kind"] == p.OK
    await bob.drain(0.2)
    assert len(bob.frames) == before


async def test_a_room_nobody_returns_to_is_closed(server):
    server.lobby.abandon_after = server.lobby.unstarted_abandon_after = 0.3
    ann = await TestClient.connect(server.port, "ann")
    await ann.request(p.CREATE_TABLE, players=4)
    await ann.request(p.ADD_BOT)
    table = ann.table
    await ann.aclose()
    watcher = await TestClient.connect(server.port, "bob")
    with trio.fail_after(5):
        while table in server.lobby.rooms:
            await trio.sleep(0.05)
    assert (await watcher.request(p.LIST_TABLES))["tables"] == []


async def test_names_with_control_characters_are_refused(server):
    """Names reach other players' terminals: no escape sequences."""
    c = await TestClient.connect(server.port, hello=False)
    reply = await c.request(p.HELLO, version=p.PROTOCOL_VERSION, name="evil\x1b[2J")
    assert reply["kind"] == p.ERROR and reply["code"] == p.BAD_REQUEST and "printable" in reply["message"]


async def test_emoji_names_are_welcome(server):
    c = await TestClient.connect(server.port, hello=False)
    reply = await c.request(p.HELLO, version=p.PROTOCOL_VERSION, name="dev 👩‍💻 é")
    assert reply["kind"] == p.OK


@pytest.mark.parametrize("name", ["   ", "\u200b", "a\u2028b", "\u202eevil"])
async def test_blank_invisible_or_reordering_names_are_refused(server, name):
    c = await TestClient.connect(server.port, hello=False)
    reply = await c.request(p.HELLO, version=p.PROTOCOL_VERSION, name=name)
    assert reply["kind"] == p.ERROR and reply["code"] == p.BAD_REQUEST


async def test_a_failing_table_ends_alone(server, caplog):
    """A bug in one table closes that table (its players are told) and nothing else: the server serves on."""
    clients = await seat_four(server)
    other = await TestClient.connect(server.port, "zed")
    await other.request(p.CREATE_TABLE, players=4)
    room = server.lobby.rooms[clients[0].table]

    def broken_tick(now):
        raise RuntimeError("a table bug")

    watcher = await TestClient.connect(server.port, "watcher")  # in the lobby: told when the list changes
    room.tick = broken_tick
    room.on_change()
    listing = None
    while listing is None or clients[0].table in [t["table"] for t in listing["tables"]]:
        listing = await watcher.next_frame()
        assert listing is not None and listing["kind"] == p.LOBBY, listing  # the failed table leaves the list
    for c in clients:
        frame = None
        while frame is None or frame["kind"] != p.BYE:
            frame = await c.next_frame()
            assert frame is not None
        assert frame["reason"] == "table_failed"
        assert await c.closed()
    assert clients[0].table not in server.lobby.rooms
    assert (await other.request(p.PING))["kind"] == p.OK
    listing = await other.request(p.LIST_TABLES)
    assert [t["table"] for t in listing["tables"]] == [other.table]
    fresh = await TestClient.connect(server.port, "yan")
    assert (await fresh.request(p.JOIN, table=other.table))["kind"] == p.OK


async def test_r20_a_match_played_over_tcp_ends_with_its_winners(server):
    """Calls until a team reaches the two points of this match: every call scores for one of the two teams,
    so three rounds at most; then the match is over and says who won (R20)."""
    clients = await seat_four(server, timing="short")
    ann, bob = clients[0], clients[1]
    for round_no in (1, 2, 3):
        await open_round(clients)
        assert (await ann.request("call"))["kind"] == p.OK
        ended = await ann.wait_event("round_ended")
        assert ended["right"] == is_four_of_a_kind(ended["hands"][2])  # R13: the partner's hand
        if max(ended["scores"]) == 2:
            break
        await ann.wait_view(lambda v: v.phase is Phase.BREAK)
        assert (await ann.request("next_round"))["kind"] == p.OK
        for c in clients:
            await c.wait_view(lambda v, r=round_no: v.phase is Phase.SIGNING and v.round == r + 1)
    over = await ann.wait_event("match_over")
    scores = over["scores"]
    assert max(scores) == 2 and over["winners"] == [t for t, s in enumerate(scores) if s == 2]
    view = await bob.wait_view(lambda v: v.phase is Phase.OVER)
    assert view.winners == tuple(over["winners"])
    late = await bob.request("swap", give=view.hand[0], slot=0, take=view.center[0])
    assert late["kind"] == p.REFUSED and late["reason"] == "match_over"


async def test_a_leave_that_closes_a_table_tells_the_lobby_once(server):
    host = await TestClient.connect(server.port, "host")
    watcher = await TestClient.connect(server.port, "watcher")
    created = await host.request(p.CREATE_TABLE, players=4)
    await watcher.drain(0.2)
    before = len(watcher.frames)
    assert (await host.request(p.LEAVE))["kind"] == p.OK  # the only human leaves before the match: the table closes
    await watcher.drain(0.3)
    pushes = [frame for frame in watcher.frames[before:] if frame["kind"] == p.LOBBY]
    assert len(pushes) == 1, pushes
    assert created["table"] not in [t["table"] for t in pushes[0]["tables"]]


async def test_the_lobbys_watchers_get_one_list_for_a_burst_of_changes_and_it_is_the_latest(server):
    """Seating a table changes the lobby's list many times in a moment: a watcher of the lobby is sent the first
    change at once and the rest together (``LOBBY_PUSH_EVERY`` apart), never a list older than the last change;
    a ``hello`` after a change is answered with the changed list, not the one built before it."""
    from quatro_server.server import LOBBY_PUSH_EVERY

    watcher = await TestClient.connect(server.port, "eve")
    host = await TestClient.connect(server.port, "ann")
    assert (await host.request(p.CREATE_TABLE, players=8))["kind"] == p.OK
    for seat in range(1, 8):  # seven changes within a few milliseconds
        assert (await host.request(p.ADD_BOT, seat=seat, level="easy"))["kind"] == p.OK
    await watcher.drain(LOBBY_PUSH_EVERY * 4)
    pushes = [f for f in watcher.frames if f["kind"] == p.LOBBY]
    assert 1 <= len(pushes) <= 4, [len(f["tables"]) for f in pushes]
    (table,) = pushes[-1]["tables"]
    assert table["table"] == host.table and table["bots"] == 7
    late = await TestClient.connect(server.port, "fay", hello=False)
    hello = await late.request(p.HELLO, version=p.PROTOCOL_VERSION, name="fay")
    assert [t["bots"] for t in hello["tables"]] == [7]
    assert (await host.request(p.REMOVE_BOT, seat=7))["kind"] == p.OK
    again = await TestClient.connect(server.port, "gil", hello=False)
    hello = await again.request(p.HELLO, version=p.PROTOCOL_VERSION, name="gil")
    assert [t["bots"] for t in hello["tables"]] == [6]  # the list built a moment ago was not kept past the change
