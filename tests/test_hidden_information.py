"""The hidden-information contract (H1–H3), checked on every frame of many random games over real TCP.

One server plays a dozen matches at once (4, 6 and 8 seats; humans driven at random by the test, bots of
every level), with the "quick" timing so that rounds are short: signs, ready, swaps, channels, emojis,
reshuffle requests and votes, calls and counters, the host's next round, and a player who drops and
comes back with the seat secret. While they play, the test records the engine's true state at the very
moment each update is built (hands, center, signs, chosen emojis), keyed by the seat and the update's
number. Then every frame each client received is held against that truth:

- H1: an update's view shows the seat's own hand and its own team's sign, never another's; no card of
  another seat's hand appears anywhere in a frame unless it is public (in the center, or moved by a public
  swap in that same update), and no other team's sign appears unless a public pulse showed it, until the
  reveal (``round_ended`` and the break's summary).
- H2: the server's bots are given exactly a seat's view (a ``SeatView``, equal to what that seat's player
  would be sent) and only the events that seat may see; never a ``Table``.
- H3: no frame carries a seat secret, except the reply to that client's own create/join; seating and lobby
  messages carry no card, sign or secret; every update holds nothing but the declared fields.
- H1 for watchers (protocol section 18): every table is watched from no seat (one watcher from before the match,
  on some tables a second from the middle of it). A watcher's every frame holds no hand, no team's sign and no
  seat's chosen emoji before the reveal, and is exactly what the public events of its batch make of the public
  view: its events are the batch's public ones, its state is the engine's view from no seat.

The games are played once per module (a module fixture running its own trio loop and server), and each
test checks its part of the contract on the recording.
"""

from __future__ import annotations

import dataclasses
import random
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import trio

from quatro_shared import protocol as p
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.cards import is_card
from quatro_shared.games.quatro.signs import SIGNS, is_sign
from quatro_shared.games.quatro.views import Clock, OwnTimers, Phase, SeatView
from quatro_shared.games.quatro.wire import EVENT_KINDS, event_from_wire, view_from_wire
from quatro_shared.tables import NO_SEAT
from quatro_shared.wire import push_from_wire, to_wire

from conftest import QUICK
from helpers.countdowns import assert_same_view
from helpers.netclient import TestClient
from quatro_server.games.quatro import engine as engine_module
from quatro_server.games.quatro.bots import LEVELS
from quatro_server.games.quatro.engine import Table
from quatro_server.games.quatro.updates import Batch
from quatro_server.server import Server, ServerConfig
from quatro_server.tables.lobby import Lobby
from quatro_server.tables.room import Room
from quatro_server.timing import PROFILES
from quatro_server.tools.audit import PRIVATE_KEYS, keys, recent_leaks, update_leaks, values, watcher_frame_leaks

#: (seats, humans, bots): the humans take the seats the bots leave free. Every table size, all-human
#: tables, a lone human among bots, and bots of every level.
GAMES: list[tuple[int, int, int]] = [
    (4, 4, 0),
    (4, 2, 2),
    (4, 1, 3),
    (4, 3, 1),
    (6, 6, 0),
    (6, 3, 3),
    (6, 2, 4),
    (8, 8, 0),
    (8, 4, 4),
    (8, 2, 6),
    (8, 5, 3),
    (6, 4, 2),
]
#: Seconds of play per match (rounds are 3 s at most with the quick timing, plus a 0.5 s break).
PLAY_SECONDS = 7.0

REPLY_KINDS = (p.OK, p.REFUSED, p.ERROR)


# --- what was recorded ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Truth:
    """The engine's state at the moment one update was built for one seat."""

    hands: tuple[tuple[str, ...], ...]
    center: tuple[str, ...]
    signs: tuple[str | None, ...]
    channel_signs: tuple[str | None, ...]
    phase: Phase
    view: SeatView  # the seat's view as the engine saw it then: what the client's state must equal


@dataclass
class Player:
    """One client connection and the seat it played (a player who rejoined has two, one per connection)."""

    game: int
    table: int
    seat: int
    team: int
    client: TestClient
    rejoined: bool = False
    closed: bool = False


@dataclass
class Watcher:
    """One connection watching a table from no seat."""

    table: int
    client: TestClient
    mid_match: bool


@dataclass(frozen=True)
class WatchTruth:
    """What the engine held when one watcher frame was built: the batch's public events and the view from no seat."""

    events: tuple[dict[str, Any], ...]
    view: SeatView
    snapshot: bool


@dataclass
class BotCall:
    table: int
    seat: int
    method: str
    args: tuple
    kwargs: dict
    matches_view: bool | None = None  # decide: the argument equals engine.view(table, seat, now)


