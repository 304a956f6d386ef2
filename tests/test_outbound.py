"""The outbound path: one flusher, one send() per dirty connection per scheduler pass, bounded in bytes."""

from __future__ import annotations

import socket

import trio
import trio.testing

from quatro_server import outbound
from quatro_server.outbound import Flusher


def _pair() -> tuple[trio.SocketStream, trio.SocketStream]:
    a, b = trio.socket.socketpair()
    return trio.SocketStream(a), trio.SocketStream(b)


async def _read_exactly(stream: trio.SocketStream, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = await stream.receive_some(65536)
        assert chunk, "the stream ended early"
        data += chunk
    return bytes(data)


async def test_frames_queued_in_one_pass_leave_in_one_send_per_connection() -> None:
    flusher = Flusher()
    async with trio.open_nursery() as nursery:
        await nursery.start(flusher.run)
        pairs = [_pair() for _ in range(3)]
        boxes = [flusher.outbox(ours) for ours, _ in pairs]
        for i in range(10):  # ten frames to each of three connections, all in the same pass
            for box in boxes:
                assert box.put(bytes([i]) * 100)
        for box, (_, theirs) in zip(boxes, pairs):
            await box.drained()
            assert await _read_exactly(theirs, 1000) == b"".join(bytes([i]) * 100 for i in range(10))
        assert flusher.sends == 3 and flusher.passes == 1
        nursery.cancel_scope.cancel()


async def test_a_full_socket_buffer_waits_for_the_reader_and_loses_nothing() -> None:
    flusher = Flusher()
    async with trio.open_nursery() as nursery:
        await nursery.start(flusher.run)
        ours, theirs = _pair()
        ours.socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        box = flusher.outbox(ours)
        payload = bytes(range(256)) * 400  # 100 KiB: far more than the socket buffers take
        assert box.put(payload)
        await trio.testing.wait_all_tasks_blocked()
        assert box.blocked and 0 < box.size < len(payload)  # the rest waits for the reader
        assert box.put(b"after")  # more may be queued meanwhile, and keeps its order
        received = await _read_exactly(theirs, len(payload) + 5)
        assert received == payload + b"after"
        await box.drained()
        assert box.size == 0 and not box.blocked
        nursery.cancel_scope.cancel()


async def test_an_outbox_is_bounded_in_bytes_and_a_closed_one_sends_nothing() -> None:
    flusher = Flusher()
    ours, theirs = _pair()
    box = outbound.Outbox(ours.socket.fileno(), flusher, limit=1000)
    assert box.put(b"x" * 600)
    assert not box.put(b"y" * 600)  # over the limit: refused, nothing queued
    assert box.size == 600
    box.close()
    assert box.size == 0 and box.failed
    async with trio.open_nursery() as nursery:
        await nursery.start(flusher.run)
        flusher.mark(box)
        await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    assert flusher.sends == 0  # a closed outbox never touches its descriptor again


async def test_a_peer_gone_fails_the_outbox_and_tells_its_owner() -> None:
    flusher = Flusher()
    ours, theirs = _pair()
    await theirs.aclose()
    reasons: list[str] = []
    box = outbound.Outbox(ours.socket.fileno(), flusher, reasons.append)
    async with trio.open_nursery() as nursery:
        await nursery.start(flusher.run)
        box.put(b"hello")
        await box.drained()
        nursery.cancel_scope.cancel()
    assert reasons == ["write_failed"] and box.failed


async def test_a_stream_without_a_socket_is_written_in_order_and_counted_until_taken() -> None:
    """An in-process stream (a gateway's) has no descriptor: a task writes it with send_all, in order."""
    flusher = Flusher()
    ours, theirs = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(flusher.run)
        box = flusher.outbox(ours)
        assert box.fd == -1
        assert box.put(b"one") and box.put(b"two")
        await trio.testing.wait_all_tasks_blocked()
        assert box.put(b"three")  # queued while the first write may still be under way
        data = b""
        while len(data) < 11:
            data += await theirs.receive_some()
        assert data == b"onetwothree"
        await box.drained()
        assert box.size == 0 and not box.blocked
        nursery.cancel_scope.cancel()


async def test_a_waiting_superseding_frame_is_replaced_and_only_its_bytes_are_counted() -> None:
    box = outbound.Outbox(-1, None, limit=100)
    assert box.put(b"L" * 40, supersede=True)
    assert box.put(b"x")
    assert box.put(b"M" * 50, supersede=True)  # replaces the first list: 51 bytes held, not 91
    assert box.size == 51
    assert not box.put(b"N" * 120, supersede=True)  # over the limit even in place of the waiting one
    assert box.take() == b"x" + b"M" * 50
    assert box.size == 51  # counted until the socket takes it
    box.sent(51)
    assert box.size == 0
