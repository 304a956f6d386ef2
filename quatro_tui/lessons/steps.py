"""Each game's lesson as steps in order: what to do, the keys that do it, why, and the check that the player did it.

A check reads the client's own state (``quatro_tui.game.Game``: the view and the events its player was told), never
the server's: a step passes when the player really did the move. ``say`` names keys through ``keys``, which reads
them from the screen's bindings (as remapped), so the words never drift from the keys.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from quatro_shared import events as e
from quatro_shared import quarto as q
from quatro_shared import quatro
from quatro_shared.cards import display, is_four_of_a_kind, rank_counts, rank_of
from quatro_shared.views import Phase, SeatView

from quatro_tui import words
from quatro_tui.game import Game

#: A binding id to the keys that press it now, as the screen names them ("c", "space").
Keys = Callable[[str], str]

#: Pulses of an opponent's decoy the learner must sit through without countering.
DECOY_PULSES = 2


@dataclass(frozen=True)
class Step:
    """One move of a lesson: its title, what to do now (with the keys), why, and whether the player did it."""

    title: str
    say: Callable[[Game, Keys], str]
    why: str
    check: Callable[[Game], bool]


# --- reading the client's state --------------------------------------------------------------------------------

def round_events(game: Game) -> list[e.Event]:
    """The events of the latest round the player was told, from its opening on (the reveal included)."""
    events = list(game.events)
    for k in range(len(events) - 1, -1, -1):
        if isinstance(events[k], e.RoundOpened):
            return events[k:]
    return []


def round_end(game: Game) -> e.RoundEnded | None:
    """How the latest round ended, once it has."""
    ends = [ev for ev in round_events(game) if isinstance(ev, e.RoundEnded)]
    return ends[-1] if ends else None


def _view(game: Game) -> SeatView | None:
    return game.view


# --- Quatro's checks --------------------------------------------------------------------------------------------

def holds_four(game: Game) -> bool:
    """Swap toward four: the player's own hand is four of a kind."""
    view = _view(game)
    return view is not None and view.phase is Phase.ROUND and len(view.hand) == 4 and is_four_of_a_kind(view.hand)


def took_channel(game: Game) -> bool:
    """Take the channel: the player holds it, or took it this round."""
    view = _view(game)
    if view is None:
        return False
    return (view.phase is Phase.ROUND and view.channel_held) or any(
        isinstance(ev, e.ChannelTaken) and ev.seat == view.seat for ev in round_events(game))


def showed_sign(game: Game) -> bool:
    """Show the team's sign: a pulse of the player's channel showed it to the table."""
    view = _view(game)
    if view is None or view.sign is None:
        return False
    sign = game.signs.get(view.round, view.sign)
    return any(isinstance(ev, e.Pulse) and ev.seat == view.seat and ev.sign == sign for ev in round_events(game))


def called_right(game: Game) -> bool:
    """Read the partner's sign and call: the round ended on the player's own call, and it was right."""
    end, view = round_end(game), _view(game)
    return end is not None and view is not None and end.outcome == "call" and end.by == view.seat and bool(end.right)


def countered_right(game: Game) -> bool:
    """Spot an opponent's sign and counter: the round ended on the player's counter, and it was right."""
    end, view = round_end(game), _view(game)
    return end is not None and view is not None and end.outcome == "counter" and end.by == view.seat and bool(end.right)


def decoy_seen(game: Game) -> bool:
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

def _swap_words(game: Game, keys: Keys) -> str:
    view = _view(game)
    if view is None or view.phase is not Phase.ROUND or not view.hand:
        return "The round opens with four cards in your hand and four in the center."
    counts = rank_counts(view.hand)
    rank = max(counts, key=lambda r: counts[r])
    slots = [k for k, card in enumerate(view.center) if rank_of(card) == rank]
    gives = [k for k, card in enumerate(view.hand) if rank_of(card) != rank]
    if not slots or not gives:
        return f"Collect the {rank}s: swap a card of your hand for one of the center."
    hand, slot = gives[0], slots[0]
    ascii_only = game.ascii_only
    return (f"You hold {counts[rank]} {rank}s; the center has {display(view.center[slot], ascii_only)}. "
            f"Press {keys(f'hand-{hand + 1}')} (your {display(view.hand[hand], ascii_only)}), "
            f"then {keys(f'slot-{slot + 1}')} (the {display(view.center[slot], ascii_only)}) to swap them.")


def _sign(game: Game) -> str:
    view = _view(game)
    return words.sign(view.sign if view is not None else None, game.ascii_only, named=True)


def _partner(game: Game) -> str:
    view = _view(game)
    return game.raw_name(view.partner) if view is not None else "your partner"


def _partner_signed(game: Game) -> bool:
    """The partner's channel showed the team's sign this round."""
    view = _view(game)
    return view is not None and view.sign is not None and any(
        isinstance(ev, e.Pulse) and ev.seat == view.partner and ev.sign == view.sign for ev in round_events(game))