@dataclass
class Recording:
    seed: int
    players: list[Player] = field(default_factory=list)
    truth: dict[tuple[int, int, int], list[Truth]] = field(default_factory=lambda: defaultdict(list))
    secrets: dict[tuple[int, int], str] = field(default_factory=dict)  # (table, seat) -> the seat's secret
    bot_calls: list[BotCall] = field(default_factory=list)
    bots: dict[tuple[int, int], Any] = field(default_factory=dict)
    rounds_ended: int = 0
    teams: dict[int, int] = field(default_factory=dict)  # table -> number of teams
    #: Frames built from a batch that held events their seat may not see, and those of them whose bytes differ
    #: from the frame of the same batch without those events: (table, seat, seq, frame, frame without).
    in_hidden_company: int = 0
    hinted: list[tuple[int, int, int, bytes, bytes]] = field(default_factory=list)
    watchers: list[Watcher] = field(default_factory=list)
    nursery: Any = None  # where the watchers from before a match read
    #: (table, the watchers' seq) -> what each watcher frame of that number was built from.
    watch_truth: dict[tuple[int, int], list[WatchTruth]] = field(default_factory=lambda: defaultdict(list))


# --- playing ------------------------------------------------------------------------------------------------------


def record_truth(recording: Recording, table_id: int, table: Any, seat: int, seq: int, now: float) -> None:
    """The truth behind the update numbered ``seq`` built for ``seat`` (test-side only)."""
    recording.truth[(table_id, seat, seq)].append(
        Truth(
            hands=tuple(table.hand(i) for i in range(table.players)),
            center=tuple(table.center),
            signs=tuple(table.signs),
            channel_signs=tuple(s.channel_sign for s in table._seats),
            phase=table.phase,
            view=engine_module.view(table, seat, now),
        )
    )


def wrap_update(recording: Recording, original):
    """Room._update, recording the truth behind each update it builds (test-side only)."""

    def _update(self: Room, batch: Any, seat: int, seen: tuple[int, ...], snapshot: bool) -> bytes:
        message = original(self, batch, seat, seen, snapshot)
        seq = self.seats[seat].seq
        record_truth(recording, self.id, self.table, seat, seq, batch.now)
        if isinstance(batch, Batch) and len(seen) < len(batch.emits):
            # The same batch as if only what this seat sees had happened: the seat's frame must not differ (H3).
            alone = Batch(self.id, batch.table, [batch.emits[i] for i in seen], batch.now)
            without = alone.update(seat, seq, tuple(range(len(seen))), snapshot)
            recording.in_hidden_company += 1
            if without != message:
                recording.hinted.append((self.id, seat, seq, message, without))
        return message

    return _update


def wrap_public_deltas(recording: Recording, original):
    """Batch.public_deltas (the frames of a batch every seat sees whole), recording the truth behind each."""

    def public_deltas(self: Batch) -> Any:
        delta = original(self)
        if delta is None:
            return None

        def recorded(seat: int, seq: int) -> bytes:
            message = delta(seat, seq)
            record_truth(recording, self.table_id, self.table, seat, seq, self.now)
            return message

        return recorded

    return public_deltas


def wrap_tell_watchers(recording: Recording, original):
    """Room._tell_watchers, recording the public events and the view from no seat behind each watcher frame."""

    def _tell_watchers(self: Room, batch: Any) -> None:
        before = self.watch_seq
        synced = self.watch_synced
        original(self, batch)
        if self.watch_seq != before:
            public = tuple(to_wire(emit.event) for emit in batch.emits if emit.seat is None and emit.team is None)
            view = engine_module.view(self.table, NO_SEAT, batch.now)
            recording.watch_truth[(self.id, self.watch_seq)].append(WatchTruth(public, view, not synced))

    return _tell_watchers


def wrap_watch_snapshot(recording: Recording, original):
    def watch_snapshot(self: Room, peer: Any, now: float) -> None:
        original(self, peer, now)
        if self.table is not None:
            view = engine_module.view(self.table, NO_SEAT, now)
            recording.watch_truth[(self.id, self.watch_seq)].append(WatchTruth((), view, True))

    return watch_snapshot


async def watch(recording: Recording, port: int, table: int, name: str, mid_match: bool, stop_at: float) -> None:
    """A watcher of ``table``: it only reads, until ``stop_at``."""
    c = await TestClient.connect(port, name)
    reply = await c.request(p.WATCH, table=table)
    assert reply["kind"] == p.OK, reply
    recording.watchers.append(Watcher(table, c, mid_match))
    while trio.current_time() < stop_at:
        await c.drain(0.1)


def spy_on_bot(recording: Recording, room: Room, seat: int) -> None:
    """Wrap one bot's decide and observe to record what it is given (H2)."""
    bot = room.seats[seat].bot
    decide, observe = bot.decide, bot.observe

    def spied_decide(*args, **kwargs):
        call = BotCall(room.id, seat, "decide", args, kwargs)
        if len(args) == 2 and not kwargs and isinstance(args[0], SeatView) and room.table is not None:
            call.matches_view = args[0] == engine_module.view(room.table, seat, args[1])
        recording.bot_calls.append(call)
        return decide(*args, **kwargs)

    def spied_observe(*args, **kwargs):
        recording.bot_calls.append(BotCall(room.id, seat, "observe", args, kwargs))
        return observe(*args, **kwargs)

    bot.decide, bot.observe = spied_decide, spied_observe
    recording.bots[(room.id, seat)] = bot


