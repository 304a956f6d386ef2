"""The frame codec of the Quatro wire: length-prefixed msgpack maps, with hard limits, and no I/O.

A frame is a 4-byte big-endian unsigned length, then that many bytes holding exactly one msgpack
object: a map whose string key ``"kind"`` names the message. ``FrameDecoder.feed(bytes)`` returns the
complete frames so far and keeps the rest; ``encode(message)`` returns the bytes of one frame. The
same codec serves the trio server, the client, network bots and tests (h11-style: the caller owns
the socket, this module only turns bytes into messages and back).

Everything a peer sends is untrusted. Every limit below is checked before the memory it protects is
spent, and any violation raises ``ProtocolError``, after which the decoder refuses all further
input: the only safe answer to a peer that broke framing is to close the connection.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from typing import TypeAlias, cast

import msgpack

#: One value a decoded message may hold: what ``decode`` lets through and nothing else (no bytes, no
#: extension types, string keys only). Code that reads a raw message narrows it (``isinstance``) before use;
#: the contract's decoders (``shared/wire.py``) do that once, for every message of the vocabulary.
Value: TypeAlias = "None | bool | int | float | str | list[Value] | dict[str, Value]"
#: A decoded message: a map with a string ``kind``.
Message: TypeAlias = dict[str, Value]
#: What may be encoded: any map of plain values (a dict of ints is one, though it is not a ``Message``,
#: whose values could be anything).
Outgoing: TypeAlias = Mapping[str, object]

# --- limits ---------------------------------------------------------------------------------------
# The largest real message, an 8-player view during a break (its reveal included), packs to about
# 1.3 KB (1.5 KB with every optional part filled) and nests 4 levels deep: view → summary → hands →
# hand. A RoundEnded event is about 270 bytes. tests/test_wire.py holds both to these limits.

#: Bytes of the length prefix: a big-endian unsigned 32-bit integer.
PREFIX_BYTES = 4
#: Largest frame body. About 50 times the largest real message: room to grow (names, a lobby list)
#: while one connection can never make the server hold more than this for a half-received frame.
MAX_FRAME_BYTES = 64 * 1024
#: Deepest nesting of maps and arrays, the top-level map counting 1. Real messages reach 4; the
#: bound keeps the checks (and any client that walks a message recursively) cheap and shallow.
MAX_DEPTH = 8
#: Longest string, key or value. Cards and signs are under 12 characters and keys under 20; the rest
#: is room for player names and human-readable error texts, never for bulk data.
MAX_STR_LEN = 1024
#: Longest array. Real ones hold at most 8 seats, hands or scores; 256 leaves room for lists such as
#: a lobby's tables. (The frame size already bounds the total number of objects in a message.)
MAX_ARRAY_LEN = 256
#: Most pairs in one map. The widest message, a view, has 24 keys; room for a few more and for envelopes.
MAX_MAP_LEN = 64
#: The protocol carries no binary and no extension types: they are refused outright.
MAX_BIN_LEN = 0
MAX_EXT_LEN = 0

_PREFIX = struct.Struct(">I")

#: Options for msgpack's own checks, which run while it parses, before any oversized object exists.
_UNPACK_LIMITS = dict(
    raw=False,  # strings are UTF-8 text; invalid UTF-8 is malformed
    strict_map_key=True,  # only str (or bytes, refused below) keys: no int, float or nil keys
    use_list=True,
    max_str_len=MAX_STR_LEN,
    max_bin_len=MAX_BIN_LEN,
    max_array_len=MAX_ARRAY_LEN,
    max_map_len=MAX_MAP_LEN,
    max_ext_len=MAX_EXT_LEN,
)

#: The scalar types a decoded message may hold, besides maps and arrays. Anything else (bytes, msgpack's
#: ExtType or Timestamp) is refused.
_SCALARS = frozenset((str, int, float, bool, type(None)))


# --- reading a raw message's parts (tools and operators' clients that read frames without the wire's codecs) -----


def whole(message: Mapping[str, object], key: str) -> int | None:
    """The whole number a message holds under ``key``; None when it holds none (or something else there)."""
    value = message.get(key)
    return value if isinstance(value, int) else None


def count(message: Mapping[str, object], key: str) -> int:
    """The count a message holds under ``key``; 0 when it holds none (or something else there)."""
    value = message.get(key)
    return value if isinstance(value, int) else 0


def text(message: Mapping[str, object], key: str) -> str | None:
    """The text a message holds under ``key``; None when it holds none (or something else there)."""
    value = message.get(key)
    return value if isinstance(value, str) else None


def maps(value: object) -> list[dict[str, object]]:
    """The maps of a list inside a message (its tables, its events, its seats); none where it holds no list."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


