"""The soak's doors: the SSH and browser doors attacked beside the game port, then the whole server under a lowered
descriptor limit (``ulimit -n``).

Each scenario reports its figures and ``passed``, by a criterion stated beside it:

SSH door
    ssh_huge_windows      sessions asking for 65535 × 65535 cells at login and 100000 × 100000 by a resize: each
                          client draws the lobby and stays under ``CLIENT_RSS_BOUND`` resident
    ssh_handshake_flood   half-done handshakes from one address, then from many: at most the per-address and the
                          total caps held at once, each closed by the login deadline; a login from elsewhere gets
                          in during the one-address flood
    ssh_abrupt_kills      sessions whose TCP link is cut without a word, and a client killed with SIGKILL: every
                          client of theirs is gone within ``GONE_WITHIN`` seconds, the others' sessions live on
browser door
    web_slowloris         connections dripping a header line every 2 s: each closed by the header deadline; a
                          page from elsewhere still loads meanwhile
    web_junk_http         requests that are not HTTP, or not HTTP the door reads: each answered or closed, and
                          the log grows by less than ``LOG_BOUND`` bytes, with no traceback
    web_deep_json         a websocket message nested 30000 deep: ignored, the visit answers a ping after it
    web_forged_cookies    websockets and pages with tokens the door never issued: no visitor directory made
    web_foreign_origins   websockets opened by another site's page: refused (403), the log bounded
all of them
    game_port_hellos      all the while, a hello on the game port from another address every 0.25 s: every one
                          answered, 99 in 100 within ``HELLO_BOUND`` seconds, none later than ``HELLO_LIMIT``
descriptors (a server of its own, at ``STARVED_NOFILE`` descriptors)
    descriptor_starvation slowloris and handshake floods from many addresses past what the descriptors allow:
                          the game port answers every hello (as above), the log stays bounded with no
                          traceback, and once the floods are gone a page loads and an SSH login gets in

The attacks run on asyncio (asyncssh and aiohttp are asyncio libraries) in a thread of their own; the hellos are
timed from trio, beside them.
"""

from __future__ import annotations

import asyncio
import math
import os
import secrets
import signal
import socket
import time
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeAlias

import trio

from quatro_shared import protocol as p
from quatro_shared.framing import FrameDecoder, encode

from quatro_server.doors.gate import (
    SSH_LOGIN_TIMEOUT,
    SSH_MAX_HANDSHAKES,
    SSH_MAX_HANDSHAKES_PER_ADDRESS,
    WEB_HEADER_TIMEOUT,
)

if TYPE_CHECKING:
    import tempfile
    from collections import Counter

    import aiohttp
    import asyncssh

#: A visitor's client under the largest window stays under this resident size (it takes about 60 MiB at 400 × 200).
CLIENT_RSS_BOUND_MIB = 200
#: Game-port hellos are answered, 99 in 100 within HELLO_BOUND seconds and every one within HELLO_LIMIT, whatever
#: the doors are put through. (The doors share the process, so a door kept busy takes CPU from the game port: on a
#: machine also busy with other work the slowest hello comes near a second.)
HELLO_BOUND = 1.0
HELLO_LIMIT = 3.0
#: Bytes the log may grow by during a scenario that sends thousands of bad requests.
LOG_BOUND = 32 * 1024
#: Bad HTTP requests sent by ``web_junk_http``.
JUNK_REQUESTS = 1600
#: Seconds within which a session's client is gone once its SSH link is cut.
GONE_WITHIN = 8.0
#: The descriptor limit of the starved server, and how long it is flooded.
STARVED_NOFILE = 256
STARVED_SECONDS = 22.0
#: Where each attack comes from (loopback holds all of 127.0.0.0/8); the hellos come from HELLO_FROM.
HELLO_FROM = "127.0.0.2"
SSH_FLOOD_ONE = "127.0.2.1"
SSH_FLOOD_MANY = [f"127.0.3.{i}" for i in range(1, 11)]
SSH_HONEST = "127.0.2.200"
SLOWLORIS = [f"127.0.4.{i}" for i in range(1, 5)]
WEB_JUNK = "127.0.5.1"
WEB_HONEST = "127.0.5.200"
STARVED_SLOWLORIS = [f"127.0.6.{i}" for i in range(1, 11)]
LOBBY = b"Tables on this server"


