"""How the client words Quatro beyond the words of its client state (``quatro_tui.words``): a refused swap's card, and
its symbols in ASCII."""

from __future__ import annotations

from quatro_shared.games.quatro import cards, signs
from quatro_shared.games.quatro.actions import Swap
from quatro_shared.messages import Reply, RequestBody

from quatro_tui import words

#: Quatro's symbols beyond ASCII and their stand-ins (``quatro_tui.words.plain``): the suits' letters, the signs' names.
ASCII_STAND_INS: dict[str, str] = {symbol: letter for letter, symbol in cards.SUIT_SYMBOLS.items()} | {
    emoji: name for name, emoji in signs.EMOJI.items()
}


def refusal(request: RequestBody, reply: Reply, ascii_only: bool) -> str:
    """A refused request in words, a swap's with the card it asked for ("too slow — Q♥ was taken")."""
    take = request.take if isinstance(request, Swap) else None
    return words.refusal(request, reply, card=words.card(take, ascii_only) if take is not None else None)
