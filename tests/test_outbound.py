"""The outbound path: one flusher, one send() per dirty connection per scheduler pass, bounded in bytes."""

from __future__ import annotations

import socket

import trio
import trio.testing

from quatro_server.net import outbound
from quatro_server.net.outbound import Flusher


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


# --- the server's side: backpressure on a client's own requests, and the reasons it is cut ----------------------

from dataclasses import replace  # noqa: E402

from quatro_shared import protocol as p  # noqa: E402
from quatro_shared.framing import FrameDecoder, encode  # noqa: E402

from helpers.netclient import TestClient  # noqa: E402
from quatro_server import server as server_module  # noqa: E402
from test_hardening import conn_of, connect_from, wait_until  # noqa: E402


async def test_a_client_that_pipelines_requests_past_its_budget_is_answered_as_it_reads_not_cut(server):
    """Fourteen ``list_tables`` in one write, their answers far over the outbound budget: the server reads the next
    request only as the client reads the answers before it, and every one is answered; nobody is cut."""
    server.config = replace(server.config, max_outbound_bytes=4 * 1024)
    for i in range(6):  # a list of some size: each answer is a good part of the budget
        host = await connect_from(server.port, f"127.0.0.{10 + i}", f"host{i}")
        assert (await host.request(p.CREATE_TABLE, players=8, timing="steady"))["kind"] == p.OK
    listers = [await TestClient.connect(server.port, f"lister{i}") for i in range(10)]
    one = len(encode((await listers[0].request(p.LIST_TABLES)) | {"id": 10**6}))
    assert 14 * one > 2 * server.config.max_outbound_bytes

    async def pipeline(c: TestClient) -> None:
        await c.send_raw(b"".join(encode({"kind": p.LIST_TABLES, "id": 100 + n}) for n in range(14)))
        answered = set()
        with trio.fail_after(10):
            while len(answered) < 14:
                frame = await c.next_frame()
                assert frame is not None, "cut off"
                if frame.get("kind") == p.OK:
                    assert len(frame["tables"]) == 6
                    answered.add(frame["id"])
        assert answered == set(range(100, 114))

    async with trio.open_nursery() as nursery:
        for c in listers:
            nursery.start_soon(pipeline, c)
    assert all(conn.closed_reason is None for conn in server.connections)


async def test_a_client_that_neither_reads_nor_drains_is_cut_as_a_slow_reader_after_the_deadline(server):
    """Backpressure waits for a reader, not for ever: one that reads nothing is a slow reader."""
    server.config = replace(server.config, max_outbound_bytes=4 * 1024, slow_reader_after=1.0)
    for i in range(6):
        host = await connect_from(server.port, f"127.0.0.{10 + i}", f"host{i}")
        assert (await host.request(p.CREATE_TABLE, players=8, timing="steady"))["kind"] == p.OK
    mute = await connect_from(server.port, "127.0.0.30", "mute", rcvbuf=2048)
    conn = conn_of(server, "mute")
    conn.stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 2048)
    await mute.send_raw(b"".join(encode({"kind": p.LIST_TABLES, "id": 100 + n}) for n in range(200)))
    await wait_until(lambda: conn.closed_reason is not None, timeout=10)
    assert conn.closed_reason == "slow_reader"


async def test_the_kernels_cut_of_a_peer_that_stops_reading_is_logged_as_a_slow_reader(server, monkeypatch, caplog):
    """A zero window for the kernel's user timeout (TCP_USER_TIMEOUT): the socket fails with ETIMEDOUT, and the log
    says the peer did not read, not that it hung up."""
    monkeypatch.setattr(server_module, "TCP_USER_TIMEOUT", 1)
    caplog.set_level("DEBUG", logger="quatro.server")
    ann = await connect_from(server.port, "127.0.0.2", "ann", rcvbuf=2048)
    assert (await ann.request(p.CREATE_TABLE, players=4, timing="steady"))["kind"] == p.OK
    conn = conn_of(server, "ann")
    conn.stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 2048)
    noisy = await connect_from(server.port, "127.0.0.3", "noisy")
    assert (await noisy.request(p.JOIN, table=ann.table))["kind"] == p.OK
    with trio.fail_after(20):
        n = 0
        while conn.closed_reason is None:  # every rename is a 'table' push to ann, who never reads
            n += 1
            await noisy.request(p.RENAME, name=f"noisy{n % 1000}")
            await trio.sleep(1 / 40)
    assert conn.queued_bytes < server.config.max_outbound_bytes or conn.outbox.failed
    assert conn.closed_reason == "slow_reader", conn.closed_reason


async def test_a_connection_closed_after_its_last_word_reads_what_the_client_still_sends_so_no_reset_eats_it(server):
    """The server's last word (here: say hello first) is followed by the end of its side, not by a reset: what the
    client sends after it is read and dropped for a moment, so the client's sends do not fail and it reads the
    error, then the end."""
    server.config = replace(server.config, hello_timeout=0.2)
    stream = await trio.open_tcp_stream("127.0.0.1", server.port)
    await trio.sleep(0.5)  # the server has said why and closed its side
    for n in range(2):
        await stream.send_all(encode({"kind": p.PING, "id": n}))  # a reset would fail the second send
        await trio.sleep(0.1)
    data = b""
    with trio.fail_after(5):
        while chunk := await stream.receive_some(65536):
            data += chunk
    (frame,) = FrameDecoder().feed(data)
    assert frame["kind"] == p.ERROR and frame["code"] == p.HELLO_FIRST
    await stream.aclose()