def _showing(game: Game, opponents: bool) -> str:
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
    return f"{game.raw_name(seat)} shows {words.sign(sign, game.ascii_only, named=True)}. "


QUATRO_STEPS: tuple[Step, ...] = (
    Step("Swap toward four", _swap_words,
         "Four of a kind wins your team a point, but only when your partner calls it.", holds_four),
    Step("Take the channel", lambda game, keys: f"Press {keys('channel')} to take your channel.",
         "Your channel is the only way to talk during a round: everyone sees you take it.", took_channel),
    Step("Show your team's sign", lambda game, keys: f"Press {keys('emoji-sign')}: your channel shows {_sign(game)} at "
         "its next pulse.",
         "Only your partner knows it is your sign. To the others it is one emoji among 24.", showed_sign),
    Step("Read your partner's sign, and call", lambda game, keys: (
        f"{_partner(game)} shows {_sign(game)}, your sign: they hold four. Press {keys('call')} for \"Quatro!\"."
        if _partner_signed(game) else
        f"Watch {_partner(game)}, your partner (at the top): their channel will show your sign, {_sign(game)}."),
         "\"Quatro!\" checks your partner's hand, never yours: their sign says they hold four.", called_right),
    Step("Spot their sign, and counter", lambda game, keys: (
        f"{_showing(game, opponents=True)}They took two cards of one rank from the center, then showed the same "
        f"emoji at every pulse: they hold four. Press {keys('counter')} before their partner calls."
        if _showing(game, opponents=True) else
        "Watch the other team, left and right: what they take from the center, what their channels show."),
         "\"Counter!\" wins if either player of the team you accuse holds four at that instant.", countered_right),
    Step("A decoy", lambda game, keys: (
        f"{_showing(game, opponents=True)}That player took nothing from the center: anyone may show any emoji. "
        f"Don't press {keys('counter')}: watch {DECOY_PULSES} pulses go by." if _showing(game, opponents=True) else
        "Watch the other team's channels, left and right: someone will show an emoji."),
         "A wrong counter gives the point to the team you accused.", decoy_seen),
)


def quatro_between(game: Game, keys: Keys, step: Step | None) -> str:
    """What the coach says outside a round: at signing, and at the reveal (why the round went as it did)."""
    view = _view(game)
    if view is None:
        return ""
    if view.phase is Phase.SIGNING:
        if view.sign is None:
            return (f"Pick your team's sign: move with {keys('sign-left')} {keys('sign-right')} {keys('sign-up')} "
                    f"{keys('sign-down')}, {keys('sign-pick')} picks it, {keys('ready')} when ready.")
        return f"Your sign is {_sign(game)}: press {keys('ready')} when ready."
    if view.phase is Phase.BREAK:
        end = round_end(game)
        said = ""
        if end is not None and step is not None:
            if end.outcome == "call" and end.by == view.partner and end.right:
                said = f"{_partner(game)} saw your sign and called: your team scores. "
            elif end.right:
                said = "Right: your team scores. "
            elif end.outcome == "call":
                said = "Wrong call: your partner did not hold four, so the other team scores. This round again. "
            elif end.outcome == "counter" and end.by == view.seat:
                said = "Wrong counter: nobody of that team held four, so they score. This round again. "
            else:
                said = "This round again. "
        return f"{said}Press {keys('next-round')} for the next round."
    return ""


# --- Quarto -----------------------------------------------------------------------------------------------------

def _quarto_view(game: Game) -> q.QuartoView | None:
    view = game.game_view
    return view if isinstance(view, q.QuartoView) else None


def _my_turns(view: q.QuartoView) -> list[str]:
    """The player's own entries of the game's moves (Q7): the starter gave first, then each took a turn."""
    if view.starter is None:
        return []
    mine = 0 if view.starter == view.seat else 1
    return [move for k, move in enumerate(view.moves) if k % 2 == mine]


def placed_a_piece(game: Game) -> bool:
    """Place: a piece the player was given stands on the board (a turn of theirs names a square)."""
    view = _quarto_view(game)
    return view is not None and any(move[:1] in q.COLUMNS and move[1:2] in q.ROWS for move in _my_turns(view))


def gave_a_piece(game: Game) -> bool:
    """Give: the player gave the other a piece (a turn of theirs names one)."""
    view = _quarto_view(game)
    return view is not None and any(len(part) == 4 for move in _my_turns(view) for part in move.split())


def winners(board: Sequence[int | None], piece: int) -> tuple[int, ...]:
    """The empty squares where ``piece`` completes a line sharing an attribute (Q4)."""
    out = []
    for square, held in enumerate(board):
        if held is None:
            trial = list(board)
            trial[square] = piece
            if q.winning_line(trial, square) is not None:
                out.append(square)
    return tuple(out)


def gave_safe_piece(game: Game) -> bool:
    """This piece hands them a win: with a piece in the pool that would win, the player gave one that does not."""
    view = _quarto_view(game)
    if view is None or view.phase is not q.Phase.PLAYING or view.turn == view.seat or view.in_hand is None:
        return False
    if view.step is not q.Step.PLACE:
        return False
    risky = any(winners(view.board, piece) for piece in (*view.pool, view.in_hand))
    return risky and not winners(view.board, view.in_hand)


