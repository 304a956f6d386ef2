"""The wire forms of actions, events and views: every kind round-trips, and junk from a peer is refused by name."""

from __future__ import annotations

import ast
import dataclasses
import functools
import random
from pathlib import Path

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared import wire
from quatro_shared.framing import (
    MAX_ARRAY_LEN,
    MAX_DEPTH,
    MAX_FRAME_BYTES,
    MAX_MAP_LEN,
    MAX_STR_LEN,
    FrameDecoder,
    encode,
)
from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.actions import Reason
from quatro_shared.games.quatro.views import Phase, RoundSummary, SeatState, SeatView, VoteState
from quatro_shared.games.quatro.wire import ACTION_KINDS, EVENT_KINDS, action_from_wire, event_from_wire, view_from_wire
from quatro_shared.tables import Connect, Disconnect, TablePhase
from quatro_shared.wire import VIEW_KIND, WireError, request_from_wire, to_wire

from helpers.vocabulary import exported_subclasses
from quatro_server.games.quatro.engine import Table, view
from quatro_server.timing import FAST

# --- one sample of every kind ----------------------------------------------------------------------

ACTION_SAMPLES: dict[type, a.Action] = {
    a.Ready: a.Ready(),
    a.PickSign: a.PickSign("pineapple"),
    a.Swap: a.Swap("QH", 2, "10S"),
    a.TakeChannel: a.TakeChannel(),
    a.ReleaseChannel: a.ReleaseChannel(),
    a.ChooseEmoji: a.ChooseEmoji("owl"),
    a.Call: a.Call(),
    a.Counter: a.Counter(3),
    a.AskReshuffle: a.AskReshuffle(),
    a.Vote: a.Vote(False),
    a.NextRound: a.NextRound(),
    Connect: Connect(),
    Disconnect: Disconnect(),
}
#: Second samples for the fields that may also be None.
MORE_ACTIONS = [a.ChooseEmoji(None), a.Counter(None), a.Counter(), a.Vote(True), a.Swap("6C", 0, "AS")]

EVENT_SAMPLES: dict[type, e.Event] = {
    e.MatchStarted: e.MatchStarted(8, 5),
    e.SigningStarted: e.SigningStarted(1),
    e.SignChosen: e.SignChosen(2, "crab", 6),
    e.PlayerReady: e.PlayerReady(5),
    e.RoundOpened: e.RoundOpened(3),
    e.Dealt: e.Dealt(("AS", "KH", "QD", "JC"), 2, True),
    e.HandDealt: e.HandDealt(4, ("10S", "10H", "9D", "6C")),
    e.Swapped: e.Swapped(1, 3, "QH", "8S"),
    e.ChannelTaken: e.ChannelTaken(7),
    e.ChannelReleased: e.ChannelReleased(7),
    e.EmojiChosen: e.EmojiChosen(7, "fire"),
    e.Pulse: e.Pulse(7, "fire"),
    e.VoteStarted: e.VoteStarted(0, (1, 2, 3)),
    e.VoteCast: e.VoteCast(2, True),
    e.VoteEnded: e.VoteEnded(False, "timeout"),
    e.RoundEnded: e.RoundEnded(
        round=2,
        outcome="counter",
        by=1,
        accused=0,
        right=False,
        scorers=(0,),
        scores=(1, 0),
        hands=(("AS", "AH", "AD", "AC"), ("KS", "KH", "KD", "QC"), ("QS", "QH", "QD", "JC"), ("JS", "JH", "JD", "KC")),
        center=("10S", "10H", "10D", "10C"),
        signs=("moon", None),
        fours=(0,),
    ),
    e.BreakStarted: e.BreakStarted(2),
    e.MatchOver: e.MatchOver((0, 2), (5, 3, 5, 1)),
    e.SeatConnected: e.SeatConnected(3),
    e.SeatDisconnected: e.SeatDisconnected(3),
    e.HostChanged: e.HostChanged(2),
}
MORE_EVENTS = [
    e.SignChosen(0, "moon", None),
    e.EmojiChosen(1, None),
    e.HostChanged(None),
    e.VoteStarted(3, ()),
    e.RoundEnded(1, "draw", None, None, None, (), (0, 0), ((), ()), (), (None, None), ()),
]


