"""What the journal asks of a game: how its matches are written and read back (``Codec``).

The journal stores any game's match the same way: a ``start`` (the ``Opening``: the seats' bots, the host, the
seating order and the seed of the table's random source), then every input the rules table was given (``act``,
``advance``, ``rebase``) with the events it produced, and for a game that has them, ``checkpoint``s. What an action,
an event batch or a checkpoint looks like in the file, which batches change a table's scores or end its match, and
how the events read in ``quatro-server replay`` are the game's: each game of the registry (``quatro_server.games``)
supplies a ``Codec``, and this package never names a game.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, TypeVar

from quatro_server.journal.saved import SavedTable
from quatro_server.rules import RulesTable
from quatro_server.timing import Timing


def json_text(value: object) -> str:
    """A value as the journal writes JSON: compact."""
    return json.dumps(value, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class Opening:
    """What a match starts from, for every game: the seats played by bots, the host, the seating order (who became
    host next, longest seated first) and the seed of the table's random source (None: a table in memory only, whose
    source is the room's own). The ``start`` move records it; a restore builds the same table from it."""

    players: int
    bots: frozenset[int]
    host: int | None
    order: tuple[int, ...]
    seed: int | None = None

    def record(self) -> dict[str, object]:
        """The ``start`` move's input."""
        assert self.seed is not None
        return {"seed": f"{self.seed:032x}", "bots": sorted(self.bots), "host": self.host, "order": list(self.order)}

    @classmethod
    def from_record(cls, players: int, record: dict[str, Any]) -> Opening:
        """The opening a ``start`` move recorded. Raises ``KeyError``, ``TypeError`` or ``ValueError`` if malformed."""
        return cls(
            players=players,
            bots=frozenset(int(seat) for seat in record["bots"]),
            host=None if record["host"] is None else int(record["host"]),
            order=tuple(int(seat) for seat in record["order"]),
            seed=int(record["seed"], 16),
        )

    def rng(self, default: random.Random) -> random.Random:
        """The table's random source: seeded from ``seed`` when there is one (a journalled table), else ``default``."""
        return default if self.seed is None else random.Random(self.seed)


@dataclass(frozen=True, slots=True)
class Notes:
    """What a batch of events changes beyond the move itself. ``scores`` (with ``round``): a point was won, and the
    batch is committed before the room tells anyone (R20); ``over``: the match ended; ``checkpoint``: a checkpoint
    follows the move (restoring then replays only what came after)."""

    scores: tuple[int, ...] | None = None
    round: int = 0
    over: bool = False
    checkpoint: bool = False


#: A game's own types, as its journal encoding reads and writes them: its rules table, an action (a player's, or the
#: server's connect and disconnect), and what its table emits.
TableT = TypeVar("TableT", bound=RulesTable)
ActionT = TypeVar("ActionT")
EmitT_contra = TypeVar("EmitT_contra", contravariant=True)


class Checkpoints(Protocol[TableT]):
    """A game whose tables can be saved whole: a restore rebuilds the last one and replays only the moves after it."""

    def save(self, table: TableT) -> object:
        """The table and its random source's state as plain values (lists, numbers, strings), JSON-encoded by the
        journal's writer thread."""

    # ``data`` is what the journal's JSON gave back for ``save``'s value: the game's own shape, checked by ``load``.
    def load(self, data: Any, timing: Timing) -> TableT:
        """The table ``save`` gave ``data`` for. Raises ``ValueError`` (or ``KeyError``, ``TypeError``) if malformed."""


class Codec(Protocol[TableT, ActionT, EmitT_contra]):
    """How one game's matches are written to the journal and read back."""

    @property
    def checkpoints(self) -> Checkpoints[TableT] | None:
        """How its tables are saved whole; None: they are replayed from their match's start (short matches)."""

    def new_table(self, opening: Opening, timing: Timing, rng: random.Random) -> TableT:
        """The rules table a match of ``opening`` starts with (not started yet): the live room's and the restore's."""

    def encode_action(self, action: ActionT) -> str:
        """An accepted action (a player's, or the server's connect and disconnect) as the ``moves`` row keeps it."""

    def decode_action(self, text: str) -> ActionT:
        """The action ``encode_action`` wrote. Raises ``ValueError`` (a ``WireError`` is one) if malformed."""

    def encode_events(self, emits: Sequence[EmitT_contra]) -> str:
        """A batch of the table's events as the ``moves`` row keeps it; a replayed move must encode the same."""

    def events(self, text: str) -> list[dict[str, object]]:
        """The events ``encode_events`` wrote, as their wire dicts (``replay`` prints them)."""

    def routine(self, emits: Sequence[EmitT_contra]) -> bool:
        """Whether the batch changes nothing but the table's play (no score, no end, no checkpoint): asked for every
        move, on the event loop, so it must be cheap. ``notes`` is asked only when it says no."""

    def notes(self, emits: Sequence[EmitT_contra]) -> Notes:
        """What the batch changes beyond the move."""

    def over(self, table: TableT) -> bool:
        """Whether the table's match has ended (such a table is not restored)."""

    def header(self, saved: SavedTable) -> Iterator[str]:
        """``replay``'s header lines (each starting ``#``): the table, then one per seat."""

    def describe(self, event: dict[str, object]) -> tuple[str, str]:
        """One event in ``replay``'s notation: who (``s3``, or ``--`` for the table) and what."""


#: Any game's journal encoding: what the journal's writer, restore and replays are handed (each game's own ``Codec`` is
#: checked against its own types; the journal passes a game's values only back to the same codec).
AnyCodec: TypeAlias = "Codec[Any, Any, Any]"
