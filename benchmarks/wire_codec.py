"""What one message costs to encode and decode: the shared dataclasses with quatro_shared.wire, against msgspec Structs.

    python benchmarks/wire_codec.py [--repeat 5] [--seconds 0.2] [--server-tables 50] [--server-steps 200]
                                    [--alternate 0]

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
dataclasses / msgspec in the same run.

Then the figure that decides whether msgspec pays on the server: what the server's codec calls cost per *delivered*
message. ``benchmarks/server_work.py``'s server (``--server-tables`` tables of 8, ``--server-steps`` steps) is run
once with every codec call it makes in its measured part counted and its arguments kept: ``_packb`` in
``quatro_server/games/quatro/updates.py`` (a delta's ``seq`` past 127, an event, a clock, cooldowns) and in
``quatro_server/server.py`` (an ``ok``'s id), ``framing.encode`` there, and ``framing.decode`` (each request's bytes).
Those very arguments are replayed through msgpack as shipped and through msgspec: its ``Encoder`` (checked here to
write the same bytes), and its ``Decoder`` followed by the checks msgpack makes while it parses and msgspec does
not (strings, arrays and maps over their limits), besides the codec's own walk (depth, key and value types).
Printed: µs per call, calls per delivered message, µs per delivered message, and the saving as a share of the
server's own µs per delivered message, from a second, uncounted run. ``--server-steps 0`` leaves this part out.

``--alternate N`` (with msgspec) then runs that server N rounds as shipped and N rounds with every one of those calls
through msgspec (``_packb`` in both modules and ``framing.decode`` swapped in the running process), the two taking
turns, and prints each side's median µs per delivered message and the median of the paired ratios.

Results go to docs/contract.md by hand. Needs msgspec (``pip install msgspec``); without it only the shipped side
is measured.
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

from msgpack import packb as msgpack_packb  # noqa: E402

from quatro_shared import framing  # noqa: E402
from quatro_shared import messages as m  # noqa: E402
from quatro_shared.framing import FrameDecoder, ProtocolError, encode  # noqa: E402
from quatro_shared.games.quatro import actions as a  # noqa: E402
from quatro_shared.games.quatro import events as e  # noqa: E402
from quatro_shared.games.quatro import views as v  # noqa: E402
from quatro_shared.games.quatro.update import Update
from quatro_shared.games.quatro.wire import action_from_wire  # noqa: E402
from quatro_shared.tables import LEFT_OUT_AT_DEFAULT, TablePhase
from quatro_shared.wire import push_from_wire, to_wire  # noqa: E402

from quatro_server.games.quatro.engine import Table, events_for, view  # noqa: E402
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


def break_update() -> Update:
    """Seat 0's update at the end of an 8-player round: the round's end, the reveal and the break's view."""
    table, _ = _play(8)
    emits = table.act(1, a.Call(), 5.0).events
    return Update(
        table=1, seq=12, snapshot=False, at=5000, events=tuple(events_for(emits, 0, 8)), view=view(table, 0, 5.0)
    )


def swap_update() -> Update:
    """Seat 1's update of seat 0's swap in a 4-player round."""
    table, _ = _play(4)
    hand, center = table.hand(0), table.center
    emits = table.act(0, a.Swap(hand[0], 0, center[0]), 1.0).events
    return Update(
        table=1, seq=7, snapshot=False, at=1000, events=tuple(events_for(emits, 1, 4)), view=view(table, 1, 1.0)
    )