@dataclass
class Target:
    """The server under attack, as the attacks see it."""

    host: str
    game_port: int
    ssh_port: int
    web_port: int
    pid: int
    data_dir: Path
    log_bytes: Callable[[], int]
    tracebacks: Callable[[], int]
    results: dict[str, dict[str, object]] = field(default_factory=dict)


#: One attack on the doors: its figures as JSON, ``passed`` among them.
DoorScenario: TypeAlias = Callable[[Target], Awaitable[dict[str, object]]]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def clients_of(pid: int) -> list[int]:
    """The server's child processes (the doors' clients)."""
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as f:
                found += [int(child) for child in f.read().split()]
    except OSError:
        pass
    return found


def peak_rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return 0.0


# --- the game port, timed from trio -----------------------------------------------------------------------------


async def hellos(port: int, until: Callable[[], bool], every: float = 0.25) -> dict[str, object]:
    """A new connection and a hello every ``every`` seconds until ``until()``: the 99th percentile and the slowest
    answer, and failures."""
    took_all: list[float] = []
    failed = 0
    while not until():
        started = trio.current_time()
        ok = False
        with trio.move_on_after(5):
            try:
                sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_STREAM)
                await sock.bind((HELLO_FROM, 0))
                await sock.connect(("127.0.0.1", port))
                stream = trio.SocketStream(sock)
                await stream.send_all(
                    encode({"kind": p.HELLO, "id": 1, "version": p.PROTOCOL_VERSION, "name": "probe"})
                )
                decoder = FrameDecoder()
                while not ok:
                    data = await stream.receive_some(65536)
                    if not data:
                        break
                    ok = any(frame.get("id") == 1 and frame.get("kind") == p.OK for frame in decoder.feed(data))
                await stream.aclose()
            except OSError:
                pass
        took = trio.current_time() - started
        if ok:
            took_all.append(took)
        else:
            failed += 1
        await trio.sleep(max(0.0, every - took))
    took_all.sort()
    p99 = took_all[min(len(took_all) - 1, math.ceil(0.99 * len(took_all)) - 1)] if took_all else math.inf
    slowest = took_all[-1] if took_all else math.inf
    return {
        "passed": failed == 0 and bool(took_all) and p99 < HELLO_BOUND and slowest < HELLO_LIMIT,
        "answered": len(took_all),
        "failed": failed,
        "p99_s": round(p99, 3),
        "slowest_s": round(slowest, 3),
        "p99_bound_s": HELLO_BOUND,
        "limit_s": HELLO_LIMIT,
    }


# --- the SSH door -----------------------------------------------------------------------------------------------


async def _ssh_session(
    t: Target, user: str, size: tuple[int, int]
) -> tuple[asyncssh.SSHClientConnection, asyncssh.SSHClientProcess[bytes]]:
    import asyncssh

    conn = await asyncssh.connect(
        t.host,
        t.ssh_port,
        username=user,
        known_hosts=None,
        agent_path=None,
        client_keys=None,
        password="",
        login_timeout=30,
    )
    process: asyncssh.SSHClientProcess[bytes] = await conn.create_process(
        term_type="xterm-256color", term_size=size, encoding=None
    )
    return conn, process


async def _read_until(process: asyncssh.SSHClientProcess[bytes], text: bytes, timeout: float) -> bool:
    seen = b""
    deadline = time.monotonic() + timeout
    while text not in seen[-1_000_000:]:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        try:
            chunk = await asyncio.wait_for(process.stdout.read(65536), left)
        except (TimeoutError, asyncio.TimeoutError):
            return False
        if not chunk:
            return False
        seen = seen[-200_000:] + chunk
    return True


async def _drain(process: asyncssh.SSHClientProcess[bytes]) -> None:
    with suppress(Exception):
        while await process.stdout.read(65536):
            pass