def subclasses(base: type) -> set[type]:
    return set(exported_subclasses(base))


def through_the_wire(obj) -> dict:
    """``to_wire`` then a real frame round trip: what the other side's decoder hands over."""
    (message,) = FrameDecoder().feed(encode(to_wire(obj)))
    return message


def test_every_action_has_a_sample():
    assert set(ACTION_SAMPLES) == subclasses(a.Action) | {Connect, Disconnect}, "add a sample of the new action here"


def test_every_event_has_a_sample():
    assert set(EVENT_SAMPLES) == subclasses(e.Event), "add a sample of the new event here"


def test_the_kinds_on_the_wire_are_exactly_the_player_actions_and_the_events():
    assert ACTION_KINDS == {cls.kind for cls in a.PLAYER_ACTIONS}
    assert EVENT_KINDS == {cls.kind for cls in EVENT_SAMPLES}


# --- round trips ---------------------------------------------------------------------------------


@pytest.mark.parametrize("action", [ACTION_SAMPLES[cls] for cls in a.PLAYER_ACTIONS] + MORE_ACTIONS, ids=repr)
def test_every_player_action_round_trips(action):
    assert action_from_wire(through_the_wire(action)) == action


@pytest.mark.parametrize("event", list(EVENT_SAMPLES.values()) + MORE_EVENTS, ids=repr)
def test_every_event_round_trips(event):
    assert event_from_wire(through_the_wire(event)) == event


def test_the_wire_form_is_kind_plus_fields_with_lists_and_plain_strings():
    assert to_wire(a.Swap("QH", 2, "10S")) == {"kind": "swap", "give": "QH", "slot": 2, "take": "10S"}
    assert to_wire(a.Counter()) == {"kind": "counter", "team": None}
    assert to_wire(e.VoteStarted(0, (1, 2))) == {"kind": "vote_started", "seat": 0, "voters": [1, 2]}
    summary = m.TableSummary(1, "quatro", 4, 4, 0, TablePhase.PLAYING, "standard", False, (0, 0))
    wired = to_wire(summary)
    assert wired["phase"] == "playing" and type(wired["phase"]) is str


@pytest.mark.parametrize("action", [Connect(), Disconnect()])
def test_connect_and_disconnect_are_never_accepted_from_a_peer(action):
    with pytest.raises(WireError) as caught:
        action_from_wire(through_the_wire(action))
    assert caught.value.code == "unknown_kind"
    assert caught.value.reason == Reason.UNKNOWN_ACTION == p.UNKNOWN_ACTION


def play_a_match() -> tuple[list[SeatView], list[e.Event]]:
    """An 8-seat match with two humans (0 and 1) played to its end: a view of every seat at each
    interesting moment (signing, a round with swaps, a held channel, pulses and a running vote, the
    break after a counter, the match over), and every event the engine emitted."""
    table = Table(8, timing=FAST, rng=random.Random(1), bots=set(range(2, 8)))
    views: list[SeatView] = []
    emitted: list[e.Event] = []

    def act(seat, action, now):
        outcome = table.act(seat, action, now)
        emitted.extend(emit.event for emit in outcome.events)
        return outcome

    def snapshot(now):
        views.extend(view(table, seat, now) for seat in range(table.players))

    emitted.extend(emit.event for emit in table.start(0.0))
    snapshot(0.05)
    act(0, a.PickSign("fox"), 0.1)
    act(0, a.Ready(), 0.2)
    act(1, a.Ready(), 0.3)
    assert table.phase is Phase.ROUND
    hand, center = table.hand(0), view(table, 0, 0.3).center
    assert act(0, a.Swap(hand[0], 1, center[1]), 0.4).ok
    assert act(0, a.TakeChannel(), 0.5).ok
    assert act(0, a.ChooseEmoji("watermelon"), 0.6).ok
    emitted.extend(emit.event for emit in table.advance(1.2))  # a pulse falls
    assert act(1, a.AskReshuffle(), 1.3).ok  # seat 0 must answer
    snapshot(1.4)
    assert act(0, a.Counter(1), 1.5).ok
    assert table.phase is Phase.BREAK
    snapshot(1.6)
    now = 1.6
    for _ in range(100):  # counters until a team reaches the target score
        if table.phase is Phase.OVER:
            break
        now += 0.1
        act(0, a.NextRound(), now)
        now += 0.1
        act(0, a.Ready(), now)
        act(1, a.Ready(), now)
        now += 0.1
        act(0, a.Counter(1), now)
    assert table.phase is Phase.OVER
    snapshot(now + 0.1)
    return views, emitted


