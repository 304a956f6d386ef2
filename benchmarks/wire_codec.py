"""What one message costs to encode and decode: the shared dataclasses with quatro_shared.wire, against msgspec Structs.

    python benchmarks/wire_codec.py [--repeat 5] [--seconds 0.2]

The messages are real: an 8-player ``update`` during a break (the largest message there is: the reveal, every
hand, a full view), a 4-player ``update`` of one swap during a round (the most frequent one), a ``lobby`` push
listing 50 tables, and a ``swap`` request. Both sides do the whole job at one end of the wire:

- encode: from the typed objects to the bytes of one frame (prefix included);
- decode: from the bytes of one frame to the typed objects, checked.

``dataclasses`` is what the project ships: ``quatro_shared.wire.to_wire`` then ``quatro_shared.framing.encode``
out; ``FrameDecoder.feed`` (every limit: depth, lengths, key types) then ``view_from_wire`` /
``event_from_wire`` / ``action_from_wire`` / ``push_from_wire`` in. ``msgspec`` mirrors the very same classes
as Structs (built from the dataclasses' own annotations, tagged by ``kind``) and uses msgspec's msgpack encoder
and a typed decoder. msgspec checks types, not the vocabulary (a card is just a string to it) and not the
codec's limits, so its decode does less than ours; it is reported as it is, the figures say how much cheaper.

Each figure is the best of ``--repeat`` runs of ``--seconds`` each, in microseconds per message, and the ratio
dataclasses / msgspec in the same run. Results go to docs/contract.md by hand. Needs msgspec (``pip install
msgspec``); without it only the shipped side is measured.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import struct
import sys
import time
import typing
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from quatro_shared import actions as a  # noqa: E402
from quatro_shared import events as e  # noqa: E402
from quatro_shared import messages as m  # noqa: E402
from quatro_shared import views as v  # noqa: E402
from quatro_shared.framing import FrameDecoder, encode  # noqa: E402
from quatro_shared.wire import action_from_wire, push_from_wire, to_wire  # noqa: E402

from quatro_server.engine import Table, events_for, view  # noqa: E402
from quatro_server.timing import STANDARD  # noqa: E402

try:
    import msgspec
except ImportError:  # measured without it: the shipped side alone
    msgspec = None


# --- real messages ---------------------------------------------------------------------------------


def _play(players: int) -> tuple[Table, list]:
    table = Table(players, timing=STANDARD, rng=random.Random(7), bots=frozenset(), host=0, seat_order=None)
    emits = table.start(0.0)
    for seat in range(players):
        emits += table.act(seat, a.Ready(), 0.1).events
    return table, emits


def break_update() -> m.Update:
    """Seat 0's update at the end of an 8-player round: the round's end, the reveal and the break's view."""
    table, _ = _play(8)
    emits = table.act(1, a.Call(), 5.0).events
    return m.Update(table=1, seq=12, snapshot=False, at=5000, events=tuple(events_for(emits, 0, 8)), view=view(table, 0, 5.0))


def swap_update() -> m.Update:
    """Seat 1's update of seat 0's swap in a 4-player round."""
    table, _ = _play(4)
    hand, center = table.hand(0), table.center
    emits = table.act(0, a.Swap(hand[0], 0, center[0]), 1.0).events
    return m.Update(table=1, seq=7, snapshot=False, at=1000, events=tuple(events_for(emits, 1, 4)), view=view(table, 1, 1.0))