async def ssh_huge_windows(t: Target) -> dict[str, object]:
    before = set(clients_of(t.pid))
    conn, process = await _ssh_session(t, "wide", (65535, 65535))
    drew = await _read_until(process, LOBBY, 40)
    process.change_terminal_size(100000, 100000)
    draining = asyncio.ensure_future(_drain(process))
    await asyncio.sleep(4)
    mine = [pid for pid in clients_of(t.pid) if pid not in before]
    rss = max((peak_rss_mib(pid) for pid in mine), default=0.0)
    alive = bool(mine)
    conn.close()
    draining.cancel()
    passed = drew and alive and 0 < rss < CLIENT_RSS_BOUND_MIB
    return {
        "passed": passed,
        "drew_lobby": drew,
        "alive_after_resize": alive,
        "client_peak_rss_mib": round(rss, 1),
        "bound_mib": CLIENT_RSS_BOUND_MIB,
    }


async def _half_handshake(t: Target, local: str, held: _Held) -> None:
    """Open a connection, send a version line, then nothing: note how long the door holds it."""
    started = time.monotonic()
    try:
        reader, writer = await asyncio.open_connection(t.host, t.ssh_port, local_addr=(local, 0))
    except OSError:
        held.failed += 1
        return
    writer.write(b"SSH-2.0-soak\r\n")
    banner = False
    try:
        while data := await asyncio.wait_for(reader.read(65536), SSH_LOGIN_TIMEOUT + 10):
            if not banner and data.startswith(b"SSH-"):
                banner = True
                held.now += 1
                held.by[local] = held.by.get(local, 0) + 1
                held.max = max(held.max, held.now)
                held.max_one = max(held.max_one, held.by[local])
    except (OSError, TimeoutError, asyncio.TimeoutError):
        pass
    finally:
        writer.close()
    if banner:
        held.now -= 1
        held.by[local] -= 1
        held.held += 1
        held.longest = max(held.longest, time.monotonic() - started)
    else:
        held.refused += 1


async def _login(t: Target, local: str) -> bool:
    import asyncssh

    try:
        conn = await asyncssh.connect(
            t.host,
            t.ssh_port,
            username="honest",
            known_hosts=None,
            agent_path=None,
            client_keys=None,
            password="",
            local_addr=(local, 0),
            login_timeout=15,
        )
    except (OSError, asyncssh.Error):
        return False
    conn.close()
    return True


@dataclass
class _Held:
    """Half-open SSH handshakes (``_half_handshake``): held now, at most at once (from one address), by address,
    held in all, refused, failed to connect, and the longest held (seconds)."""

    now: int = 0
    max: int = 0
    max_one: int = 0
    by: dict[str, int] = field(default_factory=dict)
    held: int = 0
    refused: int = 0
    failed: int = 0
    longest: float = 0.0


def _held() -> _Held:
    return _Held()


async def ssh_handshake_flood(t: Target) -> dict[str, object]:
    one = _held()
    flood = [asyncio.ensure_future(_half_handshake(t, SSH_FLOOD_ONE, one)) for _ in range(40)]
    await asyncio.sleep(2)
    login_during = await _login(t, SSH_HONEST)
    await asyncio.gather(*flood)
    many = _held()
    flood = [asyncio.ensure_future(_half_handshake(t, local, many)) for local in SSH_FLOOD_MANY for _ in range(12)]
    await asyncio.gather(*flood)
    login_after = await _login(t, SSH_HONEST)
    deadline = SSH_LOGIN_TIMEOUT + 3
    passed = (
        login_during
        and login_after
        and one.max_one <= SSH_MAX_HANDSHAKES_PER_ADDRESS
        and many.max <= SSH_MAX_HANDSHAKES
        and many.max_one <= SSH_MAX_HANDSHAKES_PER_ADDRESS
        and max(one.longest, many.longest) < deadline
        and one.refused > 0
        and many.refused > 0
    )
    return {
        "passed": passed,
        "one_address": {
            "attempts": 40,
            "held_at_once": one.max_one,
            "refused": one.refused,
            "longest_held_s": round(one.longest, 1),
        },
        "many_addresses": {
            "attempts": 12 * len(SSH_FLOOD_MANY),
            "held_at_once": many.max,
            "held_at_once_per_address": many.max_one,
            "refused": many.refused,
            "longest_held_s": round(many.longest, 1),
        },
        "login_during_one_address_flood": login_during,
        "login_after": login_after,
        "caps": {
            "handshakes": SSH_MAX_HANDSHAKES,
            "per_address": SSH_MAX_HANDSHAKES_PER_ADDRESS,
            "deadline_s": SSH_LOGIN_TIMEOUT,
        },
    }


