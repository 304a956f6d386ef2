"""What every table has, whatever its game: the words the platform (the lobby, the wire, the client core, every
screen that is not a game's) speaks of a table.

A game's own vocabulary (its actions, events, views and their phases) lives in its folder, ``shared/games/<game>/``;
generic code reads a table through these words and the game's contract (``quatro_shared.game.GameContract``), never
through a game's modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import ClassVar

#: A field's metadata: on the wire the field is left out while it holds its default (``quatro_shared.wire.to_wire``),
#: and a peer reading it takes a field left out for its default. An update's optional parts, the clock's vote, a
#: cooldown that is 0, a flag that is off.
LEFT_OUT_AT_DEFAULT: Mapping[str, bool] = MappingProxyType({"left_out_at_default": True})

#: The seat of a view from no seat: a watcher's (protocol section 18). Its team is this too; it holds nothing of its
#: own and sees only what the whole table sees.
NO_SEAT = -1


class TablePhase(StrEnum):
    """Where a table is, as the lobby lists it and the ``table`` push tells it (protocol 9): the same four words
    for every game. A game's view says more (its own phases, turns and steps)."""

    LOBBY = "lobby"  # seats filling: the match has not started
    PLAYING = "playing"  # the match is under way: a round, a game, or what comes before one
    BETWEEN = "between"  # between two rounds or games of the match: a break
    OVER = "over"  # the match is over


@dataclass(frozen=True, slots=True)
class Connect:
    """A seat's player is back (Quatro's R19; every game's seats come and go). The server's action for the seat,
    never accepted from a peer: each game lists it among its contract's ``server_actions``."""

    kind: ClassVar[str] = "connect"


@dataclass(frozen=True, slots=True)
class Disconnect:
    """A seat's player is gone for now; the seat and what it holds stay. The server's action, as ``Connect``."""

    kind: ClassVar[str] = "disconnect"
