"""Quatro's own messages read from a peer's maps: its actions, events and seat views, through the wire's codec of
its contract (``quatro_shared.wire.codec``). The wire reads every game the same way; these name Quatro's types for
the modules (its journal, its tests, the codec's benchmark) that read Quatro's messages alone."""

from __future__ import annotations

from typing import Any

from quatro_shared.games.quatro.actions import Action
from quatro_shared.games.quatro.contract import CONTRACT
from quatro_shared.games.quatro.events import Event
from quatro_shared.games.quatro.views import SeatView
from quatro_shared.wire import codec

CODEC = codec(CONTRACT)
#: The kinds of Quatro's player actions, and the kinds a server sends as its events.
ACTION_KINDS: frozenset[str] = frozenset(CODEC.actions)
EVENT_KINDS: frozenset[str] = frozenset(CODEC.events)


def action_from_wire(data: Any) -> Action:
    """A player's action from a peer's message, checked field by field. Raises ``quatro_shared.wire.WireError``.

    Only its player actions are accepted: ``connect`` and ``disconnect`` come from the server alone (R19).
    """
    return CODEC.action(data)


def event_from_wire(data: Any) -> Event:
    """An event from the server's message, rebuilt as its dataclass. Raises ``WireError``."""
    return CODEC.event(data)


def view_from_wire(data: Any) -> SeatView:
    """A seat's view (with or without ``"kind": "view"``). Raises ``WireError``."""
    return CODEC.view(data)