async def ssh_abrupt_kills(t: Target) -> dict[str, object]:
    before = set(clients_of(t.pid))
    sessions = []
    for i in range(2):
        sessions.append(await _ssh_session(t, f"cut{i}", (100, 30)))
    drew = all([await _read_until(process, LOBBY, 40) for _, process in sessions])
    cut = set(clients_of(t.pid)) - before
    survivor_conn, survivor = await _ssh_session(t, "killed", (100, 30))
    drew = drew and await _read_until(survivor, LOBBY, 40)
    killed = set(clients_of(t.pid)) - before - cut
    mine = cut | killed
    # Two links cut without a word (no SSH disconnect, no FIN); one client killed outright (its session must end).
    for conn, _ in sessions:
        conn.abort()
    killed_ended = False
    for pid in killed:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    started = time.monotonic()
    left = sorted(mine)
    while time.monotonic() - started < GONE_WITHIN:
        left = [pid for pid in clients_of(t.pid) if pid not in before]
        if not left:
            break
        await asyncio.sleep(0.2)
    gone_after = time.monotonic() - started
    with suppress(Exception):
        await asyncio.wait_for(survivor.wait(), 5)
        killed_ended = True
    survivor_conn.close()
    passed = drew and len(cut) == 2 and len(killed) == 1 and not left and killed_ended
    return {
        "passed": passed,
        "sessions": 3,
        "drew_lobby": drew,
        "clients_left": len(left),
        "all_gone_after_s": round(gone_after, 1),
        "killed_clients_session_ended": killed_ended,
        "bound_s": GONE_WITHIN,
    }


# --- the browser door -------------------------------------------------------------------------------------------


async def _drip(t: Target, local: str, closed_after: list[float], every: float = 2.0, limit: float = 40.0) -> None:
    started = time.monotonic()
    try:
        reader, writer = await asyncio.open_connection(t.host, t.web_port, local_addr=(local, 0))
    except OSError:
        closed_after.append(0.0)
        return
    try:
        writer.write(b"GET / HTTP/1.1\r\nHost: soak\r\n")
        while time.monotonic() - started < limit:
            try:
                data = await asyncio.wait_for(reader.read(4096), every)
            except (TimeoutError, asyncio.TimeoutError):
                writer.write(b"X-Slow: " + secrets.token_hex(4).encode() + b"\r\n")
                await writer.drain()
                continue
            if not data:
                break
    except OSError:
        pass
    finally:
        writer.close()
    closed_after.append(time.monotonic() - started)


async def _page(t: Target, local: str, cookie: str | None = None) -> tuple[int, str]:
    """GET / from ``local``: its status and the token its cookie sets."""
    reader, writer = await asyncio.open_connection(t.host, t.web_port, local_addr=(local, 0))
    head = f"GET / HTTP/1.1\r\nHost: {t.host}:{t.web_port}\r\nConnection: close\r\n"
    if cookie is not None:
        head += f"Cookie: quatro_visitor={cookie}\r\n"
    writer.write((head + "\r\n").encode())
    data = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
    token = ""
    for line in data.split(b"\r\n"):
        if line.lower().startswith(b"set-cookie: quatro_visitor="):
            token = line.split(b"=", 1)[1].split(b";", 1)[0].decode()
    return status, token


async def web_slowloris(t: Target) -> dict[str, object]:
    closed_after: list[float] = []
    drips = [asyncio.ensure_future(_drip(t, local, closed_after)) for local in SLOWLORIS for _ in range(25)]
    await asyncio.sleep(3)
    status, _ = await _page(t, WEB_HONEST)
    await asyncio.gather(*drips)
    longest = max(closed_after, default=0.0)
    passed = status == 200 and longest < WEB_HEADER_TIMEOUT + 3
    return {
        "passed": passed,
        "connections": len(closed_after),
        "longest_held_s": round(longest, 1),
        "header_deadline_s": WEB_HEADER_TIMEOUT,
        "page_meanwhile": status,
    }