def lobby_push(count: int = 50) -> m.LobbyList:
    tables = tuple(
        m.TableSummary(
            table=i + 1, game="quatro", players=(4, 6, 8)[i % 3], taken=i % 4, bots=i % 2, phase=v.Phase.LOBBY,
            timing="standard", password=i % 5 == 0, scores=(0,) * ((4, 6, 8)[i % 3] // 2),
        )
        for i in range(count)
    )
    return m.LobbyList(tables=tables)


SWAP = a.Swap("QH", 2, "KS")


# --- the msgspec mirror ----------------------------------------------------------------------------


def _mirror() -> dict[type, Any]:
    """A Struct per shared dataclass, with the same fields and types, tagged with its ``kind``."""
    structs: dict[type, Any] = {}

    def resolve(tp: Any) -> Any:
        origin = typing.get_origin(tp)
        if origin is tuple:
            return tuple[resolve(typing.get_args(tp)[0]), ...]  # type: ignore[misc]
        if origin in (typing.Union, __import__("types").UnionType):
            inner = [resolve(arg) for arg in typing.get_args(tp)]
            return typing.Optional[inner[0]] if len(inner) == 2 else typing.Union[tuple(inner)]
        if isinstance(tp, type) and issubclass(tp, Enum):
            return str
        if dataclasses.is_dataclass(tp):
            return struct(tp)
        return tp

    def struct(cls: type) -> Any:
        if cls not in structs:
            hints = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
            fields = [(f.name, resolve(hints[f.name])) for f in dataclasses.fields(cls)]
            kind = "view" if cls is v.SeatView else getattr(cls, "kind", None)
            tag = kind if cls is v.SeatView or issubclass(cls, (e.Event, a.Action, m.Push)) else None
            structs[cls] = msgspec.defstruct(
                cls.__name__, fields, tag_field="kind" if tag else None, tag=tag or None, frozen=True
            )
        return structs[cls]

    event_union = typing.Union[tuple(struct(cls) for cls in _event_classes())]
    view_struct = struct(v.SeatView)
    structs[m.Update] = msgspec.defstruct(
        "Update",
        [("table", int), ("seq", int), ("snapshot", bool), ("events", tuple[event_union, ...]), ("view", view_struct)],
        tag_field="kind", tag="update", frozen=True,
    )
    struct(m.LobbyList)
    struct(a.Swap)
    return structs


def _event_classes() -> list[type]:
    return [
        obj for obj in vars(e).values()
        if isinstance(obj, type) and issubclass(obj, e.Event) and obj is not e.Event
    ]


def _as_struct(structs: dict[type, Any], obj: Any) -> Any:
    """The Struct holding the same values as a shared dataclass (done once, outside the timings)."""
    if isinstance(obj, tuple):
        return tuple(_as_struct(structs, x) for x in obj)
    if isinstance(obj, Enum):
        return obj.value
    if dataclasses.is_dataclass(obj):
        return structs[type(obj)](**{f.name: _as_struct(structs, getattr(obj, f.name)) for f in dataclasses.fields(obj)})
    return obj


# --- timing ----------------------------------------------------------------------------------------


def best_us(fn: Callable[[], object], seconds: float, repeat: int) -> float:
    """The best of ``repeat`` runs of about ``seconds`` each, in µs per call."""
    calls = 1
    while True:  # calibrate: enough calls for a tenth of the run
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if time.perf_counter() - start > seconds / 10:
            break
        calls *= 2
    calls = max(1, int(calls * 10 * seconds / max(1e-9, (time.perf_counter() - start) * 10)))
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.2)
    args = parser.parse_args(argv)

    messages: list[tuple[str, Any, Callable[[dict], object]]] = [
        ("update, 8 players, break", break_update(), push_from_wire),
        ("update, 4 players, swap", swap_update(), push_from_wire),
        ("lobby, 50 tables", lobby_push(), push_from_wire),
        ("swap request", SWAP, action_from_wire),
    ]
    structs = _mirror() if msgspec is not None else {}
    if msgspec is not None:
        encoder = msgspec.msgpack.Encoder()
        prefix = struct.Struct(">I").pack  # the same 4-byte prefix as the codec's

    print(f"{'message':<28} {'bytes':>6}  {'encode dc':>9} {'encode ms':>9} {'ratio':>6}  "
          f"{'decode dc':>9} {'decode ms':>9} {'ratio':>6}")
    for label, obj, decode_typed in messages:
        frame = encode(to_wire(obj))

        def dc_encode(obj: Any = obj) -> bytes:
            return encode(to_wire(obj))

        def dc_decode(frame: bytes = frame, decode_typed: Callable[[dict], object] = decode_typed) -> object:
            (data,) = FrameDecoder().feed(frame)
            return decode_typed(data)

        enc_dc = best_us(dc_encode, args.seconds, args.repeat)
        dec_dc = best_us(dc_decode, args.seconds, args.repeat)
        if msgspec is None:
            print(f"{label:<28} {len(frame):>6}  {enc_dc:>9.2f} {'-':>9} {'-':>6}  {dec_dc:>9.2f} {'-':>9} {'-':>6}")
            continue
        mirrored = _as_struct(structs, obj)
        decoder = msgspec.msgpack.Decoder(type(mirrored))
        body = encoder.encode(mirrored)
        assert msgspec.msgpack.decode(body) == msgspec.msgpack.decode(frame[4:]), label  # the same map on the wire

        def ms_encode(mirrored: Any = mirrored) -> bytes:
            body = encoder.encode(mirrored)
            return prefix(len(body)) + body

        def ms_decode(frame: bytes = frame, decoder: Any = decoder) -> object:
            return decoder.decode(frame[4:])

        enc_ms = best_us(ms_encode, args.seconds, args.repeat)
        dec_ms = best_us(ms_decode, args.seconds, args.repeat)
        print(
            f"{label:<28} {len(frame):>6}  {enc_dc:>9.2f} {enc_ms:>9.2f} {enc_dc / enc_ms:>5.1f}x  "
            f"{dec_dc:>9.2f} {dec_ms:>9.2f} {dec_dc / dec_ms:>5.1f}x"
        )
    print("µs per message, best of the runs; dc: dataclasses + quatro_shared.wire (shipped), ms: msgspec Structs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
