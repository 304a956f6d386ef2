"""The frame codec: frames survive any cut of the stream, and every limit holds against a hostile peer."""

from __future__ import annotations

import math
import struct

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quatro_shared.framing import (
    MAX_ARRAY_LEN,
    MAX_DEPTH,
    MAX_FRAME_BYTES,
    MAX_MAP_LEN,
    MAX_STR_LEN,
    PREFIX_BYTES,
    FrameDecoder,
    ProtocolError,
    decode,
    encode,
)

MESSAGES = [
    {"kind": "swap", "give": "QH", "slot": 2, "take": "10S"},
    {"kind": "ready"},
    {"kind": "round_ended", "hands": [["AS", "AH", "AD", "AC"], ["KS", "KH", "QD", "6C"]], "right": None, "score": 1.5},
]


def frame(body: bytes) -> bytes:
    """A frame around raw bytes, bypassing ``encode`` so tests can send what a hostile peer would."""
    return struct.pack(">I", len(body)) + body


def packed_frame(obj: object) -> bytes:
    return frame(msgpack.packb(obj, use_bin_type=True))


def refused(data: bytes) -> ProtocolError:
    with pytest.raises(ProtocolError) as caught:
        FrameDecoder().feed(data)
    return caught.value


# --- frames come through whole, however the stream is cut -------------------------------------------------


def test_a_message_survives_the_round_trip():
    assert FrameDecoder().feed(encode(MESSAGES[0])) == [MESSAGES[0]]


def test_several_frames_in_one_feed_all_come_out_in_order():
    stream = b"".join(encode(m) for m in MESSAGES)
    assert FrameDecoder().feed(stream) == MESSAGES


def test_a_stream_cut_at_any_byte_gives_the_same_frames():
    stream = b"".join(encode(m) for m in MESSAGES)
    for cut in range(len(stream) + 1):
        decoder = FrameDecoder()
        assert decoder.feed(stream[:cut]) + decoder.feed(stream[cut:]) == MESSAGES, cut


def test_a_stream_fed_one_byte_at_a_time_gives_the_same_frames():
    stream = b"".join(encode(m) for m in MESSAGES)
    decoder = FrameDecoder()
    out = []
    for i in range(len(stream)):
        out += decoder.feed(stream[i : i + 1])
    assert out == MESSAGES
    assert decoder.buffered == 0


@given(st.lists(st.integers(min_value=0, max_value=200), max_size=10))
def test_any_cuts_give_the_same_frames(cuts):
    stream = b"".join(encode(m) for m in MESSAGES)
    points = sorted({min(c, len(stream)) for c in cuts})
    decoder = FrameDecoder()
    out, last = [], 0
    for point in points + [len(stream)]:
        out += decoder.feed(stream[last:point])
        last = point
    assert out == MESSAGES


def test_a_partial_frame_waits_in_the_buffer():
    data = encode(MESSAGES[0])
    decoder = FrameDecoder()
    assert decoder.feed(data[:-1]) == []
    assert decoder.feed(data[-1:]) == [MESSAGES[0]]


def test_nan_is_a_number_like_any_other():
    (message,) = FrameDecoder().feed(encode({"kind": "x", "v": math.nan}))
    assert math.isnan(message["v"])


# --- the size limit is enforced from the prefix alone --------------------------------------------------


def test_a_prefix_announcing_a_gibibyte_is_refused_at_once_and_nothing_is_kept():
    decoder = FrameDecoder()
    with pytest.raises(ProtocolError) as caught:
        decoder.feed(struct.pack(">I", 1 << 30))
    assert caught.value.code == "frame_too_large"
    assert decoder.buffered == 0


def test_even_the_first_byte_of_an_oversized_prefix_is_refused():
    decoder = FrameDecoder()
    with pytest.raises(ProtocolError) as caught:
        decoder.feed(b"\x40")  # whatever follows, the length is at least 1 GiB
    assert caught.value.code == "frame_too_large"