JUNK = (
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 40,  # a TLS hello
    b"GET / HTTP/9.9\r\n\r\n",
    b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
    b"GET / HTTP/1.1\r\n" + b"X: " + b"b" * 20000 + b"\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"\x00\xff\r\n\r\n",
    b"POST / HTTP/1.1\r\nHost\r\n\r\n",
)


async def _junk(t: Target, data: bytes, answered: list[bool]) -> None:
    try:
        reader, writer = await asyncio.open_connection(t.host, t.web_port, local_addr=(WEB_JUNK, 0))
    except OSError:
        answered.append(False)
        return
    try:
        writer.write(data)
        await asyncio.wait_for(reader.read(), 5)
        answered.append(True)
    except (OSError, TimeoutError, asyncio.TimeoutError):
        answered.append(False)
    finally:
        writer.close()


async def web_junk_http(t: Target) -> dict[str, object]:
    start_bytes, start_tracebacks = t.log_bytes(), t.tracebacks()
    answered: list[bool] = []
    sent = 0
    started = time.monotonic()
    while sent < JUNK_REQUESTS:
        batch = [_junk(t, JUNK[(sent + i) % len(JUNK)], answered) for i in range(min(24, JUNK_REQUESTS - sent))]
        await asyncio.gather(*batch)
        sent += len(batch)
    took = time.monotonic() - started
    await asyncio.sleep(1)
    grew = t.log_bytes() - start_bytes
    tracebacks = t.tracebacks() - start_tracebacks
    passed = all(answered) and grew < LOG_BOUND and tracebacks == 0
    return {
        "passed": passed,
        "requests": sent,
        "seconds": round(took, 1),
        "answered_or_closed": sum(answered),
        "log_bytes": grew,
        "log_bound": LOG_BOUND,
        "tracebacks": tracebacks,
    }


async def _websocket(
    t: Target, token: str, origin: str | None = None
) -> tuple[aiohttp.ClientSession, aiohttp.ClientWebSocketResponse]:
    import aiohttp

    session = aiohttp.ClientSession(cookies={"quatro_visitor": token})
    headers = {"Origin": origin or f"http://{t.host}:{t.web_port}"}
    try:
        page = await session.ws_connect(
            f"http://{t.host}:{t.web_port}/ws?width=100&height=30", headers=headers, max_msg_size=0
        )
    except Exception:
        await session.close()
        raise
    return session, page


async def web_deep_json(t: Target) -> dict[str, object]:
    import aiohttp

    status, token = await _page(t, WEB_HONEST)
    session, page = await _websocket(t, token)
    pong = drew = False
    try:
        with suppress(TimeoutError, asyncio.TimeoutError):
            async with asyncio.timeout(40):
                async for message in page:
                    if message.type == aiohttp.WSMsgType.BINARY:
                        drew = True
                        break
        await page.send_str("[" * 30000 + "]" * 30000)
        await page.send_str('{"a":' * 6000 + "1" + "}" * 6000)
        await page.send_str('["ping", "soak"]')
        with suppress(TimeoutError, asyncio.TimeoutError):
            async with asyncio.timeout(10):
                async for message in page:
                    if message.type == aiohttp.WSMsgType.TEXT and message.data == '["pong", "soak"]':
                        pong = True
                        break
    finally:
        await page.close()
        await session.close()
    return {"passed": status == 200 and drew and pong, "depth": 30000, "visit_answered_after": pong}


def _visitor_dirs(t: Target) -> int:
    try:
        return len(os.listdir(t.data_dir / "web-clients"))
    except OSError:
        return 0


