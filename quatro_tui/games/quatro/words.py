"""How the client words Quatro beyond the words of its client state (``quatro_tui.words``): a refused swap's card."""

from __future__ import annotations

from quatro_shared.games.quatro.actions import Swap
from quatro_shared.messages import Reply, RequestBody

from quatro_tui import words


def refusal(request: RequestBody, reply: Reply, ascii_only: bool) -> str:
    """A refused request in words, a swap's with the card it asked for ("too slow — Q♥ was taken")."""
    take = request.take if isinstance(request, Swap) else None
    return words.refusal(request, reply, card=words.card(take, ascii_only) if take is not None else None)