def choose_action(view: SeatView | None, rng: random.Random) -> tuple[str, dict[str, Any]] | None:
    """A random, mostly legal action for a human at ``view`` (refusals are fine: they are part of play)."""
    if view is None or view.phase in (Phase.LOBBY, Phase.OVER):
        return None
    if view.phase is Phase.SIGNING:
        roll = rng.random()
        if roll < 0.35 and view.sign is None:
            return "pick_sign", {"sign": rng.choice(SIGNS)}
        if roll < 0.6 and not view.seats[view.seat].ready:
            return "ready", {}
        return None
    if view.phase is Phase.BREAK:
        if view.host == view.seat and rng.random() < 0.25:
            return "next_round", {}
        return None
    vote = view.vote
    if vote is not None and view.seat in vote.voters and view.seat not in vote.yes and rng.random() < 0.6:
        return "vote", {"yes": rng.random() < 0.7}
    roll = rng.random()
    if roll < 0.45:
        slot = rng.randrange(len(view.center))
        return "swap", {"give": rng.choice(view.hand), "slot": slot, "take": view.center[slot]}
    if roll < 0.55:
        return ("release_channel" if view.channel_held else "take_channel"), {}
    if roll < 0.70:
        if not view.channel_held:
            return "take_channel", {}
        sign = rng.choice([view.sign, rng.choice(SIGNS), None])
        return "choose_emoji", {"sign": sign}
    if roll < 0.73:
        return "ask_reshuffle", {}
    if roll < 0.745:
        return "call", {}
    if roll < 0.76:
        others = [t for t in range(view.players // 2) if t != view.team]
        return "counter", {"team": rng.choice(others)}
    if roll < 0.78:  # a card that is not ours: refused, and nothing leaks through the refusal
        return "swap", {"give": rng.choice(view.center), "slot": 0, "take": view.center[0]}
    return None


async def drive(
    recording: Recording, player: Player, rng: random.Random, stop_at: float, port: int, rejoin_at: float | None
) -> None:
    """One human: look (read for a moment), act, again, until ``stop_at``; maybe drop and come back once."""
    c = player.client
    while trio.current_time() < stop_at:
        await c.drain(rng.uniform(0.03, 0.15))
        if rejoin_at is not None and trio.current_time() >= rejoin_at:
            rejoin_at = None
            player.closed = True
            await c.aclose()
            await trio.sleep(0.2)
            c = await TestClient.connect(port, c.name)
            reply = await c.request(p.REJOIN, table=player.table, secret=recording.secrets[(player.table, player.seat)])
            assert reply["kind"] == p.OK and reply["seat"] == player.seat, reply
            player = dataclasses.replace(player, client=c, rejoined=True)
            recording.players.append(player)
            continue
        action = choose_action(c.view, rng)
        if action is None:
            continue
        kind, fields = action
        c.pending.clear()  # every frame stays in c.frames
        reply = await c.request(kind, **fields)
        assert reply["kind"] in (p.OK, p.REFUSED), (kind, fields, reply)  # well-formed requests are never errors


async def play_game(
    recording: Recording, server: Server, index: int, players: int, humans: int, bots: int, rng: random.Random
) -> None:
    port = server.port
    host = await TestClient.connect(port, f"g{index}s0")
    created = await host.request(p.CREATE_TABLE, players=players, timing="quick")
    assert created["kind"] == p.OK, created
    table = created["table"]
    room = server.lobby.rooms[table]
    recording.teams[table] = players // 2
    bot_seats = rng.sample(range(1, players), bots)
    for seat in bot_seats:
        reply = await host.request(p.ADD_BOT, seat=seat, level=rng.choice(LEVELS))
        assert reply["kind"] == p.OK, reply
        spy_on_bot(recording, room, seat)
    start_watching = trio.current_time()
    await watch_until_started(recording, port, table, f"g{index}w0", start_watching + 1.0 + PLAY_SECONDS)
    clients = [host]
    for n in range(humans - 1):
        c = await TestClient.connect(port, f"g{index}h{n + 1}")
        reply = await c.request(p.JOIN, table=table)
        assert reply["kind"] == p.OK, reply
        clients.append(c)
    for c in clients:
        recording.secrets[(table, c.seat)] = c.secret
        recording.players.append(Player(index, table, c.seat, c.seat % (players // 2), c))
    assert (await host.request(p.START))["kind"] == p.OK
    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        for i, c in enumerate(clients):
            player = next(pl for pl in recording.players if pl.client is c)
            # In games with several humans, the last one drops once and comes back with the secret (R19).
            rejoin_at = start + rng.uniform(1.5, 4.0) if humans > 1 and i == len(clients) - 1 else None
            nursery.start_soon(
                drive, recording, player, random.Random(rng.getrandbits(32)), start + PLAY_SECONDS, port, rejoin_at
            )
        if index % 2:  # a second watcher, from the middle of the match
            await trio.sleep(rng.uniform(1.0, 3.0))
            nursery.start_soon(watch, recording, port, table, f"g{index}w1", True, start + PLAY_SECONDS)


async def watch_until_started(recording: Recording, port: int, table: int, name: str, stop_at: float) -> None:
    """A watcher of ``table`` from before its match, reading in the background until ``stop_at``."""
    ready = trio.Event()

    async def watching() -> None:
        c = await TestClient.connect(port, name)
        reply = await c.request(p.WATCH, table=table)
        assert reply["kind"] == p.OK, reply
        recording.watchers.append(Watcher(table, c, False))
        ready.set()
        while trio.current_time() < stop_at:
            await c.drain(0.1)

    recording.nursery.start_soon(watching)
    await ready.wait()


async def play_all(recording: Recording) -> None:
    lobby = Lobby(timing_profiles={**PROFILES, "quick": QUICK}, seed=recording.seed)
    # A dozen tables and their players, all from 127.0.0.1: more than one address may hold.
    server = Server(lobby, ServerConfig(trusted_addresses=frozenset({"127.0.0.1"})))
    rng = random.Random(recording.seed)
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(server.serve, "127.0.0.1", 0)
        server.port = listeners[0].socket.getsockname()[1]
        # The watchers from before a match read in a nursery of their own, so that every one of them has stopped
        # reading before the last frames are drained below: two tasks may not read one connection.
        async with trio.open_nursery() as early_watchers:
            recording.nursery = early_watchers
            async with trio.open_nursery() as games:
                for index, (players, humans, bots) in enumerate(GAMES):
                    games.start_soon(
                        play_game, recording, server, index, players, humans, bots, random.Random(rng.getrandbits(32))
                    )
        open_players = [pl for pl in recording.players if not pl.closed]
        for player in open_players:  # what is already on its way
            player.client.pending.clear()
            await player.client.drain(0.02)
        for player in open_players:
            await player.client.aclose()
        for watcher in recording.watchers:
            await watcher.client.drain(0.02)
            await watcher.client.aclose()
        nursery.cancel_scope.cancel()


@pytest.fixture(scope="module")
def recording() -> Recording:
    recording = Recording(seed=random.randrange(2**32))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Room, "_update", wrap_update(recording, Room._update))
        mp.setattr(Batch, "public_deltas", wrap_public_deltas(recording, Batch.public_deltas))
        mp.setattr(Room, "_tell_watchers", wrap_tell_watchers(recording, Room._tell_watchers))
        mp.setattr(Room, "watch_snapshot", wrap_watch_snapshot(recording, Room.watch_snapshot))
        trio.run(play_all, recording)
    recording.rounds_ended = sum(
        1 for pl in recording.players if not pl.rejoined for ev in pl.client.events if ev["kind"] == "round_ended"
    )
    return recording


# --- walking frames ---------------------------------------------------------------------------------------------


def updates(recording: Recording) -> Iterator[tuple[Player, dict[str, Any], Truth]]:
    """Every update any client received, with the truth recorded when it was built."""
    for player in recording.players:
        for frame in player.client.frames:
            if frame["kind"] != p.UPDATE:
                continue
            assert frame["table"] == player.table, (player, frame["table"])
            recorded = recording.truth.get((player.table, player.seat, frame["seq"]))
            assert recorded, f"no truth recorded for table {player.table} seat {player.seat} seq {frame['seq']}"
            yield player, frame, recorded[0]


def seed_note(recording: Recording) -> str:
    return f"(seed {recording.seed})"


# --- the checks ---------------------------------------------------------------------------------------------------


def test_the_games_were_played_for_real(recording):
    """Guards the other tests: they check something only if the matches went through their phases."""
    note = seed_note(recording)
    assert len({pl.table for pl in recording.players}) == len(GAMES), note
    kinds = defaultdict(int)
    for player in recording.players:
        for ev in player.client.events:
            kinds[ev["kind"]] += 1
    for kind in (
        "hand_dealt",
        "swapped",
        "sign_chosen",
        "channel_taken",
        "emoji_chosen",
        "pulse",
        "round_ended",
        "vote_started",
        "seat_disconnected",
        "seat_connected",
    ):
        assert kinds[kind] > 0, (kind, dict(kinds), note)
    assert recording.rounds_ended >= len(GAMES), (recording.rounds_ended, note)
    assert any(pl.rejoined for pl in recording.players), note
    assert sum(len(v) for v in recording.truth.values()) > 1000, note


def test_h1_a_view_shows_only_the_own_hand_and_the_own_teams_sign(recording):
    """Checked on the state each client built (a snapshot's view, or the last state with an update applied)."""
    note = seed_note(recording)
    checked = 0
    for player, frame, truth in updates(recording):
        view = player.client.views.get(frame["seq"])
        if view is None:
            continue  # dropped while the client waited for a snapshot (a gap): never shown
        if frame["snapshot"]:
            assert view == view_from_wire(frame["view"])
        where = (player.table, player.seat, frame["seq"], note)
        assert view.seat == player.seat and view.team == player.team, where
        assert view.hand == truth.hands[player.seat], (view.hand, truth.hands, where)
        assert view.sign == truth.signs[player.team], (view.sign, truth.signs, where)
        assert view.channel_sign == truth.channel_signs[player.seat], where
        assert view.center == truth.center, where
        if view.phase in (Phase.SIGNING, Phase.ROUND):
            assert view.summary is None, where  # the reveal is only ever the last round's, after it ended
        checked += 1
    assert checked > 500, note


def test_h1_private_events_reach_only_their_seat_or_team(recording):
    note = seed_note(recording)
    for player, frame, truth in updates(recording):
        for ev in frame["events"]:
            kind = ev["kind"]
            if kind == "hand_dealt":
                assert ev["seat"] == player.seat, (player, ev, note)
            elif kind == "sign_chosen":
                assert ev["team"] == player.team, (player, ev, note)
                assert ev["sign"] == truth.signs[player.team], (player, ev, truth.signs, note)
            elif kind == "emoji_chosen":
                assert ev["seat"] == player.seat, (player, ev, note)


def test_h1_no_card_of_another_hand_and_no_other_teams_sign_before_the_reveal(recording):
    """Walk every value of every update (the reveal set aside): each card is the seat's own, in the center, or
    moved by a public swap in that very update; each sign is the own team's, the seat's own emoji, or shown
    by a public pulse."""
    note = seed_note(recording)
    leaks = []
    for player, frame, truth in updates(recording):
        # The same check quatro-server soak runs on the wire, here held against the engine's truth.
        found = update_leaks(
            frame,
            player.seat,
            player.team,
            own_hand=truth.hands[player.seat],
            center=truth.center,
            own_sign=truth.signs[player.team],
            own_emoji=truth.channel_signs[player.seat],
            truth=True,
        )
        leaks.extend((leak, player.table, player.seat, frame["seq"]) for leak in found)
    assert not leaks, (leaks[:10], len(leaks), note)


def test_h1_the_reveal_comes_after_the_round_and_tells_the_truth(recording):
    """``round_ended`` is where hands and signs become public: after the round, showing what the engine held."""
    note = seed_note(recording)
    seen = 0
    for player, frame, truth in updates(recording):
        for ev in frame["events"]:
            if ev["kind"] == "round_ended":
                assert truth.phase is not Phase.ROUND, (truth.phase, note)
                if truth.phase in (Phase.BREAK, Phase.OVER):  # (not when the break already ended in the same batch)
                    assert [tuple(h) for h in ev["hands"]] == list(truth.hands), (ev, truth, note)
                    assert tuple(ev["signs"]) == truth.signs, (ev, truth, note)
                seen += 1
    assert seen > 0, note


def test_h2_bots_decide_from_the_seats_view_and_observe_only_its_events(recording):
    note = seed_note(recording)
    decides = [c for c in recording.bot_calls if c.method == "decide"]
    observes = [c for c in recording.bot_calls if c.method == "observe"]
    assert len(decides) > 100 and len(observes) > 100, (len(decides), len(observes), note)
    for call in decides:
        assert not call.kwargs and len(call.args) == 2, call
        view, now = call.args
        assert type(view) is SeatView and isinstance(now, float), call
        assert view.seat == call.seat, call
        assert call.matches_view, ("a bot was given something else than its seat's view", call.table, call.seat)
    teams = recording.teams
    for call in observes:
        assert not call.kwargs and len(call.args) == 1, call
        (events,) = call.args
        assert events and all(isinstance(ev, e.Event) for ev in events), call
        team = call.seat % teams[call.table]
        for ev in events:
            if isinstance(ev, e.HandDealt):
                assert ev.seat == call.seat, (call.table, call.seat, ev)
            elif isinstance(ev, e.SignChosen):
                assert ev.team == team, (call.table, call.seat, ev)
            elif isinstance(ev, e.EmojiChosen):
                assert ev.seat == call.seat, (call.table, call.seat, ev)
    for key, bot in recording.bots.items():
        assert not list(reachable_tables(bot)), (key, "a bot holds a reference to the engine's table")


def reachable_tables(obj: Any, depth: int = 0, seen: set[int] | None = None) -> Iterator[Any]:
    """Engine objects reachable from a bot's attributes (a few levels deep)."""
    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 4:
        return
    seen.add(id(obj))
    if isinstance(obj, (Table, Room, Lobby, Server)) or type(obj).__module__ == engine_module.__name__:
        yield obj
        return
    if isinstance(obj, dict):
        children = list(obj.values())
    elif isinstance(obj, (list, tuple, set, frozenset)):
        children = list(obj)
    elif hasattr(obj, "__dict__") or hasattr(obj, "__slots__"):
        children = list(getattr(obj, "__dict__", {}).values())
        for slot in getattr(type(obj), "__slots__", ()):
            if hasattr(obj, slot):
                children.append(getattr(obj, slot))
    else:
        return
    for child in children:
        if callable(child) and not isinstance(child, type) and hasattr(child, "__closure__"):
            continue  # the test's own spies close over the room
        yield from reachable_tables(child, depth + 1, seen)


def test_h3_no_frame_carries_a_secret_but_the_reply_to_ones_own_join(recording):
    note = seed_note(recording)
    all_secrets = set(recording.secrets.values())
    assert len(all_secrets) == len(recording.secrets)
    for player in recording.players:
        own = recording.secrets[(player.table, player.seat)]
        replies_with_secret = []
        for frame in player.client.frames:
            found = [v for v in values(frame) if isinstance(v, str) and v in all_secrets]
            has_key = "secret" in set(keys(frame))
            if not found and not has_key:
                continue
            # The only allowed one: ok to this client's own create_table/join, holding its own seat's secret.
            assert frame["kind"] == p.OK and found == [own] and frame.get("secret") == own, (player.seat, frame, note)
            assert frame.get("table") == player.table and frame.get("seat") == player.seat, note
            replies_with_secret.append(frame)
        assert len(replies_with_secret) == (0 if player.rejoined else 1), (player.table, player.seat, note)


def test_h3_seating_and_lobby_messages_hold_no_card_sign_or_secret(recording):
    note = seed_note(recording)
    secrets = set(recording.secrets.values())
    checked = 0
    for player in recording.players:
        for frame in player.client.frames:
            if frame["kind"] not in (p.TABLE, p.LOBBY, *REPLY_KINDS, p.BYE):
                continue
            private = PRIVATE_KEYS & set(keys(frame))
            if frame["kind"] == p.OK and frame.get("secret") is not None:
                private -= {"secret"}  # the join reply: checked by the test above
            assert not private, (frame, note)
            for value in values(frame):
                assert not is_card(value) and not is_sign(value), (value, frame, note)
                if frame.get("secret") is None:
                    assert value not in secrets, (frame, note)
            checked += frame["kind"] in (p.TABLE, p.LOBBY)
    assert checked > len(recording.players), note


def test_h1_a_rejoiners_look_back_holds_only_what_its_seat_may_see(recording):
    """Protocol 7's ``recent`` (a rejoiner's events of the match, for its feed) goes through the same gate as every
    update: only a rejoined connection gets one, before its snapshot, and it holds no other seat's hand or emoji
    and no other team's sign, whatever happened while the seat was away."""
    note = seed_note(recording)
    looked = 0
    for player in recording.players:
        kinds = [frame["kind"] for frame in player.client.frames]
        for at, frame in enumerate(player.client.frames):
            if frame["kind"] != p.RECENT:
                continue
            looked += 1
            assert player.rejoined and frame["table"] == player.table, (frame, note)
            assert p.UPDATE in kinds[at:] and p.UPDATE not in kinds[:at], (kinds, note)  # before the snapshot
            assert 0 < len(frame["events"]) <= p.MAX_RECENT_EVENTS, note
            assert not recent_leaks(frame, player.seat, player.team), (
                recent_leaks(frame, player.seat, player.team),
                note,
            )
            for ev in frame["events"]:
                event_from_wire(ev)
                assert ev["kind"] not in ("hand_dealt", "emoji_chosen") or ev["seat"] == player.seat, (ev, note)
                assert ev["kind"] != "sign_chosen" or ev["team"] == player.team, (ev, note)
                for value in values(ev):
                    assert value not in recording.secrets.values(), (ev, note)
    assert looked == sum(pl.rejoined for pl in recording.players) > 0, note


def test_h3_updates_hold_nothing_but_the_declared_fields(recording):
    """Even fields a client would ignore could leak (H3): an update is exactly its keys, a view and known events,
    each rebuilt strictly by quatro_shared.wire (which refuses any field a dataclass does not declare)."""
    note = seed_note(recording)
    view_fields = {f.name for f in dataclasses.fields(SeatView)} | {"kind"}
    clock_fields = {f.name for f in dataclasses.fields(Clock)}
    own_fields = {f.name for f in dataclasses.fields(OwnTimers)}
    snapshots = deltas = clockless = 0
    for player, frame, _ in updates(recording):
        if frame["snapshot"]:
            assert set(frame) == {"kind", "table", "seq", "snapshot", "at", "events", "view"}, (frame.keys(), note)
            assert set(frame["view"]) == view_fields, note
            view_from_wire(frame["view"])
            snapshots += 1
        else:
            # Protocol 3: what changed. The table's countdowns when one moved otherwise than by time passing.
            assert set(frame) - {"own", "clock"} == {"kind", "table", "seq", "snapshot", "at", "events"}, (
                frame.keys(),
                note,
            )
            if "clock" in frame:
                # A clock's fields at their default (no vote, no wait) are left out; an own map holds only what runs.
                assert {"phase_ms", "next_pulse_ms", "last_pulse_ms"} <= set(frame["clock"]) <= clock_fields, note
                assert "own" not in frame or (
                    set(frame["own"]) <= own_fields and frame["own"] and all(frame["own"].values())
                ), note
            else:
                # Only swaps and pulses leave the countdowns to run on; the seat's cooldowns come after its own swap.
                assert {ev["kind"] for ev in frame["events"]} <= {"swapped", "pulse"}, (frame, note)
                swapped = any(ev["kind"] == "swapped" and ev["seat"] == player.seat for ev in frame["events"])
                assert ("own" in frame) == swapped and set(frame.get("own", {})) <= own_fields, (frame, note)
                clockless += 1
            push_from_wire(frame)
            deltas += 1
        # An update with nothing in it would still tell *when* something private happened elsewhere.
        assert frame["events"] or frame["snapshot"], (frame, note)
        for ev in frame["events"]:
            assert ev["kind"] in EVENT_KINDS, (ev, note)
            event_from_wire(ev)
    assert snapshots > len(GAMES) and deltas > 10 * snapshots and deltas > clockless > deltas // 4, (
        snapshots,
        deltas,
        clockless,
        note,
    )


def test_h3_a_seats_frame_tells_nothing_of_the_events_of_its_batch_it_may_not_see(recording):
    """Every frame of a batch that held another seat's or team's private event (an emoji chosen, a sign picked, a
    hand dealt) is byte for byte the frame the same batch would have given without it: whether an update carries a
    ``clock`` or ``own`` depends only on what the seat is shown, else a swap's update would tell the other seats
    that the swapper (or a bot acting in the same tick) had just chosen an emoji."""
    note = seed_note(recording)
    assert recording.in_hidden_company > 50, (recording.in_hidden_company, note)
    shown = [
        (table, seat, seq, _frame_map(frame), _frame_map(without))
        for table, seat, seq, frame, without in recording.hinted[:3]
    ]
    assert not recording.hinted, (len(recording.hinted), recording.in_hidden_company, shown, note)


def watcher_updates(recording: Recording) -> Iterator[tuple[Watcher, dict[str, Any], WatchTruth]]:
    """Every update a watcher received, with what its frame was built from."""
    for watcher in recording.watchers:
        for frame in watcher.client.frames:
            if frame["kind"] != p.UPDATE:
                continue
            assert frame["table"] == watcher.table
            recorded = recording.watch_truth.get((watcher.table, frame["seq"]))
            assert recorded, f"no truth recorded for the watchers of table {watcher.table} seq {frame['seq']}"
            matching = [t for t in recorded if t.snapshot == frame["snapshot"] and list(t.events) == frame["events"]]
            yield watcher, frame, (matching or recorded)[0]


def test_watchers_followed_every_table(recording):
    """Guards the watcher checks: every table was watched, some from the middle of the match, through rounds."""
    note = seed_note(recording)
    assert {w.table for w in recording.watchers} == set(recording.teams), note
    assert any(w.mid_match for w in recording.watchers), note
    kinds = {
        ev["kind"] for w in recording.watchers for f in w.client.frames if f["kind"] == p.UPDATE for ev in f["events"]
    }
    assert {"dealt", "swapped", "pulse", "round_ended", "channel_taken"} <= kinds, (kinds, note)
    assert sum(1 for _ in watcher_updates(recording)) > 200, note


def test_h1_a_watcher_is_told_no_hand_no_sign_and_no_emoji_choice_before_the_reveal(recording):
    """Every frame a watcher received, held by the audit as the public audience's (``watcher_frame_leaks``),
    and against the engine's truth: a watcher's state holds the center alone, and no card or sign beyond what is
    public."""
    note = seed_note(recording)
    leaks = []
    for watcher in recording.watchers:
        for frame in watcher.client.frames:
            known = None
            if frame["kind"] == p.UPDATE:
                built = watcher.client.views.get(frame["seq"])
                known = None if built is None else to_wire(built)
            found = watcher_frame_leaks(frame, known=known, secrets=recording.secrets.values())
            leaks.extend((leak, watcher.table, frame.get("seq")) for leak in found)
    assert not leaks, (leaks[:10], len(leaks), note)
    for watcher, frame, truth in watcher_updates(recording):
        view = watcher.client.views[frame["seq"]]
        assert (view.seat, view.team, view.hand, view.sign, view.channel_sign) == (NO_SEAT, NO_SEAT, (), None, None)
        assert view.center == truth.view.center, note


def test_a_watchers_frame_is_what_the_public_events_of_its_batch_make_of_the_public_view(recording):
    """A watcher frame's events are exactly the public events of its batch, and the watcher's state built from
    them is the engine's view from no seat when the frame was built (countdowns run on within the slack)."""
    note = seed_note(recording)
    checked = 0
    for watcher, frame, truth in watcher_updates(recording):
        assert [ev for ev in frame["events"]] == [dict(ev) for ev in truth.events] or frame["snapshot"], (frame, note)
        built = watcher.client.views[frame["seq"]]
        if frame["snapshot"] or "clock" in frame:
            assert built == truth.view, (watcher.table, frame["seq"], note)
        else:
            assert_same_view(built, truth.view)  # type: ignore[arg-type]
        assert watcher.client.core.drift == 0, note
        checked += 1
    assert checked > 200, (checked, note)


def test_every_watcher_of_a_table_is_sent_the_same_frames(recording):
    """One frame per batch for the whole audience: after its snapshot, a watcher's frames are the others'."""
    note = seed_note(recording)
    compared = 0
    for table in recording.teams:
        streams = [
            {f["seq"]: f for f in w.client.frames if f["kind"] == p.UPDATE and not f["snapshot"]}
            for w in recording.watchers
            if w.table == table
        ]
        for a, b in zip(streams, streams[1:]):
            for seq in a.keys() & b.keys():
                assert a[seq] == b[seq], (table, seq, note)
                compared += 1
    assert compared > 20, note


def _frame_map(data: bytes) -> Any:
    import msgpack

    return msgpack.unpackb(data[4:], raw=False)


def test_each_clients_state_built_from_events_equals_the_servers_view_at_every_update(recording):
    """Protocol 3 over TCP: the state the client core built from updates (``quatro_shared.games.quatro.apply.Tracker``) is, at
    every update it received, the view the engine held for that seat when the update was built: exactly when the
    update carried the countdowns (or was a snapshot); otherwise every field but the countdowns exactly, and the
    countdowns, run on from the last ones to the update's ``at``, within 2 ms (roundings to the millisecond)."""
    note = seed_note(recording)
    checked = ran_on = 0
    for player, frame, truth in updates(recording):
        built = player.client.views.get(frame["seq"])
        if built is None:
            continue  # dropped while waiting for a snapshot
        if frame["snapshot"] or "clock" in frame:
            assert built == truth.view, (player.table, player.seat, frame["seq"], note)
        else:
            assert_same_view(built, truth.view)  # type: ignore[arg-type]
            ran_on += 1
        assert player.client.core.drift == 0, note
        checked += 1
    assert checked > 1000 and ran_on > 300, (checked, ran_on, note)


@pytest.mark.parametrize(
    ("choices", "private"),
    [
        ([], ("fox", 1.4)),  # a beat fell silent (no emoji yet), then an emoji is chosen late
        ([("fox", 0.2)], (None, 0.6)),  # an emoji chosen early, then cleared before the first beat
        ([("fox", 0.2)], ("owl", 1.2)),  # the emoji changed between two beats
        ([("fox", 0.2), (None, 0.6)], ("owl", 1.7)),  # cleared, a beat fell silent, chosen again
    ],
    ids=["late_choice", "cleared", "changed", "cleared_then_chosen_late"],
)
def test_h3_a_private_emoji_choice_changes_no_other_seats_view_before_the_pulse(choices, private):
    """Two tables, identical but for one private act of seat 0 (choosing or clearing its channel's emoji, R11).
    Until the next beat falls (when a pulse may show the emoji to all), no other seat's view may differ.
    Before commit bead939 a late choice reset the holder's ``next_pulse_ms`` from a stale 0 to the next beat,
    telling everyone an emoji had just been chosen (the late_choice and cleared_then_chosen_late cases failed)."""
    import copy

    from quatro_shared.games.quatro import actions as a

    from quatro_server.timing import FAST

    interval = FAST.pulse_interval
    table = Table(4, timing=FAST, rng=random.Random(7))
    table.start(0.0)
    for seat in range(4):
        table.act(seat, a.Ready(), 0.1)
    assert table.phase is Phase.ROUND
    taken_at = 1.0
    assert table.act(0, a.TakeChannel(), taken_at).ok
    for sign, beats in choices:
        assert table.act(0, a.ChooseEmoji(sign), taken_at + interval * beats).ok
    sign, beats = private
    at = taken_at + interval * beats
    twin = copy.deepcopy(table)
    assert table.act(0, a.ChooseEmoji(sign), at).ok
    twin.advance(at)
    next_beat = taken_at + interval * (int(beats) + 1)
    for step in range(1, 10):
        now = at + (next_beat - at) * step / 10
        for seat in (1, 2, 3):
            acted, did_not = engine_module.view(table, seat, now), engine_module.view(twin, seat, now)
            assert acted == did_not, (seat, now, acted.seats[0], did_not.seats[0])


def _batch_frames(table: Table, emits: list[Any], now: float) -> dict[int, bytes]:
    """Each seat's update frame for one batch (numbered 5), as the room sends it; a seat that sees none of the batch
    has no frame."""
    from quatro_shared.games.quatro import seating

    batch = Batch(1, table, emits, now)
    frames = {}
    for seat in range(table.players):
        seen = batch.seen_by(seat, seating.team_of(seat, table.players))
        if seen:
            frames[seat] = batch.update(seat, 5, seen, False)
    return frames


@pytest.mark.parametrize(
    "hidden",
    [(2, "fox"), (1, "fox"), (2, None)],
    ids=["another_seat_chose", "the_swapper_chose", "another_seat_cleared"],
)
def test_h3_a_seats_frame_is_the_same_whether_or_not_a_hidden_action_shared_its_batch(hidden):
    """One batch (a timer tick where several bots act, or a bot that swaps and raises its emoji at once) holds seat 1's
    swap and a private emoji choice; its twin holds the swap alone. Every seat that may not see the choice gets the
    very same bytes from both: a clock or cooldowns sent only because of the choice would tell when it was made."""
    import copy

    from quatro_shared.games.quatro import actions as a

    from quatro_server.timing import FAST

    table = Table(4, timing=FAST, rng=random.Random(11))
    table.start(0.0)
    for seat in range(4):
        table.act(seat, a.Ready(), 0.1)
    assert table.phase is Phase.ROUND
    chooser, sign = hidden
    assert table.act(chooser, a.TakeChannel(), 0.5).ok
    twin = copy.deepcopy(table)
    now = 0.5 + FAST.pulse_interval / 3  # between two beats: no pulse in the batch
    hand, center = table.hand(1), table.center
    swap = a.Swap(hand[0], 0, center[0])
    acted = table.act(1, swap, now)
    assert acted.ok
    chose = table.act(chooser, a.ChooseEmoji(sign), now)
    assert chose.ok and [type(emit.event) for emit in chose.events] == [e.EmojiChosen]
    alone = twin.act(1, swap, now)
    assert alone.ok
    with_choice = _batch_frames(table, acted.events + chose.events, now)
    without = _batch_frames(twin, alone.events, now)
    others = [seat for seat in range(4) if seat != chooser]
    assert set(with_choice) == set(without) | {chooser}
    for seat in others:
        assert with_choice[seat] == without[seat], (seat, _frame_map(with_choice[seat]), _frame_map(without[seat]))