async def web_forged_cookies(t: Target) -> dict[str, object]:
    import aiohttp

    before = _visitor_dirs(t)
    forged = [secrets.token_urlsafe(32) for _ in range(10)]  # the old form, random
    forged += [f"{secrets.token_urlsafe(16)[:22]}.{secrets.token_urlsafe(16)[:22]}" for _ in range(10)]  # no true HMAC
    turned_away = 0
    replaced = 0
    for token in forged:
        session, page = await _websocket(t, token)
        try:
            with suppress(TimeoutError, asyncio.TimeoutError):
                async with asyncio.timeout(10):
                    async for message in page:
                        if message.type == aiohttp.WSMsgType.BINARY and b"needs its cookie" in message.data:
                            turned_away += 1
        finally:
            await page.close()
            await session.close()
        _, issued = await _page(t, WEB_HONEST, cookie=token)
        replaced += bool(issued) and issued != token
    await asyncio.sleep(1)
    made = _visitor_dirs(t) - before
    return {
        "passed": made == 0 and turned_away == len(forged) and replaced == len(forged),
        "forged": len(forged),
        "websockets_turned_away": turned_away,
        "pages_given_a_new_token": replaced,
        "visitor_dirs_made": made,
    }


async def web_foreign_origins(t: Target) -> dict[str, object]:
    import aiohttp

    start_bytes = t.log_bytes()
    refused = 0
    _, token = await _page(t, WEB_HONEST)
    for _ in range(60):
        try:
            session, page = await _websocket(t, token, origin="http://evil.example")
        except aiohttp.WSServerHandshakeError as exc:
            refused += exc.status == 403
            continue
        await page.close()
        await session.close()
    grew = t.log_bytes() - start_bytes
    return {"passed": refused == 60 and grew < LOG_BOUND, "attempts": 60, "refused_403": refused, "log_bytes": grew}


DOOR_SCENARIOS: dict[str, DoorScenario] = {
    "ssh_huge_windows": ssh_huge_windows,
    "ssh_abrupt_kills": ssh_abrupt_kills,
    "ssh_handshake_flood": ssh_handshake_flood,
    "web_slowloris": web_slowloris,
    "web_junk_http": web_junk_http,
    "web_deep_json": web_deep_json,
    "web_forged_cookies": web_forged_cookies,
    "web_foreign_origins": web_foreign_origins,
}


async def _guarded(t: Target, name: str, scenario: DoorScenario) -> None:
    try:
        t.results[name] = await scenario(t)
    except Exception as exc:  # noqa: BLE001 - the scenario could not run: it failed
        t.results[name] = {"passed": False, "error": f"{type(exc).__name__}: {exc}"[:300]}


async def _attack(t: Target, scenarios: dict[str, DoorScenario]) -> None:
    # The SSH scenarios one after another (each starts clients or fills the handshake cap), beside the browser's.
    ssh = [(name, s) for name, s in scenarios.items() if name.startswith("ssh_")]
    web = [(name, s) for name, s in scenarios.items() if not name.startswith("ssh_")]

    async def one_by_one(group: list[tuple[str, DoorScenario]]) -> None:
        for name, scenario in group:
            await _guarded(t, name, scenario)

    await asyncio.gather(one_by_one(ssh), one_by_one(web))


async def _starve(t: Target, held: _Held) -> None:
    """Floods from many addresses past what the descriptors allow; then the doors must work again."""
    closed_after: list[float] = []
    attacks = [
        asyncio.ensure_future(_drip(t, local, closed_after, limit=20)) for local in STARVED_SLOWLORIS for _ in range(30)
    ]
    attacks += [asyncio.ensure_future(_half_handshake(t, local, held)) for local in SSH_FLOOD_MANY for _ in range(15)]
    await asyncio.gather(*attacks)
    status = 0
    with suppress(Exception):
        status, _ = await _page(t, WEB_HONEST)
    login = await _login(t, SSH_HONEST)
    t.results["descriptor_starvation"] = {
        "slowloris": len(closed_after),
        "slowloris_longest_held_s": round(max(closed_after, default=0.0), 1),
        "handshakes": 15 * len(SSH_FLOOD_MANY),
        "handshakes_held": held.held,
        "handshakes_refused": held.refused,
        "page_after": status,
        "login_after": login,
    }


# --- running them -----------------------------------------------------------------------------------------------


async def _serve(server: SoakServer, nursery: trio.Nursery) -> Target:
    await server.start(nursery)
    assert server.process is not None  # start began it
    return Target(
        "127.0.0.1",
        server.port,
        server.ssh_port,
        server.web_port,
        server.process.pid,
        Path(server.data_dir.name),
        lambda: server.log_bytes,
        lambda: server.tracebacks,
    )


