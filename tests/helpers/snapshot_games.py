"""Hand-made tables for the client's screenshots and dialog tests: fixed views, fixed names, a frozen clock.

No server: every screen is built from a ``SeatView`` written out here, with a seeded random generator (where
the sign grid's cursor starts), so its picture never changes unless the client's drawing does.
"""

from __future__ import annotations

import random
from dataclasses import replace

from quatro_shared.games.quatro.cards import deck_for, ranks_for
from quatro_shared.games.quatro.views import TABLE_PHASE, Phase, RoundSummary, SeatState, SeatView, VoteState
from quatro_shared.messages import LobbyList, SeatInfo, Seating, TableSummary
from quatro_shared.wire import push_from_wire, to_wire

from quatro_tui.games.quatro import words as quatro_words
from quatro_tui.games.quatro.table import QuatroTable

NAMES = ("ann", "bob", "cid", "dee", "eve", "fay", "gus", "hal")
#: The frozen clock: every view "arrived" at this instant and time never moves.
NOW = 1000.0
#: The seed of every game's random generator.
SEED = 4
TIMING = {
    "sign_window": 30.0,
    "swap_cooldown": 2.0,
    "channel_cooldown": 2.0,
    "pulse_interval": 5.0,
    "pulse_shown": 1.0,
    "vote_window": 20.0,
    "vote_gap": 30.0,
    "round_length": 180.0,
    "break_length": 30.0,
    "target_score": 5,
}


def seating(players: int, phase: Phase) -> Seating:
    return Seating(
        table=7,
        players=players,
        phase=TABLE_PHASE[phase],
        host=0,
        timing=TIMING,
        timing_name="standard",
        seats=tuple(
            SeatInfo(
                i,
                NAMES[i] if i in (0, 1) else f"normal-bot-{i}",
                None if i in (0, 1) else "normal",
                taken=True,
                connected=i != 1 or phase is Phase.LOBBY,
            )
            for i in range(players)
        ),
    )


def seats(players: int, phase: Phase, held: bool = True) -> tuple[SeatState, ...]:
    """The partner pulses the team's sign (fox); with 6 or 8 players an opponent (seat 2) pulses a decoy."""
    teams = players // 2
    in_round = phase is Phase.ROUND and held
    pulses = {teams: "fox"} | ({2: "owl"} if players > 4 else {})
    out = []
    for i in range(players):
        pulse = pulses.get(i) if in_round else None
        holding = in_round and (i == 0 or i in pulses)
        out.append(
            SeatState(
                seat=i,
                team=i % teams,
                bot=i not in (0, 1),
                connected=i != 1,
                ready=phase is Phase.SIGNING and i != 0,
                channel_held=holding,
                last_pulse=pulse,
                last_pulse_ms=300 if pulse else None,
                next_pulse_ms=4700 if holding else None,
            )
        )
    return tuple(out)


