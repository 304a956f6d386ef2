"""Quatro's ``update`` push: a batch of a table's events one seat may see (protocol section 11)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from quatro_shared import protocol as p
from quatro_shared.games.quatro.events import Event
from quatro_shared.games.quatro.views import Clock, OwnTimers, SeatView
from quatro_shared.messages import Push
from quatro_shared.tables import LEFT_OUT_AT_DEFAULT


@dataclass(frozen=True, slots=True)
class Update(Push):
    """A batch of a table's events this seat may see; ``seq`` numbers the seat's updates (protocol 3).

    A snapshot carries the seat's full ``view``; any other update carries what changed: the ``events`` and, when a
    countdown moved otherwise than by time passing, the table's countdowns (``clock``) and the seat's own cooldowns
    (``own``, left out there when both are 0); after only swaps and pulses, no clock, and ``own`` for the swapper
    alone; on the wire a part that is None is left out. ``at`` is when the server built the update, in milliseconds
    on its clock (only the difference between two updates means anything). A client applies them to its state
    (``quatro_shared.games.quatro.apply.Tracker``)."""

    table: int
    seq: int
    snapshot: bool
    at: int
    events: tuple[Event, ...]
    view: SeatView | None = field(default=None, metadata=LEFT_OUT_AT_DEFAULT)
    clock: Clock | None = field(default=None, metadata=LEFT_OUT_AT_DEFAULT)
    own: OwnTimers | None = field(default=None, metadata=LEFT_OUT_AT_DEFAULT)
    kind: ClassVar[str] = p.UPDATE