class SoakServer(Protocol):
    """A server under attack, as the scenarios here and in ``soak_directory`` see it: the soak's
    ``quatro_server.tools.soak.ServerProcess`` (named by this protocol, not imported: the soak imports the scenarios).
    """

    port: int
    ssh_port: int
    web_port: int
    metrics_port: int
    process: trio.Process | None
    data_dir: tempfile.TemporaryDirectory[str]
    log_bytes: int
    tracebacks: int
    log_tail: list[str]
    errors: list[str]
    deaths: int
    peak_rss_kib: int
    marks: Counter[str]

    async def start(self, nursery: trio.Nursery) -> None: ...

    async def stop(self) -> None: ...


#: How the soak starts a server (``quatro_server.tools.soak.ServerProcess``): its extra arguments, what it prints once it
#: listens, its log's level, its descriptor limit.
class ServerStarter(Protocol):
    def __call__(
        self,
        extra: list[str] | None = None,
        *,
        ready: bytes = ...,
        log_level: str = ...,
        nofile: int | None = None,
        marks: tuple[str, ...] = (),
    ) -> SoakServer: ...


def _door_server(starter: ServerStarter, nofile: int | None = None) -> SoakServer:
    ssh_port, web_port = free_port(), free_port()
    server = starter(
        ["--ssh", str(ssh_port), "--web", str(web_port)], ready=b"http://", log_level="info", nofile=nofile
    )
    server.ssh_port, server.web_port = ssh_port, web_port
    return server


async def soak_doors(starter: ServerStarter, scenarios: dict[str, DoorScenario] | None = None) -> dict[str, object]:
    """Every door scenario against one server, the game port's hellos timed meanwhile."""
    server = _door_server(starter)
    async with trio.open_nursery() as nursery:
        t = await _serve(server, nursery)
        done = trio.Event()

        async def attack() -> None:
            try:
                await trio.to_thread.run_sync(asyncio.run, _attack(t, scenarios or DOOR_SCENARIOS))
            finally:
                done.set()

        nursery.start_soon(attack)
        t.results["game_port_hellos"] = await hellos(t.game_port, done.is_set)
        await server.stop()
        nursery.cancel_scope.cancel()
    return _report(t, server)


async def soak_descriptors(starter: ServerStarter) -> dict[str, object]:
    """The server at ``STARVED_NOFILE`` descriptors, flooded through both doors; the game port's hellos timed."""
    server = _door_server(starter, STARVED_NOFILE)
    async with trio.open_nursery() as nursery:
        t = await _serve(server, nursery)
        start_bytes = server.log_bytes
        done = trio.Event()
        held = _held()

        async def attack() -> None:
            try:
                await trio.to_thread.run_sync(asyncio.run, _starve(t, held))
            finally:
                done.set()

        nursery.start_soon(attack)
        answered = await hellos(t.game_port, done.is_set)
        await trio.sleep(0.5)
        starved = t.results["descriptor_starvation"]
        grew = server.log_bytes - start_bytes
        starved.update(
            nofile=STARVED_NOFILE,
            game_port_hellos=answered,
            log_bytes=grew,
            log_bound=LOG_BOUND,
            tracebacks=server.tracebacks,
        )
        starved["passed"] = (
            answered["passed"]
            and grew < LOG_BOUND
            and server.tracebacks == 0
            and starved["page_after"] == 200
            and starved["login_after"]
            and held.refused > 0
            and held.held > 0
        )
        await server.stop()
        nursery.cancel_scope.cancel()
    return _report(t, server)


def _report(t: Target, server: SoakServer) -> dict[str, object]:
    crashed = server.deaths + len(server.errors)
    return {
        "passed": all(result.get("passed") for result in t.results.values()) and not crashed,
        "crashes": crashed,
        "server_errors": server.errors[:5],
        "server_log_tail": server.log_tail[-8:],
        "server_peak_rss_mib": round(server.peak_rss_kib / 1024, 1),
        "scenarios": t.results,
    }