class ProtocolError(Exception):
    """A peer broke the framing or the limits. ``code`` is stable and machine-readable:

    ``frame_too_large``, ``empty_frame``, ``malformed``, ``too_large`` (a string, array or map over
    its limit), ``too_deep``, ``bad_type`` (binary, extension type, or a map key that is not a
    string), ``not_a_map``, ``no_kind``, ``closed`` (the decoder already failed).
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class _ExtRefused(Exception):
    """Raised from msgpack's ext hook, to tell an extension type apart from other malformed input."""


def _refuse_ext(code: int, data: bytes) -> object:
    raise _ExtRefused(f"extension type {code} is not part of the protocol")


def decode(payload: bytes) -> Message:
    """One frame body (without its prefix) to a message, checking every limit. Raises ``ProtocolError``."""
    if not payload:
        raise ProtocolError("empty_frame", "a frame must hold a message")
    if len(payload) > MAX_FRAME_BYTES:
        raise ProtocolError("frame_too_large", f"{len(payload)} bytes is over the limit of {MAX_FRAME_BYTES}")
    try:
        message = msgpack.unpackb(payload, ext_hook=_refuse_ext, **_UNPACK_LIMITS)
    except _ExtRefused as exc:
        raise ProtocolError("bad_type", str(exc)) from None
    except msgpack.exceptions.StackError:
        # msgpack's parser has its own nesting bound (far deeper than ours); past it, the answer is the same.
        raise ProtocolError("too_deep", f"nested deeper than {MAX_DEPTH} levels") from None
    except Exception as exc:  # noqa: BLE001 - untrusted bytes meet a third-party parser: all it raises is bad input
        text = str(exc)
        if "max_bin_len" in text or "max_ext_len" in text or "map key" in text:
            raise ProtocolError("bad_type", text) from None
        if "exceeds max_" in text:
            raise ProtocolError("too_large", text) from None
        raise ProtocolError("malformed", f"not one valid msgpack object ({type(exc).__name__}: {text})") from None
    if not isinstance(message, dict):
        raise ProtocolError("not_a_map", f"a message is a map, not {type(message).__name__}")
    _check_shape(message)
    kind = message.get("kind")
    if not isinstance(kind, str):
        raise ProtocolError("no_kind", 'a message needs a string "kind"')
    return message


def _check_shape(message: dict[str, object]) -> None:
    """Walk the message level by level: bounded depth, plain types only, string keys only.

    msgpack-python bounds lengths but not depth. The walk is iterative, so even a hostile message
    cannot exhaust the Python stack, and the frame size bounds its work. It compares exact types
    (not isinstance) because it runs on every message the server receives and every one a client does.
    """
    level: list[object] = [message]
    depth = 1
    while level:
        if depth > MAX_DEPTH:
            raise ProtocolError("too_deep", f"nested deeper than {MAX_DEPTH} levels")
        deeper: list[object] = []
        for node in level:
            values: Iterable[object]
            if type(node) is dict:
                for key in node:
                    if type(key) is not str:
                        raise ProtocolError("bad_type", f"map keys are strings, not {type(key).__name__}")
                values = node.values()
            else:
                values = cast("list[object]", node)  # only maps and arrays are ever put in a level
            for value in values:
                kind = type(value)
                if kind is dict or kind is list:
                    deeper.append(value)
                elif kind not in _SCALARS:
                    raise ProtocolError("bad_type", f"{kind.__name__} is not part of the protocol")
        level = deeper
        depth += 1