@functools.cache
def played() -> tuple[list[SeatView], list[e.Event]]:
    """The match, played once on first use (not at import, so an engine bug fails tests, not collection)."""
    return play_a_match()


def real_views() -> list[SeatView]:
    return played()[0]


def real_events() -> list[e.Event]:
    return played()[1]


def test_the_match_shows_every_part_of_a_view():
    views = real_views()
    assert {v.phase for v in views} == {Phase.SIGNING, Phase.ROUND, Phase.BREAK, Phase.OVER}
    assert any(v.vote is not None for v in views)
    assert any(v.summary is not None and v.summary.outcome == "counter" for v in views)
    assert any(s.last_pulse is not None for v in views for s in v.seats)
    assert any(v.channel_sign is not None for v in views)
    assert any(v.winners for v in views)


def test_every_view_of_a_real_match_round_trips():
    for index, seat_view in enumerate(real_views()):
        message = through_the_wire(seat_view)
        assert message["kind"] == VIEW_KIND
        assert view_from_wire(message) == seat_view, (index, seat_view.phase, seat_view.seat)


def test_a_view_rebuilds_its_nested_types():
    rebuilt = view_from_wire(through_the_wire(next(v for v in real_views() if v.vote is not None)))
    assert type(rebuilt.phase) is Phase
    assert all(type(s) is SeatState for s in rebuilt.seats)
    assert type(rebuilt.vote) is VoteState
    assert type(rebuilt.hand) is tuple
    rebuilt = view_from_wire(through_the_wire(next(v for v in real_views() if v.summary is not None)))
    assert type(rebuilt.summary) is RoundSummary
    assert all(type(hand) is tuple for hand in rebuilt.summary.hands)


def test_a_view_is_accepted_without_its_kind():
    first = real_views()[0]
    message = through_the_wire(first)
    del message["kind"]
    assert view_from_wire(message) == first


def test_every_event_of_a_real_match_round_trips():
    assert {type(event) for event in real_events()} >= {e.RoundEnded, e.Pulse, e.VoteStarted, e.MatchOver}
    for event in real_events():
        assert event_from_wire(through_the_wire(event)) == event


# --- the largest messages fit the limits with room to spare --------------------------------------------


def shape(obj, depth=1) -> dict[str, int]:
    """The deepest nesting and the longest string, array and map in a decoded message."""
    out = {"depth": depth, "str": 0, "array": 0, "map": 0}
    if isinstance(obj, dict):
        out["map"] = len(obj)
        children = [*obj.keys(), *obj.values()]
    elif isinstance(obj, list):
        out["array"] = len(obj)
        children = obj
    else:
        return {**out, "depth": depth - 1, "str": len(obj) if isinstance(obj, str) else 0}
    for child in children:
        inner = shape(child, depth + 1)
        out = {key: max(out[key], inner[key]) for key in out}
    return out


def fullest_view() -> SeatView:
    """The largest view the vocabulary allows at 8 seats: the real break view with every optional part filled
    with its longest value (a running vote, pulses on every seat, the longest sign names, large countdowns)."""
    real = next(v for v in real_views() if v.summary is not None and v.players == 8)
    long_sign = max(("watermelon", "sunflower", "cherries"), key=len)
    big = 10**9
    seats = tuple(
        dataclasses.replace(s, last_pulse=long_sign, last_pulse_ms=big, next_pulse_ms=big) for s in real.seats
    )
    summary = dataclasses.replace(
        real.summary,
        hands=tuple(("10S", "10H", "10D", "10C") for _ in range(8)),
        signs=(long_sign,) * 4,
        fours=tuple(range(8)),
    )
    return dataclasses.replace(
        real,
        hand=("10S", "10H", "10D", "10C"),
        center=("10S", "10H", "10D", "10C"),
        sign=long_sign,
        seats=seats,
        phase_ms=big,
        swap_wait_ms=big,
        channel_wait_ms=big,
        channel_sign=long_sign,
        vote=VoteState(0, tuple(range(1, 8)), tuple(range(1, 8)), big),
        vote_wait_ms=big,
        summary=summary,
        winners=(0, 1, 2, 3),
    )