def _view(players: int, phase: Phase, **changes) -> SeatView:
    ranks = ranks_for(players)
    base = dict(
        seat=0,
        players=players,
        team=0,
        partner=players // 2,
        phase=phase,
        round=3,
        hand=(),
        center=(),
        sign=None,
        seats=seats(players, phase),
        scores=tuple([2, 1, 0, 3][: players // 2]),
        target_score=5,
        host=0,
        phase_ms=None,
        swap_wait_ms=0,
        channel_wait_ms=0,
        channel_held=False,
        channel_sign=None,
        vote=None,
        vote_wait_ms=0,
        reshuffle_used=False,
        summary=None,
        winners=(),
        pulse_interval_ms=5000,
    )
    if phase is Phase.ROUND:
        base.update(
            hand=(f"{ranks[2]}H", f"{ranks[2]}S", f"{ranks[4]}D", f"{ranks[1]}C"),
            center=(f"{ranks[2]}D", f"{ranks[3]}S", f"{ranks[0]}H", f"{ranks[4]}C"),
            sign="fox",
            phase_ms=151_300,
            swap_wait_ms=1200,
            channel_wait_ms=0,
            channel_held=True,
            channel_sign="fox",
        )
    base.update(changes)
    return SeatView(**base)


def _game(players: int, phase: Phase, view: SeatView | None, feed: list[str]) -> QuatroTable:
    game = QuatroTable(clock=lambda: NOW, rng=random.Random(SEED))
    game.seat(seating(players, phase))
    game.my_seat = 0
    if view is not None:
        game.apply(view, [], NOW)
    for line in feed:
        game.say(line)
    return game


def room_game(players: int) -> QuatroTable:
    return _game(players, Phase.LOBBY, None, ["bob took seat 2."])


def signing_game(players: int) -> QuatroTable:
    view = _view(players, Phase.SIGNING, sign="fox", phase_ms=21_400, round=3)
    return _game(
        players,
        Phase.SIGNING,
        view,
        ["Round 3: pick your team's sign.", "Your team's sign: 🦊 fox (picked by normal-bot-2)."],
    )


def round_game(players: int, hand: tuple[str, ...] | None = None, vote: bool = False) -> QuatroTable:
    changes = {}
    if hand is not None:
        changes["hand"] = hand
    if vote:
        changes["vote"] = VoteState(by=1, voters=(0,), yes=(), remaining_ms=14_200)
    view = _view(players, Phase.ROUND, **changes)
    feed = [
        "Round 3 opens: swap!",
        "normal-bot-2 put down Q♦, took K♣.",
        "you put down A♠, took Q♠.",
        "normal-bot-2 took the channel.",
        "too slow — 10♥ was taken",
        "bob dropped out.",
    ]
    return _game(players, Phase.ROUND, view, feed)


def _summary(players: int) -> RoundSummary:
    ranks = ranks_for(players)
    teams = players // 2
    four = tuple(ranks[1] + s for s in "SHDC")  # the partner's four of a kind
    rest = [card for card in deck_for(players) if card not in four]
    rest = rest[1::2] + rest[::2]  # a fixed, mixed-looking order
    hands = []
    for i in range(players):
        hands.append(four if i == teams else tuple(rest[:4]))
        rest = rest[4:] if i != teams else rest
    return RoundSummary(
        round=3,
        outcome="call",
        by=0,
        accused=None,
        right=True,
        scorers=(0,),
        hands=tuple(hands),
        center=tuple(rest[:4]),
        signs=tuple(["fox", "owl", "crab", "moon"][:teams]),
        fours=(teams,),
    )


def reveal_game(players: int) -> QuatroTable:
    view = _view(
        players, Phase.BREAK, summary=_summary(players), phase_ms=24_000, scores=tuple([3, 1, 0, 3][: players // 2])
    )
    return _game(players, Phase.BREAK, view, ["you called Quatro! — right: team A scores."])


def over_game(players: int) -> QuatroTable:
    scores = tuple([5, 1, 0, 5][: players // 2])
    winners = tuple(t for t, s in enumerate(scores) if s == 5)
    view = _view(players, Phase.OVER, summary=_summary(players), scores=scores, winners=winners)
    verb = "wins" if len(winners) == 1 else "win"
    return _game(players, Phase.OVER, view, [f"{quatro_words.teams_text(winners)} {verb} the match!"])


def renamed(seating: Seating, names: dict[int, str]) -> Seating:
    """The seating with some seats' names changed (as a rename or a new player would)."""
    seats = tuple(replace(s, name=names.get(s.seat, s.name)) for s in seating.seats)
    return replace(seating, seats=seats)


def tables(*summaries: dict) -> tuple[TableSummary, ...]:
    """Table summaries given in their wire form, read as a client reads the server's ``lobby`` push."""
    listing = push_from_wire({"kind": "lobby", "tables": list(summaries)})
    assert isinstance(listing, LobbyList)
    return listing.tables


def sent_fields(body: object) -> tuple[str, dict]:
    """A request as a test notes it: its kind and its fields as they would go on the wire."""
    wire = to_wire(body)
    return wire.pop("kind"), wire


def watched_game(players: int, phase: Phase) -> QuatroTable:
    """The table of ``round_game`` or ``reveal_game`` as a watcher sees it: from no seat, three watching."""
    from dataclasses import replace

    from quatro_shared.tables import NO_SEAT

    mine = dict(
        seat=NO_SEAT,
        team=NO_SEAT,
        partner=NO_SEAT,
        hand=(),
        sign=None,
        channel_held=False,
        channel_sign=None,
        swap_wait_ms=0,
        channel_wait_ms=0,
    )
    if phase is Phase.ROUND:
        view = _view(players, Phase.ROUND, **mine)
        feed = [
            "Round 3 opens: swap!",
            "normal-bot-2 put down Q♦, took K♣.",
            "ann took the channel.",
            "ann put down A♠, took Q♠.",
            "normal-bot-2 took the channel.",
        ]
    else:
        view = _view(
            players,
            Phase.BREAK,
            summary=_summary(players),
            phase_ms=24_000,
            scores=tuple([3, 1, 0, 3][: players // 2]),
            **mine,
        )
        feed = ["ann called Quatro! — right: team A scores."]
    game = QuatroTable(clock=lambda: NOW, rng=random.Random(SEED))
    game.seat(replace(seating(players, phase), watchers=3))
    game.watching = 7
    game.apply(view, [], NOW)
    for line in feed:
        game.say(line)
    return game