def encode(message: Outgoing) -> bytes:
    """One message to the bytes of one frame. Raises ``ProtocolError`` if it is not a map with a
    string ``kind``, or if it would exceed ``MAX_FRAME_BYTES`` (the peer would refuse it).

    The other limits are not re-checked here, to keep the hot path (every message sent, each seat's update
    framed on its own) cheap; the tests hold the largest real messages to them.
    """
    if not isinstance(message, dict):
        raise ProtocolError("not_a_map", f"a message is a map, not {type(message).__name__}")
    if not isinstance(message.get("kind"), str):
        raise ProtocolError("no_kind", 'a message needs a string "kind"')
    body: bytes = msgpack.packb(message, use_bin_type=True)
    if len(body) > MAX_FRAME_BYTES:
        raise ProtocolError("frame_too_large", f"{len(body)} bytes is over the limit of {MAX_FRAME_BYTES}")
    return _PREFIX.pack(len(body)) + body


def frame(body: bytes) -> bytes:
    """A msgpack body already encoded (a server assembling a message from pre-encoded parts) as one frame.
    Raises ``ProtocolError`` if it is over ``MAX_FRAME_BYTES``."""
    if len(body) > MAX_FRAME_BYTES:
        raise ProtocolError("frame_too_large", f"{len(body)} bytes is over the limit of {MAX_FRAME_BYTES}")
    return _PREFIX.pack(len(body)) + body


class FrameDecoder:
    """Turns a byte stream, cut anywhere, into messages. One per connection.

    ``feed(data)`` returns every message completed by ``data`` (possibly none) and keeps the rest.
    On any violation it raises ``ProtocolError`` and is finished: every later ``feed`` raises again
    (code ``closed``), since the stream can no longer be trusted to be in step. Messages that came
    before the bad frame in the same ``feed`` are dropped with it.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        #: Body length of the frame being received, once its prefix is in; None while reading a prefix.
        self._expected: int | None = None
        self._error: ProtocolError | None = None

    @property
    def buffered(self) -> int:
        """Bytes held for the frame not yet complete (its prefix once read is not counted)."""
        return len(self._buffer)

    def feed(self, data: bytes | bytearray) -> list[Message]:
        if self._error is not None:
            raise ProtocolError("closed", f"the stream already failed ({self._error.code})")
        try:
            return self._feed(data)
        except ProtocolError as exc:
            self._error = exc
            self._buffer = bytearray()
            raise

    def _feed(self, data: bytes | bytearray) -> list[Message]:
        buffer = self._buffer
        buffer += data
        messages: list[Message] = []
        # Read through the buffer with an offset and drop the consumed part once at the end: many small
        # frames in one large feed then cost one copy, not one per frame.
        start = 0
        try:
            while True:
                if self._expected is None:
                    available = len(buffer) - start
                    if available < PREFIX_BYTES:
                        # A partial prefix can only grow: refuse as soon as its smallest possible value is too large.
                        smallest = int.from_bytes(buffer[start:].ljust(PREFIX_BYTES, b"\0"), "big")
                        if smallest > MAX_FRAME_BYTES:
                            raise ProtocolError("frame_too_large", f"announced more than {MAX_FRAME_BYTES} bytes")
                        break
                    (length,) = _PREFIX.unpack_from(buffer, start)
                    # Checked from the prefix alone, before any body is kept: never allocate what a peer announces.
                    if length > MAX_FRAME_BYTES:
                        raise ProtocolError(
                            "frame_too_large", f"announced {length} bytes, over the limit of {MAX_FRAME_BYTES}"
                        )
                    if length == 0:
                        raise ProtocolError("empty_frame", "a frame must hold a message")
                    start += PREFIX_BYTES
                    self._expected = length
                end = start + self._expected
                if len(buffer) < end:
                    break
                body = bytes(buffer[start:end])
                start = end
                self._expected = None
                messages.append(decode(body))
        finally:
            del buffer[:start]
        return messages
