"""Quatro's guided first match (``quatro learn``): its steps in order, each checked from the client's state (the
view and the events the player was told), and what the coach says between rounds."""

from __future__ import annotations

from collections.abc import Sequence

from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.cards import Card, display, is_four_of_a_kind, rank_counts, rank_of
from quatro_shared.games.quatro.views import Phase, SeatView

from quatro_tui.games.quatro import words as quatro_words
from quatro_tui.games.quatro.table import QuatroTable
from quatro_tui.lessons.steps import Keys, Lesson, Step

#: Pulses of an opponent's decoy the learner must sit through without countering.
DECOY_PULSES = 2


def _view(game: QuatroTable) -> SeatView | None:
    return game.view


# --- reading a round's events -----------------------------------------------------------------------------------


def round_events(game: QuatroTable) -> list[e.Event]:
    """The events of the latest round the player was told, from its opening on (the reveal included)."""
    events = list(game.events)
    for k in range(len(events) - 1, -1, -1):
        if isinstance(events[k], e.RoundOpened):
            return events[k:]
    return []


def round_end(game: QuatroTable) -> e.RoundEnded | None:
    """How the latest round ended, once it has."""
    ends = [ev for ev in round_events(game) if isinstance(ev, e.RoundEnded)]
    return ends[-1] if ends else None


# --- Quatro's checks --------------------------------------------------------------------------------------------


def holds_four(game: QuatroTable) -> bool:
    """Swap toward four: the player's own hand is four of a kind."""
    view = _view(game)
    return view is not None and view.phase is Phase.ROUND and len(view.hand) == 4 and is_four_of_a_kind(view.hand)


def took_channel(game: QuatroTable) -> bool:
    """Take the channel: the player holds it, or took it this round."""
    view = _view(game)
    if view is None:
        return False
    return (view.phase is Phase.ROUND and view.channel_held) or any(
        isinstance(ev, e.ChannelTaken) and ev.seat == view.seat for ev in round_events(game)
    )


def showed_sign(game: QuatroTable) -> bool:
    """Show the team's sign: a pulse of the player's channel showed it to the table."""
    view = _view(game)
    if view is None or view.sign is None:
        return False
    sign = game.signs.get(view.round, view.sign)
    return any(isinstance(ev, e.Pulse) and ev.seat == view.seat and ev.sign == sign for ev in round_events(game))


def called_right(game: QuatroTable) -> bool:
    """Read the partner's sign and call: the round ended on the player's own call, and it was right."""
    end, view = round_end(game), _view(game)
    return end is not None and view is not None and end.outcome == "call" and end.by == view.seat and bool(end.right)


def countered_right(game: QuatroTable) -> bool:
    """Spot an opponent's sign and counter: the round ended on the player's counter, and it was right."""
    end, view = round_end(game), _view(game)
    return end is not None and view is not None and end.outcome == "counter" and end.by == view.seat and bool(end.right)


def decoy_seen(game: QuatroTable) -> bool:
    """The decoy: an opponent who took nothing from the center pulsed ``DECOY_PULSES`` times and the player did not
    counter, or the player countered it and saw the counter fail."""
    view = _view(game)
    if view is None:
        return False
    events = round_events(game)
    end = round_end(game)
    if end is not None and end.outcome == "counter" and end.by == view.seat:
        return end.right is False
    swapped = {ev.seat for ev in events if isinstance(ev, e.Swapped)}
    pulses: dict[int, int] = {}
    for ev in events:
        if isinstance(ev, e.Pulse) and game.team_of(ev.seat) != view.team and ev.seat not in swapped:
            pulses[ev.seat] = pulses.get(ev.seat, 0) + 1
    return max(pulses.values(), default=0) >= DECOY_PULSES


# --- what the coach says ---------------------------------------------------------------------------------------


def collect_rank(hand: Sequence[Card], center: Sequence[Card]) -> str:
    """The rank to collect: the one of the hand that the hand and the center hold most of together (four of it can be
    reached), the hand's own count breaking ties. After a wrong swap this is still the rank within reach, not the one
    the hand happens to list first."""
    in_center = rank_counts(center)
    counts = rank_counts(hand)
    return max(counts, key=lambda r: (counts[r] + in_center.get(r, 0), counts[r]))


def _how_to_swap(keys: Keys) -> str:
    """The swap's keys in general, for when no one swap is the one to name."""
    return (
        f"Press {keys('hand-1')}–{keys('hand-4')} to pick a card of your hand, then {keys('slot-1')}–"
        f"{keys('slot-4')} for the card of the center it swaps with."
    )


def _swap_words(game: QuatroTable, keys: Keys) -> str:
    view = _view(game)
    if view is None or view.phase is not Phase.ROUND or not view.hand:
        return "The round opens with four cards in your hand and four in the center."
    rank = collect_rank(view.hand, view.center)
    held = rank_counts(view.hand)[rank]
    slots = [k for k, card in enumerate(view.center) if rank_of(card) == rank]
    gives = [k for k, card in enumerate(view.hand) if rank_of(card) != rank]
    if not slots or not gives:
        return f"Collect one rank: four of it in your hand wins. {_how_to_swap(keys)}"
    hand, slot = gives[0], slots[0]
    ascii_only = game.ascii_only
    holding = f"one {rank}" if held == 1 else f"{held} {rank}s"
    return (
        f"You hold {holding}; the center has {display(view.center[slot], ascii_only)}. "
        f"Press {keys(f'hand-{hand + 1}')} (your {display(view.hand[hand], ascii_only)}), "
        f"then {keys(f'slot-{slot + 1}')} (the {display(view.center[slot], ascii_only)}) to swap them."
    )


def _sign(game: QuatroTable) -> str:
    view = _view(game)
    return quatro_words.sign(view.sign if view is not None else None, game.ascii_only, named=True)