def frame_size(obj) -> int:
    return len(encode(to_wire(obj)))


def test_the_largest_realistic_messages_fit_comfortably_under_the_limits():
    round_ended = max((ev for ev in real_events() if isinstance(ev, e.RoundEnded)), key=frame_size)
    real_view = max(real_views(), key=frame_size)
    for obj in (fullest_view(), real_view, round_ended):
        data = encode(to_wire(obj))
        assert len(data) < MAX_FRAME_BYTES // 16, (type(obj).__name__, len(data))
        (message,) = FrameDecoder().feed(data)  # within every limit of the decoder
        found = shape(message)
        assert found["depth"] <= MAX_DEPTH // 2
        assert found["str"] <= MAX_STR_LEN // 8
        assert found["array"] <= MAX_ARRAY_LEN // 8
        assert found["map"] <= MAX_MAP_LEN // 2
    assert view_from_wire(through_the_wire(fullest_view())) == fullest_view()


# --- strict checks at the edge -------------------------------------------------------------------------

SWAP = {"kind": "swap", "give": "QH", "slot": 2, "take": "10S"}


@pytest.mark.parametrize(
    ("message", "code", "field"),
    [
        ({**SWAP, "slot": True}, "bad_field", "slot"),
        ({**SWAP, "slot": "2"}, "bad_field", "slot"),
        ({**SWAP, "slot": 2.0}, "bad_field", "slot"),
        ({**SWAP, "give": "ZZ"}, "bad_field", "give"),
        ({**SWAP, "take": None}, "bad_field", "take"),
        ({**SWAP, "take": ["QH"]}, "bad_field", "take"),
        ({"kind": "swap", "give": "QH", "slot": 2}, "missing_field", "take"),
        ({**SWAP, "seat": 3}, "extra_field", "seat"),
        ({"kind": "ready", "now": 1.0}, "extra_field", "now"),
        ({"kind": "pick_sign", "sign": "unicorn"}, "bad_field", "sign"),
        ({"kind": "pick_sign", "sign": None}, "bad_field", "sign"),
        ({"kind": "pick_sign"}, "missing_field", "sign"),
        ({"kind": "choose_emoji", "sign": 3}, "bad_field", "sign"),
        ({"kind": "choose_emoji"}, "missing_field", "sign"),
        ({"kind": "counter", "team": True}, "bad_field", "team"),
        ({"kind": "counter", "team": 1.0}, "bad_field", "team"),
        ({"kind": "counter", "team": "1"}, "bad_field", "team"),
        ({"kind": "vote", "yes": 1}, "bad_field", "yes"),
        ({"kind": "vote", "yes": "yes"}, "bad_field", "yes"),
        ({"kind": "vote"}, "missing_field", "yes"),
        ({"kind": "fly"}, "unknown_kind", "kind"),
        ({"kind": "event"}, "unknown_kind", "kind"),
        ({"kind": "action"}, "unknown_kind", "kind"),
        ({"kind": "swapped", "seat": 1, "slot": 3, "put_down": "QH", "taken": "8S"}, "unknown_kind", "kind"),
        ({"kind": 3}, "unknown_kind", "kind"),
        ({"give": "QH"}, "missing_field", "kind"),
    ],
)
def test_a_bad_action_is_refused_naming_its_field(message, code, field):
    with pytest.raises(WireError) as caught:
        action_from_wire(message)
    assert caught.value.code == code
    assert caught.value.field == field
    assert field in caught.value.message
    assert caught.value.reason == (p.UNKNOWN_ACTION if code == "unknown_kind" else p.BAD_ARGUMENT)


