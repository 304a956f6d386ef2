"""How the client words Quatro beyond the words of its client state (``quatro_tui.words``): a refused swap's card, and
its symbols in ASCII."""

from __future__ import annotations

from quatro_shared.games.quatro import cards, signs, wording
from quatro_shared.games.quatro.actions import Swap
from quatro_shared.messages import Refused, Reply, RequestBody

from quatro_tui import words

#: Quatro's symbols beyond ASCII and their stand-ins (``quatro_tui.words.plain``): the suits' letters, the signs' names.
ASCII_STAND_INS: dict[str, str] = {symbol: letter for letter, symbol in cards.SUIT_SYMBOLS.items()} | {
    emoji: name for name, emoji in signs.EMOJI.items()
}


def refusal(request: RequestBody, reply: Reply, ascii_only: bool) -> str:
    """A refused request in words: a rule's refusal in the server's words (``quatro_shared.games.quatro.wording``),
    a swap's with the card it asked for drawn as this screen draws cards ("too slow — Q♥ was taken"); anything
    else in the platform's (``quatro_tui.words.refusal``)."""
    if not isinstance(reply, Refused) or str(reply.reason) not in wording.REFUSAL_WORDS:
        return words.refusal(request, reply)
    take = request.take if isinstance(request, Swap) else None
    return wording.refusal(
        str(reply.reason),
        reply.wait_ms / 1000 if reply.wait_ms is not None else None,
        action=getattr(request, "kind", None),
        card=words.card(take, ascii_only) if take is not None else None,
    )