def test_one_byte_over_the_limit_is_refused_and_the_limit_itself_is_not():
    assert refused(struct.pack(">I", MAX_FRAME_BYTES + 1)).code == "frame_too_large"
    decoder = FrameDecoder()
    assert decoder.feed(struct.pack(">I", MAX_FRAME_BYTES) + b"\x81") == []  # waits for the rest


def test_a_frame_of_exactly_the_limit_is_accepted():
    strings = MAX_FRAME_BYTES // (MAX_STR_LEN + 3)  # str16 header: 3 bytes
    message = {"kind": "pad", "pad": ["x" * MAX_STR_LEN] * strings}
    body = msgpack.packb(message)
    message["tail"] = "y" * (MAX_FRAME_BYTES - len(body) - len(msgpack.packb("tail")) - 3)
    data = encode(message)
    assert len(data) == PREFIX_BYTES + MAX_FRAME_BYTES
    assert FrameDecoder().feed(data) == [message]


def test_an_empty_frame_is_an_error():
    assert refused(struct.pack(">I", 0)).code == "empty_frame"


def test_encode_refuses_what_the_peer_would_refuse():
    with pytest.raises(ProtocolError) as caught:
        encode({"kind": "big", "pad": ["x" * 1000] * 70})
    assert caught.value.code == "frame_too_large"
    with pytest.raises(ProtocolError):
        encode([1, 2])  # type: ignore[arg-type]
    with pytest.raises(ProtocolError):
        encode({"no": "kind"})


# --- what the body may hold ---------------------------------------------------------------------------


def nested(depth: int) -> dict:
    """A message nested ``depth`` levels deep, the top-level map counting 1."""
    value: object = 1
    for _ in range(depth - 1):
        value = [value]
    return {"kind": "deep", "v": value}


def test_nesting_up_to_the_limit_is_accepted_and_one_more_level_is_not():
    assert FrameDecoder().feed(packed_frame(nested(MAX_DEPTH))) == [nested(MAX_DEPTH)]
    assert refused(packed_frame(nested(MAX_DEPTH + 1))).code == "too_deep"


def test_nesting_past_msgpacks_own_stack_is_too_deep_too():
    assert refused(frame(b"\x81\xa4kind\x91" + b"\x91" * 5000 + b"\x00")).code == "too_deep"
    assert refused(frame(b"\x91" * 5000 + b"\x00")).code == "too_deep"


@pytest.mark.parametrize(
    "message",
    [
        {"kind": "x", "s": "y" * (MAX_STR_LEN + 1)},
        {"kind": "x", "y" * (MAX_STR_LEN + 1): 1},
        {"kind": "x", "a": list(range(MAX_ARRAY_LEN + 1))},
        {"kind": "x", "m": {str(i): i for i in range(MAX_MAP_LEN + 1)}},
        {"kind": "x", **{str(i): i for i in range(MAX_MAP_LEN)}},
    ],
    ids=["long string", "long key", "long array", "wide map", "wide top-level map"],
)
def test_oversized_strings_arrays_and_maps_are_refused(message):
    assert refused(packed_frame(message)).code == "too_large"


@pytest.mark.parametrize(
    ("header", "codes"),
    [
        (b"\xdd\xff\xff\xff\xff", {"too_large"}),
        (b"\xdf\xff\xff\xff\xff", {"too_large"}),
        # msgpack sees that the frame cannot hold the string before it looks at the limit: refused either way.
        (b"\xdb\xff\xff\xff\xff", {"too_large", "malformed"}),
    ],
    ids=["array", "map", "str"],
)
def test_a_forged_length_inside_a_small_frame_is_refused(header, codes):
    assert refused(frame(b"\x82\xa4kind\xa1x\xa1v" + header)).code in codes