def _partner(game: QuatroTable) -> str:
    view = _view(game)
    return game.raw_name(view.partner) if view is not None else "your partner"


def _partner_signed(game: QuatroTable) -> bool:
    """The partner's channel showed the team's sign this round."""
    view = _view(game)
    return (
        view is not None
        and view.sign is not None
        and any(
            isinstance(ev, e.Pulse) and ev.seat == view.partner and ev.sign == view.sign for ev in round_events(game)
        )
    )


def _showing(game: QuatroTable, opponents: bool) -> str:
    """Who of the other team took the channel this round, and what it showed last ("" before anything showed)."""
    view = _view(game)
    if view is None:
        return ""
    last: dict[int, str] = {}
    for ev in round_events(game):
        if isinstance(ev, e.Pulse) and (game.team_of(ev.seat) != view.team) == opponents and ev.seat != view.seat:
            last[ev.seat] = ev.sign
    if not last:
        return ""
    seat, sign = next(reversed(last.items()))
    return f"{game.raw_name(seat)} shows {quatro_words.sign(sign, game.ascii_only, named=True)}. "


QUATRO_STEPS: tuple[Step[QuatroTable], ...] = (
    Step(
        "Swap toward four",
        _swap_words,
        "Four of a kind wins your team a point, but only when your partner calls it.",
        holds_four,
    ),
    Step(
        "Take the channel",
        lambda game, keys: f"Press {keys('channel')} to take your channel.",
        "Your channel is the only way to talk during a round: everyone sees you take it.",
        took_channel,
    ),
    Step(
        "Show your team's sign",
        lambda game, keys: f"Press {keys('emoji-sign')}: your channel shows {_sign(game)} at its next pulse.",
        "Only your partner knows it is your sign. To the others it is one emoji among 24.",
        showed_sign,
    ),
    Step(
        "Read your partner's sign, and call",
        lambda game, keys: (
            f'{_partner(game)} shows {_sign(game)}, your sign: they hold four. Press {keys("call")} for "Quatro!".'
            if _partner_signed(game)
            else f"Watch {_partner(game)}, your partner (at the top): their channel will show your sign, {_sign(game)}."
        ),
        '"Quatro!" checks your partner\'s hand, never yours: their sign says they hold four.',
        called_right,
    ),
    Step(
        "Spot their sign, and counter",
        lambda game, keys: (
            f"{_showing(game, opponents=True)}They took two cards of one rank from the center, then showed the same "
            f"emoji at every pulse: they hold four. Press {keys('counter')} before their partner calls."
            if _showing(game, opponents=True)
            else "Watch the other team, left and right: what they take from the center, what their channels show."
        ),
        '"Counter!" wins if either player of the team you accuse holds four at that instant.',
        countered_right,
    ),
    Step(
        "A decoy",
        lambda game, keys: (
            f"{_showing(game, opponents=True)}That player took nothing from the center: anyone may show any emoji. "
            f"Don't press {keys('counter')}: watch {DECOY_PULSES} pulses go by."
            if _showing(game, opponents=True)
            else "Watch the other team's channels, left and right: someone will show an emoji."
        ),
        "A wrong counter gives the point to the team you accused.",
        decoy_seen,
    ),
)


def quatro_between(game: QuatroTable, keys: Keys, step: Step[QuatroTable] | None) -> str:
    """What the coach says outside a round: at signing, and at the reveal (why the round went as it did)."""
    view = _view(game)
    if view is None:
        return ""
    if view.phase is Phase.SIGNING:
        if view.sign is None:
            return (
                f"Pick your team's sign: move with {keys('sign-left')} {keys('sign-right')} {keys('sign-up')} "
                f"{keys('sign-down')}, {keys('sign-pick')} picks it, {keys('ready')} when ready."
            )
        return f"Your sign is {_sign(game)}: press {keys('ready')} when ready."
    if view.phase is Phase.BREAK:
        end = round_end(game)
        said = ""
        if end is not None and step is not None:
            if end.outcome == "call" and end.by == view.partner and end.right:
                said = f"{_partner(game)} saw your sign and called: your team scores. "
            elif end.right:
                said = "Right: your team scores. "
            elif end.outcome == "call" and end.by == view.partner:
                said = (
                    f"{_partner(game)} called on your sign, but you did not hold four yet: the other team "
                    "scores. Show your sign only once you hold four. This round again. "
                )
            elif end.outcome == "call" and end.by == view.seat:
                said = "Wrong call: your partner did not hold four, so the other team scores. This round again. "
            elif end.outcome == "counter" and end.by == view.seat:
                said = "Wrong counter: nobody of that team held four, so they score. This round again. "
            else:
                said = "This round again. "
        return f"{said}Press {keys('next-round')} for the next round."
    return ""


def quatro_last_words(game: QuatroTable) -> str:
    """Why the decoy round went as it did: the lesson's last step ends the lesson, so its reveal is said here."""
    view, end = _view(game), round_end(game)
    if view is None:
        return ""
    decoys = [ev.seat for ev in round_events(game) if isinstance(ev, e.Pulse) and game.team_of(ev.seat) != view.team]
    who = game.raw_name(decoys[-1]) if decoys else "that player"
    if end is not None and end.outcome == "counter" and end.by == view.seat and not end.right:
        return (
            f"Wrong counter: {who} held nothing of four, so their team scored. That was the decoy: anyone may "
            "show any emoji, and only one who took cards toward four can mean it."
        )
    return (
        f"You let the decoy go: {who} took nothing from the center, so the emoji meant nothing. A wrong "
        "counter would have given them the point."
    )


LESSON = Lesson(QUATRO_STEPS, quatro_between, quatro_last_words, match_starts=quatro_words.MATCH_STARTS)