def lobby_push(count: int = 50) -> m.LobbyList:
    tables = tuple(
        m.TableSummary(
            table=i + 1,
            game="quatro",
            players=(4, 6, 8)[i % 3],
            taken=i % 4,
            bots=i % 2,
            phase=TablePhase.LOBBY,
            timing="standard",
            password=i % 5 == 0,
            scores=(0,) * ((4, 6, 8)[i % 3] // 2),
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
            # A field the codec leaves out at its default (LEFT_OUT_AT_DEFAULT) has that default here, left out too.
            fields = [
                (f.name, resolve(hints[f.name]), f.default)
                if LEFT_OUT_AT_DEFAULT.items() <= f.metadata.items()
                else (f.name, resolve(hints[f.name]))
                for f in dataclasses.fields(cls)
            ]
            kind = "view" if cls is v.SeatView else getattr(cls, "kind", None)
            tag = kind if cls is v.SeatView or issubclass(cls, (e.Event, a.Action, m.Push)) else None
            structs[cls] = msgspec.defstruct(
                cls.__name__,
                fields,
                tag_field="kind" if tag else None,
                tag=tag or None,
                frozen=True,
                kw_only=True,
                omit_defaults=True,
            )
        return structs[cls]

    event_union = typing.Union[tuple(struct(cls) for cls in _event_classes())]
    view_struct = struct(v.SeatView)
    structs[Update] = msgspec.defstruct(
        "Update",
        [
            ("table", int),
            ("seq", int),
            ("snapshot", bool),
            ("at", int),
            ("events", tuple[event_union, ...]),
            ("view", typing.Optional[view_struct], None),
            ("clock", typing.Optional[struct(v.Clock)], None),
            ("own", typing.Optional[struct(v.OwnTimers)], None),
        ],
        tag_field="kind",
        tag="update",
        frozen=True,
        omit_defaults=True,
    )
    struct(m.LobbyList)
    struct(a.Swap)
    return structs


def _event_classes() -> list[type]:
    return [
        obj for obj in vars(e).values() if isinstance(obj, type) and issubclass(obj, e.Event) and obj is not e.Event
    ]


def _as_struct(structs: dict[type, Any], obj: Any) -> Any:
    """The Struct holding the same values as a shared dataclass (done once, outside the timings)."""
    if isinstance(obj, tuple):
        return tuple(_as_struct(structs, x) for x in obj)
    if isinstance(obj, Enum):
        return obj.value
    if dataclasses.is_dataclass(obj):
        return structs[type(obj)](
            **{f.name: _as_struct(structs, getattr(obj, f.name)) for f in dataclasses.fields(obj)}
        )
    return obj


# --- the server's codec calls, through msgspec -------------------------------------------------------


def _msgspec_framing() -> tuple[Callable[[object], bytes], Callable[[bytes], dict[str, Any]]]:
    """msgspec's encoder, and a ``framing.decode`` on msgspec's decoder that refuses what the shipped one refuses.

    msgspec bounds nothing while it parses (a 64 KB frame may hold a 64 KB string), so the lengths msgpack checks as
    it parses are checked afterwards, in the walk the codec makes anyway (its memory is still bounded by the frame)."""
    refuse = framing._refuse_ext
    decoder = msgspec.msgpack.Decoder(ext_hook=refuse).decode
    max_str, max_array, max_map, max_depth = (
        framing.MAX_STR_LEN,
        framing.MAX_ARRAY_LEN,
        framing.MAX_MAP_LEN,
        framing.MAX_DEPTH,
    )
    scalars = frozenset((int, float, bool, type(None)))

    def long(text: str) -> bool:  # msgpack's limit counts UTF-8 bytes, not characters
        return len(text) > max_str or len(text.encode()) > max_str

    def check(message: dict[str, Any]) -> None:
        level: list[Any] = [message]
        depth = 1
        while level:
            if depth > max_depth:
                raise ProtocolError("too_deep", f"nested deeper than {max_depth} levels")
            deeper: list[Any] = []
            for node in level:
                if type(node) is dict:
                    if len(node) > max_map:
                        raise ProtocolError("too_large", "a map over the limit")
                    for key in node:
                        if type(key) is not str:
                            raise ProtocolError("bad_type", f"map keys are strings, not {type(key).__name__}")
                        if len(key) * 4 > max_str and long(key):
                            raise ProtocolError("too_large", "a key over the limit")
                    values = node.values()
                else:
                    if len(node) > max_array:
                        raise ProtocolError("too_large", "an array over the limit")
                    values = node
                for value in values:
                    kind = type(value)
                    if kind is str:
                        if len(value) * 4 > max_str and long(value):
                            raise ProtocolError("too_large", "a string over the limit")
                    elif kind is dict or kind is list:
                        deeper.append(value)
                    elif kind not in scalars:
                        raise ProtocolError("bad_type", f"{kind.__name__} is not part of the protocol")
            level = deeper
            depth += 1

    def decode(payload: bytes) -> dict[str, Any]:
        if not payload:
            raise ProtocolError("empty_frame", "a frame must hold a message")
        if len(payload) > framing.MAX_FRAME_BYTES:
            raise ProtocolError("frame_too_large", "over the limit")
        try:
            message = decoder(payload)
        except framing._ExtRefused as exc:
            raise ProtocolError("bad_type", str(exc)) from None
        except RecursionError:
            raise ProtocolError("too_deep", f"nested deeper than {max_depth} levels") from None
        except Exception as exc:  # noqa: BLE001 - untrusted bytes
            raise ProtocolError("malformed", str(exc)) from None
        if type(message) is not dict:
            raise ProtocolError("not_a_map", "a message is a map")
        check(message)
        if not isinstance(message.get("kind"), str):
            raise ProtocolError("no_kind", 'a message needs a string "kind"')
        return message

    return msgspec.msgpack.Encoder().encode, decode


def server_codec(tables: int, steps: int, seconds: float, repeat: int) -> None:
    """The server's codec calls per delivered message (``server_work.py``'s measured part), msgpack against msgspec."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import server_work

    from quatro_server import server
    from quatro_server.games.quatro import updates

    calls: dict[str, list[tuple[Any, ...]]] = {"updates._packb": [], "server._packb": [], "encode": [], "decode": []}
    counting = [False]

    def counted(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            if counting[0]:
                calls[name].append(args)
            return fn(*args)

        return call

    shipped = (updates._packb, server._packb, server.encode, updates.encode, framing.decode)
    seat_all, swap_bytes = server_work._seat_all, server_work._Run.swap_bytes

    def seated(*args: Any) -> Any:  # counting starts once the tables are seated, as the measured part does
        result = seat_all(*args)
        counting[0] = True
        return result

    def request(self: Any, *args: Any) -> bytes:  # a client's bytes, made outside the measured part: not counted
        counting[0] = False
        try:
            return swap_bytes(self, *args)
        finally:
            counting[0] = True

    updates._packb, server._packb = counted("updates._packb", updates._packb), counted("server._packb", server._packb)
    server.encode = updates.encode = counted("encode", encode)
    framing.decode = counted("decode", framing.decode)
    server_work._seat_all, server_work._Run.swap_bytes = seated, request  # type: ignore[method-assign]
    try:
        delivered = server_work.measure_server(server_work._Run(tables, steps, 3.0), journalled=False)["messages"]
    finally:
        counting[0] = False
        updates._packb, server._packb, server.encode, updates.encode, framing.decode = shipped
        server_work._seat_all, server_work._Run.swap_bytes = seat_all, swap_bytes  # type: ignore[method-assign]
    per_message = server_work.measure_server(server_work._Run(tables, steps, 3.0), journalled=False)["us_per_msg"]

    ms_encode, ms_decode = _msgspec_framing() if msgspec is not None else (None, None)
    sides: dict[str, tuple[Callable[..., Any], Callable[..., Any] | None]] = {
        "updates._packb": (shipped[0], ms_encode),
        "server._packb": (shipped[1], ms_encode),
        "encode": (lambda message: msgpack_packb(message, use_bin_type=True), ms_encode),
        "decode": (framing.decode, ms_decode),
    }
    print(
        f"\nthe server's codec calls: server_work.py's server, {tables} tables of 8, {steps} steps, "
        f"{delivered} messages delivered"
    )
    print(f"{'call':<16} {'calls/msg':>9}  {'msgpack':>8} {'msgspec':>8}  {'per msg, msgpack':>16} {'msgspec':>8}")
    total = {"msgpack": 0.0, "msgspec": 0.0}
    for name, args in calls.items():
        if not args:
            continue
        share = len(args) / delivered
        if name == "decode":
            assert all(ms_decode is None or ms_decode(*x) == framing.decode(*x) for x in args), name
        elif ms_encode is not None:
            assert all(ms_encode(*x) == msgpack_packb(*x, use_bin_type=True) for x in args), name  # the same bytes
        figures = []
        for fn in sides[name]:
            if fn is None:
                figures.append(None)
                continue
            sample = args[: max(1, min(len(args), 20000))]

            def replay(fn: Callable[..., Any] = fn, sample: list[tuple[Any, ...]] = sample) -> None:
                for x in sample:
                    fn(*x)

            figures.append(best_us(replay, seconds, repeat) / len(sample))
        mp, ms = figures
        total["msgpack"] += mp * share
        ms_text, ms_msg = ("-", "-") if ms is None else (f"{ms:.3f}", f"{ms * share:.4f}")
        if ms is not None:
            total["msgspec"] += ms * share
        print(f"{name:<16} {share:>9.4f}  {mp:>8.3f} {ms_text:>8}  {mp * share:>16.4f} {ms_msg:>8}")
    print(
        f"µs per call (best of the runs) and per delivered message; the server's own Python: {per_message:.2f} µs "
        "per delivered message (uncounted run)"
    )
    if msgspec is not None:
        saved = total["msgpack"] - total["msgspec"]
        print(
            f"codec per delivered message: msgpack {total['msgpack']:.3f} µs, msgspec {total['msgspec']:.3f} µs: "
            f"msgspec would save {saved:.3f} µs, {100 * saved / per_message:.1f}% of the server's {per_message:.2f}"
        )


def alternate(tables: int, steps: int, rounds: int) -> None:
    """``server_work.py``'s server, as shipped and with its codec calls through msgspec, taking turns."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import statistics

    import server_work

    from quatro_server import server
    from quatro_server.games.quatro import updates

    ms_encode, ms_decode = _msgspec_framing()
    shipped = (updates._packb, server._packb, framing.decode)
    sides: dict[str, list[float]] = {"msgpack": [], "msgspec": []}
    try:
        for i in range(rounds):
            for side in sides if i % 2 == 0 else reversed(list(sides)):
                if side == "msgspec":
                    updates._packb = server._packb = ms_encode
                    framing.decode = ms_decode
                else:
                    updates._packb, server._packb, framing.decode = shipped
                run = server_work._Run(tables, steps, 3.0)
                sides[side].append(server_work.measure_server(run, journalled=False)["us_per_msg"])
    finally:
        updates._packb, server._packb, framing.decode = shipped
    ratios = [new / old for new, old in zip(sides["msgspec"], sides["msgpack"])]
    print(f"\nalternating: server_work.py's server, {tables} tables of 8, {steps} steps, {rounds} rounds a side")
    for side, figures in sides.items():
        print(
            f"  {side:<8} median {statistics.median(figures):.3f} µs per delivered message "
            f"(from {min(figures):.3f} to {max(figures):.3f})"
        )
    print(f"  msgspec / msgpack, median of the paired rounds: {statistics.median(ratios):.3f}")


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
    parser.add_argument("--server-tables", type=int, default=50, help="the server's codec calls: tables of 8")
    parser.add_argument("--server-steps", type=int, default=200, help="the server's codec calls: steps (0: skip)")
    parser.add_argument(
        "--alternate",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="that server as shipped and through msgspec, taking turns, ROUNDS rounds a side",
    )
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

    print(
        f"{'message':<28} {'bytes':>6}  {'encode dc':>9} {'encode ms':>9} {'ratio':>6}  "
        f"{'decode dc':>9} {'decode ms':>9} {'ratio':>6}"
    )
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
    if args.server_steps > 0:
        server_codec(args.server_tables, args.server_steps, args.seconds, args.repeat)
        if args.alternate > 0 and msgspec is not None:
            alternate(args.server_tables, args.server_steps, args.alternate)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