@pytest.mark.parametrize(
    "body",
    [
        msgpack.packb({"kind": "x", "b": b"bytes"}, use_bin_type=True),
        msgpack.packb({"kind": "x", "b": b""}, use_bin_type=True),
        msgpack.packb({"kind": "x", "e": msgpack.ExtType(5, b"data")}),
        b"\x82\xa4kind\xa1x\xa1e\xc7\x00\x05",  # an ext of length zero slips past max_ext_len: the hook catches it
        msgpack.packb({"kind": "x", "t": msgpack.Timestamp(1)}),
        msgpack.packb({"kind": "x", 1: 2}),
        msgpack.packb({"kind": "x", b"k": 2}, use_bin_type=True),
    ],
    ids=["bin", "empty bin", "ext", "empty ext", "timestamp", "int key", "bin key"],
)
def test_binary_extensions_and_non_string_keys_are_refused(body):
    assert refused(frame(body)).code == "bad_type"


@pytest.mark.parametrize(
    "body",
    [
        b"\xc1",  # never used in msgpack
        msgpack.packb({"kind": "x"}) + b"\x00",  # two objects in one frame
        msgpack.packb({"kind": "x", "s": "abc"})[:-1],  # the frame ends inside the object
        b"\x81\xa4kind\xa2\xff\xfe",  # not UTF-8
        b"\xff" * 16,
    ],
    ids=["reserved byte", "trailing data", "truncated", "bad utf-8", "junk"],
)
def test_junk_is_malformed(body):
    assert refused(frame(body)).code == "malformed"


@pytest.mark.parametrize("obj", [[1, 2], "kind", 7, None, True])
def test_a_message_is_a_map(obj):
    assert refused(packed_frame(obj)).code == "not_a_map"


@pytest.mark.parametrize("obj", [{}, {"type": "swap"}, {"kind": 3}, {"kind": None}, {"kind": ["swap"]}])
def test_a_message_names_its_kind_with_a_string(obj):
    assert refused(packed_frame(obj)).code == "no_kind"


def test_after_an_error_the_decoder_refuses_everything():
    decoder = FrameDecoder()
    with pytest.raises(ProtocolError):
        decoder.feed(packed_frame([1]))
    with pytest.raises(ProtocolError) as caught:
        decoder.feed(encode({"kind": "ready"}))
    assert caught.value.code == "closed"


def test_errors_carry_a_code_and_a_human_message():
    error = refused(struct.pack(">I", 1 << 30))
    assert error.code == "frame_too_large"
    assert str(MAX_FRAME_BYTES) in error.message
    assert error.code in str(error)


def test_decode_checks_a_body_on_its_own():
    assert decode(msgpack.packb({"kind": "x"})) == {"kind": "x"}
    with pytest.raises(ProtocolError):
        decode(b"")


# --- fuzz: a hostile peer only ever gets a ProtocolError ----------------------------------------------


@settings(max_examples=500)
@given(st.binary(max_size=300), st.lists(st.integers(min_value=0, max_value=300), max_size=5))
def test_random_bytes_raise_nothing_but_protocol_errors(data, cuts):
    decoder = FrameDecoder()
    last = 0
    try:
        for point in sorted(cuts) + [len(data)]:
            for message in decoder.feed(data[last:point]):
                assert isinstance(message, dict) and isinstance(message["kind"], str)
            last = max(last, point)
    except ProtocolError:
        pass


@settings(max_examples=500)
@given(st.binary(min_size=1, max_size=300))
def test_random_bodies_behind_a_valid_prefix_raise_nothing_but_protocol_errors(body):
    # A valid prefix gets the bytes past the size check and into msgpack itself.
    try:
        for message in FrameDecoder().feed(frame(body)):
            assert isinstance(message, dict) and isinstance(message["kind"], str)
    except ProtocolError:
        pass


msgpack_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)  # what msgpack can carry
    | st.floats()
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=200)
@given(st.dictionaries(st.text(max_size=10), msgpack_values, max_size=6), st.text(max_size=10))
def test_any_plain_message_within_the_limits_round_trips(fields, kind):
    message = {**fields, "kind": kind}
    (decoded,) = FrameDecoder().feed(encode(message))
    assert msgpack.packb(decoded) == msgpack.packb(message)  # compares NaN payloads too