def threat(view: q.QuartoView) -> tuple[tuple[int, ...], tuple[str, ...]] | None:
    """A line of three pieces sharing an attribute, its fourth square empty: the squares, and what they share."""
    for line in q.LINES:
        pieces = [view.board[s] for s in line if view.board[s] is not None]
        if len(pieces) == 3:
            shared = q.shared_attribute_names([p for p in pieces if p is not None])
            if shared:
                return line, shared
    return None


def _typed(text: str) -> str:
    """The keys that type ``text`` on the Quarto screen (a square's or a piece's name, Q7), one by one."""
    return " ".join(f"<{letter.lower()}>" for letter in text)


def _arrows(keys: Keys) -> str:
    """The cursor's keys, as words (the coach asks for the typed name; the arrows are the other way)."""
    return " ".join(keys(f"quarto-{way}").strip("<>") for way in ("left", "right", "up", "down"))


def _safe_pieces(view: q.QuartoView) -> list[int]:
    return [piece for piece in view.pool if not winners(view.board, piece)] or list(view.pool)


def _place_words(game: Game, keys: Keys) -> str:
    view = _quarto_view(game)
    if view is None or view.in_hand is None or view.turn != view.seat or view.step is not q.Step.PLACE:
        return _give_words(game, keys) if view is not None and view.turn == view.seat else (
            "Wait for the piece you are given.")
    square = next(s for s, p in enumerate(view.board) if p is None)
    return (f"You were given {q.format_piece(view.in_hand)} ({q.describe_piece(view.in_hand)}). Place it: type "
            f"{_typed(q.format_square(square))} for {q.format_square(square)} (or move with {_arrows(keys)}), then "
            f"press {keys('quarto-confirm')}.")


def _give_words(game: Game, keys: Keys) -> str:
    view = _quarto_view(game)
    if view is None or view.turn != view.seat:
        return "Wait for the other player's move."
    if view.step is q.Step.PLACE:
        return _place_words(game, keys)
    piece = _safe_pieces(view)[0]
    return (f"Now give a piece of the pool: type {_typed(q.format_piece(piece))} for {q.format_piece(piece)} (or "
            f"move to one with {_arrows(keys)}), then press {keys('quarto-confirm')}.")


def _safe_words(game: Game, keys: Keys) -> str:
    view = _quarto_view(game)
    found = threat(view) if view is not None else None
    if view is None or found is None or view.turn != view.seat or view.step is not q.Step.GIVE:
        return _give_words(game, keys)
    line, shared = found
    squares = " ".join(q.format_square(s) for s in line if view.board[s] is not None)
    piece = _safe_pieces(view)[0]
    return (f"{squares} are all {' and '.join(shared)}: a piece that is {shared[0]} too hands them a win. Give one "
            f"that is not: type {_typed(q.format_piece(piece))} for {q.format_piece(piece)} "
            f"({q.describe_piece(piece)}), then {keys('quarto-confirm')}.")


QUARTO_STEPS: tuple[Step, ...] = (
    Step("Place the piece you were given", _place_words,
         "You never choose what you place: the other player does, and you choose what they place.", placed_a_piece),
    Step("Give a piece", _give_words, "Every turn ends with a gift: the piece the other player must place.",
         gave_a_piece),
    Step("This piece hands them a win", _safe_words,
         "Four in a line sharing an attribute wins for whoever places the fourth.", gave_safe_piece),
)


def quarto_between(game: Game, keys: Keys, step: Step | None) -> str:
    """What the coach says between games: why the last one ended."""
    view = _quarto_view(game)
    if view is None or view.phase is not q.Phase.BETWEEN:
        return ""
    if view.winner is not None and view.winner != view.seat and view.line is not None:
        return (f"The piece you gave completed {' '.join(q.format_square(s) for s in view.line)}, all "
                f"{' and '.join(view.shared)}: it handed them the win. Press {keys('quarto-next')} to try again.")
    return f"Press {keys('quarto-next')} for the next game."


@dataclass(frozen=True)
class Lesson:
    """A game's lesson: its steps, and what the coach says outside them."""

    game: str
    steps: tuple[Step, ...]
    between: Callable[[Game, Keys, Step | None], str]


#: Every game's lesson, by the game's name.
LESSONS: dict[str, Lesson] = {
    quatro.CONTRACT.name: Lesson(quatro.CONTRACT.name, QUATRO_STEPS, quatro_between),
    q.CONTRACT.name: Lesson(q.CONTRACT.name, QUARTO_STEPS, quarto_between),
}


def advance(lesson: Lesson, done: int, game: Game) -> int:
    """The steps passed, in order: ``done`` and every next one whose check now holds."""
    while done < len(lesson.steps) and lesson.steps[done].check(game):
        done += 1
    return done