@pytest.mark.parametrize("message", [[1, 2], "swap", None, 3])
def test_an_action_is_a_map(message):
    with pytest.raises(WireError) as caught:
        action_from_wire(message)
    assert caught.value.code == "not_a_map"


def test_a_counter_may_leave_out_its_team_as_in_python():
    assert action_from_wire({"kind": "counter"}) == a.Counter()


def test_large_numbers_are_passed_on_for_the_engine_to_judge():
    # Range checks (slot 0-3, a team of this table) are the rules' business: they answer with a refusal.
    assert action_from_wire({**SWAP, "slot": -7}) == a.Swap("QH", -7, "10S")


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"kind": "dealt", "center": [1, "KH"], "redeals": 0, "reshuffle": False}, "center[0]"),
        ({"kind": "dealt", "center": "AS", "redeals": 0, "reshuffle": False}, "center"),
        ({"kind": "vote_started", "seat": 0, "voters": [1, None]}, "voters[1]"),
        ({"kind": "pulse", "seat": 0, "sign": None}, "sign"),
        ({"kind": "vote_ended", "passed": "no", "outcome": "refused"}, "passed"),
        ({"kind": "host_changed", "seat": False}, "seat"),
    ],
)
def test_a_bad_event_is_refused_naming_its_field(message, field):
    with pytest.raises(WireError) as caught:
        event_from_wire(message)
    assert caught.value.code == "bad_field"
    assert caught.value.field == field


def test_an_action_is_not_an_event():
    with pytest.raises(WireError) as caught:
        event_from_wire(to_wire(a.Ready()))
    assert caught.value.code == "unknown_kind"


def wired_view() -> dict:
    chosen = next(v for v in real_views() if v.summary is not None and v.vote is None)
    return msgpack.unpackb(msgpack.packb(to_wire(chosen)))


@pytest.mark.parametrize(
    ("path", "value", "code", "field"),
    [
        (("phase",), "nap", "bad_field", "phase"),
        (("phase",), None, "bad_field", "phase"),
        (("seats", 2, "team"), "x", "bad_field", "seats[2].team"),
        (("seats", 2), [], "bad_field", "seats[2]"),
        (("seats", 2, "extra"), 1, "extra_field", "seats[2].extra"),
        (("summary", "hands", 3, 1), "XX", "bad_field", "summary.hands[3][1]"),
        (("summary", "signs", 0), "unicorn", "bad_field", "summary.signs[0]"),
        (("vote",), {"by": 1}, "missing_field", "vote.voters"),
        (("kind",), "swap", "unknown_kind", "kind"),
    ],
)
def test_a_bad_view_is_refused_naming_its_field(path, value, code, field):
    message = wired_view()
    target = message
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    with pytest.raises(WireError) as caught:
        view_from_wire(message)
    assert caught.value.code == code
    assert caught.value.field == field


def test_a_view_missing_a_field_is_refused():
    message = wired_view()
    del message["seats"]
    with pytest.raises(WireError) as caught:
        view_from_wire(message)
    assert (caught.value.code, caught.value.field) == ("missing_field", "seats")


# --- fuzz: junk from a peer only ever raises WireError ---------------------------------------------------

junk = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)  # what msgpack can carry
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["QH", "10S", "pineapple", "round", "draw"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
all_kinds = sorted(ACTION_KINDS | EVENT_KINDS | {"connect", "disconnect", VIEW_KIND})


@st.composite
def messages(draw):
    """A message of a known kind whose fields are the right names most of the time, with junk values."""
    kind = draw(st.sampled_from(all_kinds) | st.text(max_size=8))
    sample = next((s for s in [*ACTION_SAMPLES.values(), *EVENT_SAMPLES.values()] if s.kind == kind), None)
    names = [f.name for f in dataclasses.fields(sample)] if sample is not None else []
    message = to_wire(sample) if sample is not None else {"kind": kind}
    for name in draw(st.lists(st.sampled_from(names) | st.text(max_size=6), max_size=3)) if names else []:
        message[name] = draw(junk)
    if draw(st.booleans()) and names:
        message.pop(draw(st.sampled_from(names)), None)
    return message


@settings(max_examples=400)
@given(messages())
def test_junk_messages_raise_nothing_but_wire_errors(message):
    for decode in (action_from_wire, event_from_wire, view_from_wire):
        try:
            rebuilt = decode(message)
        except WireError:
            continue
        assert decode(through_the_wire(rebuilt)) == rebuilt


@st.composite
def damaged_views(draw):
    """A real view's wire form with one value somewhere inside replaced by junk."""
    message = wired_view()
    target = message
    while True:
        keys = list(target) if isinstance(target, dict) else list(range(len(target)))
        if not keys:
            break
        key = draw(st.sampled_from(keys))
        if isinstance(target[key], (dict, list)) and draw(st.booleans()):
            target = target[key]
            continue
        target[key] = draw(junk)
        break
    return message


@settings(max_examples=300)
@given(damaged_views())
def test_damaged_views_raise_nothing_but_wire_errors(message):
    try:
        rebuilt = view_from_wire(message)
    except WireError:
        return
    assert view_from_wire(through_the_wire(rebuilt)) == rebuilt


cards = st.sampled_from(["AS", "KH", "QD", "JC", "10S", "9H", "8D", "7C", "6S"])
signs = st.sampled_from(["pineapple", "rocket", "watermelon", "clover"])
player_actions = st.one_of(
    st.builds(a.Ready),
    st.builds(a.PickSign, signs),
    st.builds(a.Swap, cards, st.integers(min_value=-(2**63), max_value=2**64 - 1), cards),
    st.builds(a.TakeChannel),
    st.builds(a.ReleaseChannel),
    st.builds(a.ChooseEmoji, st.none() | signs),
    st.builds(a.Call),
    st.builds(a.Counter, st.none() | st.integers(min_value=0, max_value=3)),
    st.builds(a.AskReshuffle),
    st.builds(a.Vote, st.booleans()),
    st.builds(a.NextRound),
)


@given(player_actions)
def test_any_player_action_round_trips(action):
    assert action_from_wire(through_the_wire(action)) == action


# --- shared stays a contract: no server, no client, no I/O ---------------------------------------------


@pytest.mark.parametrize("module", ["framing.py", "wire.py"])
def test_the_wire_layer_imports_neither_side_nor_any_io(module):
    tree = ast.parse((Path(__file__).parent.parent / "shared" / module).read_text())
    imported = {
        name.split(".")[0]
        for node in ast.walk(tree)
        for name in (
            [alias.name for alias in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else []
        )
    }
    assert not imported & {"quatro_server", "quatro_tui", "socket", "trio", "asyncio", "os", "io", "selectors"}


@pytest.mark.parametrize(
    "fields",
    [
        {"give": "QH", "slot": 2, "take": "10S"},
        {"give": "QH", "slot": -1, "take": "10S"},  # the seat and the rules judge the slot, not the wire
        {"give": "QH", "slot": True, "take": "10S"},
        {"give": "QH", "slot": 2.0, "take": "10S"},
        {"give": "QX", "slot": 2, "take": "10S"},
        {"give": "QH", "slot": 2, "take": 10},
        {"give": None, "slot": 2, "take": "10S"},
        {"give": "QH", "slot": 2},
        {"give": "QH", "slot": 2, "take": "10S", "extra": 1},
        {"give": "QH", "take": "10S", "extra": 1},
        {"give": "QH", "slot": 2, "took": "10S"},
    ],
)
def test_a_swap_is_checked_as_every_game_action_is(fields: dict) -> None:
    """``swap``'s quick check gives what the general one gives, for every shape of its fields."""
    frame = {"kind": "swap", "id": 5, **fields}
    got = request_from_wire(frame)
    try:
        expected = m.Request(5, "swap", wire._game_action("swap").build_message(dict(fields, kind="swap")))
    except WireError as exc:
        expected = m.Request(5, "swap", None, exc)
    assert (got.id, got.kind, got.body, type(got.invalid), str(got.invalid)) == (
        expected.id,
        expected.kind,
        expected.body,
        type(expected.invalid),
        str(expected.invalid),
    )
