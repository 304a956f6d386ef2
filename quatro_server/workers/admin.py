"""The operator's hand on a running server: ``quatro-server admin`` over a local Unix socket.

The server listens on ``DATA/admin.sock`` (``--admin-socket PATH`` elsewhere), mode 0600, and answers only
connections from the Unix account that runs it (the file's mode, and the peer's credentials, ``SO_PEERCRED``, checked
on every connection). A second server on the same path is refused while the first lives; a socket file left by a
server that died is replaced. A server of workers (``--workers``) has one such socket for the whole server, its
supervisor's (``WholeServer``), which asks each worker on the worker's own.

The admin protocol is not the game's: the same frames (``quatro_shared.framing``: a length, then a msgpack map with a
``kind``), small typed requests and replies, one reply per request, documented in docs/operating.md ("Admin and
draining"). Requests: ``tables``, ``close``, ``remove``, ``notice``, ``drain``. Replies: ``ok`` with the request's
fields, ``refused`` (``reason`` and ``message``: no such table, no player at that seat...) or ``error`` (``code`` and
``message``: a request this side cannot read, or a caller that is not the server's account).
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import json
import logging
import math
import os
import socket
import stat
import struct
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sized
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeAlias, TypedDict

from quatro_shared import protocol as p
from quatro_shared.framing import FrameDecoder, Message, Outgoing, ProtocolError, count, encode, maps
from quatro_shared.wording import counted

from quatro_server.datadir import default_data_dir
from quatro_server.logs import shown

if TYPE_CHECKING:
    import trio

    from quatro_server.tables.lobby import Lobby
    from quatro_server.tables.room import Room

log = logging.getLogger("quatro.admin")

#: The socket's name in the server's data directory.
SOCKET_NAME = "admin.sock"
#: Seconds an admin connection may stay open without a request; one command takes milliseconds.
IDLE_LIMIT = 30.0
#: Seconds the command waits for the server's reply.
REPLY_TIMEOUT = 10.0
#: Seconds between two looks, for ``drain --wait``, at whether the server has stopped.
WAIT_POLL = 0.2
#: Seconds a refused caller's connection is read and dropped after its answer, before it is closed.
LINGER = 1.0
#: A reason the operator gives (``close --reason``, ``remove --reason``), at most this many characters.
MAX_REASON_LEN = 200
#: Admin connections open at once, at most: one more is answered ``error`` ``busy`` and closed (an operator runs one
#: command at a time; a script gone wrong must not hold the server's descriptors).
MAX_CONNECTIONS = 8
#: The error code of a connection over ``MAX_CONNECTIONS``.
BUSY = "busy"

#: The admin requests' kinds.
TABLES, CLOSE, REMOVE, NOTICE, DRAIN = "tables", "close", "remove", "notice", "drain"
#: Why an admin request is refused or in error.
NO_SUCH_TABLE = "no_such_table"
NO_SUCH_SEAT = "no_such_seat"
NO_PLAYER = "no_player"
ALREADY_DRAINING = "already_draining"
NOT_ALLOWED = "not_allowed"
BAD_REQUEST = "bad_request"


class Refusal(TypedDict):
    """The reply ``refused``: the request was read, and cannot be done (no such table...)."""

    kind: str
    reason: str
    message: str


class Failure(TypedDict):
    """The reply ``error``: a request this side cannot read, or a caller that is not the server's account."""

    kind: str
    code: str
    message: str


class AdminError(Exception):
    """A request the server does not take: ``refused`` (``reason``) or, ``error`` true, an ``error`` (``code``)."""

    def __init__(self, code: str, message: str, *, error: bool = False) -> None:
        super().__init__(message)
        self.code, self.message, self.error = code, message, error

    def reply(self) -> Refusal | Failure:
        if self.error:
            return {"kind": p.ERROR, "code": self.code, "message": self.message}
        return {"kind": p.REFUSED, "reason": self.code, "message": self.message}


# --- the requests, typed ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Tables:
    """Every table: id, game, phase, seats (names, bots, who is connected), watchers, age."""


@dataclass(frozen=True, slots=True)
class Close:
    """Close ``table``: its players and watchers are told (``reason``) and land in the lobby."""

    table: int
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Remove:
    """Remove the player of ``seat`` at ``table``: sent to the lobby, the seat's secret void."""

    table: int
    seat: int
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Notice:
    """Show ``text`` to every connected client (the ``notice`` push)."""

    text: str


@dataclass(frozen=True, slots=True)
class Drain:
    """Take no new tables or matches, let the running matches finish, then stop; at ``timeout`` seconds at the
    latest (None: when the last match ends)."""

    timeout: float | None = None


AdminRequest: TypeAlias = Tables | Close | Remove | Notice | Drain


# --- one server's answers, typed (docs/operating.md, "Admin and draining") ---------------------------------


class SeatAnswer(TypedDict):
    seat: int  # from 0, as the wire counts seats
    name: str | None
    bot: str | None  # the bot's level
    taken: bool
    connected: bool


class TableAnswer(TypedDict):
    table: int
    game: str
    phase: str
    players: int
    seats: list[SeatAnswer]
    watchers: int
    password: bool
    age_s: int
    idle_s: int


class TablesAnswer(TypedDict):
    kind: str
    tables: list[TableAnswer]
    draining: bool
    connections: int


class NoticeAnswer(TypedDict):
    kind: str
    told: int


class DrainAnswer(TypedDict):
    kind: str
    running: int
    timeout: float | None


class CloseAnswer(TypedDict):
    kind: str
    table: int
    told: int


class RemoveAnswer(TypedDict):
    kind: str
    table: int
    seat: int
    freed: bool
    told: bool


#: One server's ``ok`` to a request (``answer``).
Answer: TypeAlias = TablesAnswer | NoticeAnswer | DrainAnswer | CloseAnswer | RemoveAnswer


def _int(frame: Message, key: str) -> int:
    value = frame.get(key)
    if type(value) is not int or value < 0:
        raise AdminError(BAD_REQUEST, f"{key}: a whole number 0 or more", error=True)
    return value


def _text(frame: Message, key: str, limit: int, *, required: bool) -> str | None:
    value = frame.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not 1 <= len(value) <= limit or not p.printable(value):
        raise AdminError(BAD_REQUEST, f"{key}: printable text of 1 to {limit} characters, on one line", error=True)
    return value


def request_from_frame(frame: Message) -> AdminRequest:
    """The typed request of a frame. Raises ``AdminError`` (an ``error``) for one that does not fit."""
    kind = frame.get("kind")
    if kind == TABLES:
        return Tables()
    if kind == CLOSE:
        return Close(_int(frame, "table"), _text(frame, "reason", MAX_REASON_LEN, required=False))
    if kind == REMOVE:
        return Remove(_int(frame, "table"), _int(frame, "seat"), _text(frame, "reason", MAX_REASON_LEN, required=False))
    if kind == NOTICE:
        text = _text(frame, "text", p.MAX_NOTICE_LEN, required=True)
        assert text is not None
        return Notice(text)
    if kind == DRAIN:
        timeout = frame.get("timeout")
        if timeout is None:
            return Drain(None)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 <= timeout < math.inf:
            raise AdminError(
                BAD_REQUEST,
                "timeout: seconds, 0 or more (a number, not infinity: leave it out to wait for the last match)",
                error=True,
            )
        return Drain(float(timeout))
    raise AdminError(p.UNKNOWN_KIND, f"admin requests: {', '.join((TABLES, CLOSE, REMOVE, NOTICE, DRAIN))}", error=True)


def request_to_frame(request: AdminRequest) -> dict[str, object]:
    kind = {Tables: TABLES, Close: CLOSE, Remove: REMOVE, Notice: NOTICE, Drain: DRAIN}[type(request)]
    fields = {f.name: getattr(request, f.name) for f in dataclasses.fields(request)}
    return {"kind": kind, **{k: v for k, v in fields.items() if v is not None}}


# --- the server's side ---------------------------------------------------------------------------------


class Server(Protocol):
    """What the admin socket asks of the network shell (``quatro_server.server.Server``)."""

    lobby: Lobby

    @property
    def connections(self) -> Sized: ...

    def notice(self, text: str, *, draining: bool = False) -> int: ...

    def drain(self, timeout: float | None) -> int: ...


def answer(server: Server, request: AdminRequest, now: float) -> Answer:
    """The reply to one admin request, done at once on the server's loop. Raises ``AdminError``."""
    lobby = server.lobby
    if isinstance(request, Tables):
        return {
            "kind": p.OK,
            "tables": [_table(room, now) for room in sorted(lobby.rooms.values(), key=lambda r: r.id)],
            "draining": lobby.draining,
            "connections": len(server.connections),
        }
    if isinstance(request, Notice):
        told = server.notice(request.text)
        return {"kind": p.OK, "told": told}
    if isinstance(request, Drain):
        if lobby.draining:
            raise AdminError(ALREADY_DRAINING, "the server is draining already")
        running = server.drain(request.timeout)
        return {"kind": p.OK, "running": running, "timeout": request.timeout}
    room = lobby.rooms.get(request.table)
    if room is None:
        raise AdminError(NO_SUCH_TABLE, f"no table {request.table}")
    if isinstance(request, Close):
        told = sum(s.peer is not None for s in room.seats) + len(room.watchers)
        lobby.close_by_operator(room, request.reason or "the server's operator closed the table")
        return {"kind": p.OK, "table": request.table, "told": told}
    if not 0 <= request.seat < room.players:
        raise AdminError(NO_SUCH_SEAT, f"table {room.id} has seats 1 to {room.players}")
    s = room.seats[request.seat]
    if s.bot is not None or s.secret is None:
        raise AdminError(NO_PLAYER, f"no player sits at seat {request.seat + 1} of table {room.id}")
    connected = s.peer is not None
    freed = lobby.remove_by_operator(
        room, request.seat, request.reason or "the server's operator removed you from the table", now
    )
    return {"kind": p.OK, "table": room.id, "seat": request.seat, "freed": freed, "told": connected}


#: What answers the admin socket's requests: ``(request, now) -> reply`` (one server's ``Answer``, or a whole
#: server's, merged from its workers' replies); raises ``AdminError``.
Answerer: TypeAlias = Callable[[AdminRequest, float], Awaitable[Mapping[str, object]]]


def _table(room: Room, now: float) -> TableAnswer:
    return {
        "table": room.id,
        "game": room.game.name,
        "phase": str(room.phase.value),
        "players": room.players,
        "seats": [
            {
                "seat": i,
                "name": s.name,
                "bot": None if s.bot is None else s.bot.level,
                "taken": not s.empty,
                "connected": s.bot is not None or s.peer is not None,
            }
            for i, s in enumerate(room.seats)
        ],
        "watchers": len(room.watchers),
        "password": room.password is not None,
        "age_s": max(0, int(now - room.created)),
        "idle_s": max(0, int(now - room.last_active)),
    }


class AdminSocketBusy(Exception):
    """Another server (alive) holds the admin socket, or the path is not one to replace."""


def default_socket(data_dir: Path | None) -> Path:
    return (data_dir or default_data_dir()) / SOCKET_NAME


def claim(path: Path) -> socket.socket:
    """Bind and listen on ``path``, mode 0600. A socket file nobody answers on (its server died) is replaced; one a
    live server answers on, or a path that is no socket, is refused (``AdminSocketBusy``)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        pass
    else:
        if not stat.S_ISSOCK(mode):
            raise AdminSocketBusy(f"{path} exists and is not a socket: choose another with --admin-socket")
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(path))
        except ConnectionRefusedError:
            os.unlink(path)  # a server that died left it: nobody listens
        except OSError as exc:
            raise AdminSocketBusy(f"cannot check {path}: {exc.strerror or exc}") from exc
        else:
            raise AdminSocketBusy(f"another server is running with the admin socket {path}")
        finally:
            probe.close()
    path.parent.mkdir(parents=True, exist_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # born 0600: never a moment open to others
    try:
        sock.bind(str(path))
    except OSError:
        sock.close()
        raise
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(16)
    return sock


def peer_uid(sock: socket.socket | trio.socket.SocketType) -> int:
    """The Unix user of the process at the other end of a Unix socket (``SO_PEERCRED``: pid, uid, gid)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return int(uid)


def allowed(uid: int) -> bool:
    """Only the account that runs the server may use its admin socket."""
    return uid == os.geteuid()


class AdminListener:
    """The admin socket of one server: claimed at start-up, served on the server's loop, removed at the end."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._sock = claim(path)
        self._inode = os.stat(path).st_ino
        #: Connections being served now (at most ``MAX_CONNECTIONS``), and those turned away since the last said.
        self.open = 0
        self._turned_away = 0
        self._lingering = 0  # turned-away connections read to their end, so that their answer arrives

    async def serve(self, server: Server) -> None:
        """Answer for one server, on its loop."""

        async def at_once(request: AdminRequest, now: float) -> Answer:
            return answer(server, request, now)

        await self.serve_answers(at_once)

    async def serve_answers(self, answerer: Answerer) -> None:
        """Answer every request with ``answerer`` (one server's ``answer``, or a supervisor's ``WholeServer``)."""
        import trio  # here, not above: the command (``run``) starts in a blink without the event loop's library

        listener = trio.SocketListener(trio.socket.from_stdlib_socket(self._sock))
        async with listener, trio.open_nursery() as nursery:
            while True:
                stream = await listener.accept()
                if self.open >= MAX_CONNECTIONS:
                    nursery.start_soon(self._turn_away, stream)
                    continue
                self.open += 1
                nursery.start_soon(self._connection, answerer, stream)

    async def _turn_away(self, stream: trio.SocketStream) -> None:
        """One connection too many: told so and closed at once, one log line for a burst of them."""
        self._turned_away += 1
        if self._turned_away == 1:
            log.warning("admin_refused reason=full open=%d", self.open)
        reply = AdminError(
            BUSY, f"{MAX_CONNECTIONS} admin connections are open already: try again once one has ended", error=True
        ).reply()
        async with stream:
            if self._lingering >= MAX_CONNECTIONS:  # a flood: no descriptor held for it, the answer may be lost
                await self._send(stream, reply)
                return
            self._lingering += 1
            try:
                await self._refuse(stream, reply)
            finally:
                self._lingering -= 1

    async def _connection(self, answerer: Answerer, stream: trio.SocketStream) -> None:
        try:
            await self._serve_one(answerer, stream)
        finally:
            self.open -= 1
            if self._turned_away and self.open == 0:
                log.info("admin_turned_away count=%d", self._turned_away)
                self._turned_away = 0

    async def _serve_one(self, answerer: Answerer, stream: trio.SocketStream) -> None:
        import trio

        async with stream:
            try:
                uid = peer_uid(stream.socket)
            except OSError:
                uid = -1
            if not allowed(uid):
                log.warning("admin_refused uid=%d", uid)
                await self._refuse(
                    stream,
                    AdminError(
                        NOT_ALLOWED, "only the account that runs the server may use its admin socket", error=True
                    ).reply(),
                )
                return
            decoder = FrameDecoder()
            with trio.move_on_after(IDLE_LIMIT):
                while True:
                    try:
                        data = await stream.receive_some(65536)
                    except trio.BrokenResourceError:
                        return
                    if not data:
                        return
                    try:
                        frames = decoder.feed(data)
                    except ProtocolError as exc:
                        await self._send(stream, {"kind": p.ERROR, "code": exc.code, "message": str(exc)})
                        return
                    for frame in frames:
                        reply: Mapping[str, object]
                        try:
                            reply = await answerer(request_from_frame(frame), trio.current_time())
                        except AdminError as refusal:
                            reply = refusal.reply()
                        log.info("admin request=%s reply=%s", shown(frame.get("kind")), reply["kind"])
                        await self._send(stream, reply)

    @classmethod
    async def _refuse(cls, stream: trio.SocketStream, reply: Outgoing) -> None:
        """``reply`` to a connection that is served no further. Its request unread, a close would reset the
        connection and could destroy the answer (or break the caller's own write): the answer's end said, what it
        sends is read and dropped until it goes (``LINGER`` at most)."""
        import trio

        await cls._send(stream, reply)
        with trio.move_on_after(LINGER):
            try:
                await stream.send_eof()
                while await stream.receive_some(65536):
                    pass
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass

    @staticmethod
    async def _send(stream: trio.SocketStream, message: Outgoing) -> None:
        import trio

        try:
            await stream.send_all(encode(message))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    def remove(self) -> None:
        """Remove the socket file, if it is still this server's."""
        try:
            if os.stat(self.path).st_ino == self._inode:
                os.unlink(self.path)
        except OSError:
            pass


class AdminUnavailable(Exception):
    """The server does not start: a live server holds its admin socket, or the one asked for (``--admin-socket``)
    cannot be opened."""


def started_line(path: Path, data_dir: Path) -> str:
    """The start-up line that names the socket: by the README's way for a server's own (``--data DIR``), by
    ``--socket`` for one placed elsewhere."""
    reach = f"--data {path.parent}" if path == default_socket(data_dir) else f"--socket {path}"
    return f"Admin socket: {path} (quatro-server admin {reach} tables)"


def listen(path: Path, *, asked: bool) -> AdminListener | None:
    """The admin socket at ``path``. The default one that cannot be opened (a data directory too deep for a socket's
    path, say) is said on stderr and the server serves without it (None); one ``asked`` for, or one a live server
    holds, raises ``AdminUnavailable``."""
    try:
        return AdminListener(path)
    except AdminSocketBusy as exc:
        raise AdminUnavailable(f"the admin socket: {exc}") from exc
    except OSError as exc:
        why = f"cannot open the admin socket {path}: {exc.strerror or exc}"
        if asked:
            raise AdminUnavailable(why) from exc
        print(f"quatro-server: {why}; serving without it (choose one with --admin-socket)", file=sys.stderr)
        return None


# --- a server of workers: one admin socket for the whole --------------------------------------------------

#: Seconds the supervisor waits for a worker's admin reply (a worker answers on its loop in milliseconds; one that
#: does not within this is restarting or stuck, and said so): well inside the command's own REPLY_TIMEOUT.
WORKER_REPLY_TIMEOUT = 3.0


class Fleet(Protocol):
    """What the whole server's admin socket asks of a supervisor (``quatro_server.workers.supervisor.Supervisor``)."""

    draining: bool

    def worker_sockets(self) -> list[tuple[int, Path]]:
        """Each worker's number and admin socket."""
        ...

    def drain(self, timeout: float | None) -> None:
        """From now on a worker that stops when its matches are over stays stopped (one that crashes is started
        again and drained again), and once every worker has stopped the supervisor stops."""
        ...


async def ask_worker(path: Path, request: AdminRequest, timeout: float = WORKER_REPLY_TIMEOUT) -> Message:
    """``ask`` from the supervisor's loop, which it never holds. Raises ``OSError``, ``ProtocolError`` or
    ``trio.TooSlowError``."""
    import trio

    with trio.fail_after(timeout):
        stream = await trio.open_unix_socket(str(path))
        async with stream:
            await stream.send_all(encode(request_to_frame(request)))
            decoder = FrameDecoder()
            while True:
                data = await stream.receive_some(65536)
                if not data:
                    raise ConnectionResetError(
                        errno.ECONNRESET, "the worker closed the admin connection without a reply"
                    )
                frames = decoder.feed(data)
                if frames:
                    return frames[0]


async def reply_or_why(path: Path, request: AdminRequest) -> Message | str:
    """A worker's reply (``ask_worker``), or why it gave none, in words."""
    import trio

    try:
        return await ask_worker(path, request)
    except trio.TooSlowError:
        return f"no answer within {WORKER_REPLY_TIMEOUT:g} s"
    except (OSError, ProtocolError) as exc:
        return getattr(exc, "strerror", None) or str(exc)


class Silent(TypedDict):
    """A worker that gave no reply (restarting, as a rule), and why, in words."""

    worker: int
    why: str


class WholeServer:
    """The supervisor's admin socket: every request answered for the whole server, each worker asked on its own
    socket (``DATA/worker-K/admin.sock``). ``tables`` merges theirs (each table marked with its worker), ``close``
    and ``remove`` reach the worker that holds the table (ids are unique across the workers), ``notice`` goes to
    every worker, ``drain`` drains every worker and then stops the supervisor. A worker that does not answer (it is
    restarting) is named in the reply, never waited on for longer than WORKER_REPLY_TIMEOUT."""

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet

    async def _ask_all(self, request: AdminRequest) -> dict[int, Message | str]:
        """Each worker's reply, or why it gave none."""
        import trio

        answers: dict[int, Message | str] = {}

        async def one(index: int, path: Path) -> None:
            answers[index] = await reply_or_why(path, request)

        async with trio.open_nursery() as nursery:
            for index, path in self.fleet.worker_sockets():
                nursery.start_soon(one, index, path)
        return dict(sorted(answers.items()))

    @staticmethod
    def _silent(answers: dict[int, Message | str]) -> list[Silent]:
        return [{"worker": k, "why": a} for k, a in answers.items() if isinstance(a, str)]

    async def _drain(self, request: Drain) -> dict[str, object]:
        if self.fleet.draining:
            raise AdminError(ALREADY_DRAINING, "the server is draining already")
        self.fleet.drain(request.timeout)  # first: a worker that stops at once is not started again
        answers = await self._ask_all(request)
        replies = [a for a in answers.values() if isinstance(a, dict) and a.get("kind") == p.OK]
        return {
            "kind": p.OK,
            "running": sum(count(a, "running") for a in replies),
            "timeout": request.timeout,
            "silent": self._silent(answers),
        }

    async def __call__(self, request: AdminRequest, now: float) -> dict[str, object]:
        if isinstance(request, Drain):
            return await self._drain(request)
        answers = await self._ask_all(request)
        silent = self._silent(answers)
        replies = {k: a for k, a in answers.items() if isinstance(a, dict)}
        if isinstance(request, Tables):
            tables = [
                {**t, "worker": k} for k, a in replies.items() if a.get("kind") == p.OK for t in maps(a.get("tables"))
            ]
            return {
                "kind": p.OK,
                "tables": sorted(tables, key=lambda t: count(t, "table")),
                "draining": self.fleet.draining or any(a.get("draining") for a in replies.values()),
                "connections": sum(count(a, "connections") for a in replies.values()),
                "workers": len(answers),
                "silent": silent,
            }
        if isinstance(request, Notice):
            return {"kind": p.OK, "told": sum(count(a, "told") for a in replies.values()), "silent": silent}
        # close, remove: the one worker that holds the table answers for it
        for k, a in replies.items():
            if not (a.get("kind") == p.REFUSED and a.get("reason") == NO_SUCH_TABLE):
                if a.get("kind") == p.REFUSED:
                    raise AdminError(str(a.get("reason")), str(a.get("message")))
                if a.get("kind") != p.OK:
                    raise AdminError(str(a.get("code")), str(a.get("message")), error=True)
                return {**a, "worker": k}
        unheard = "".join(f"; worker {w['worker']} did not answer ({w['why']}): it may hold it" for w in silent)
        raise AdminError(NO_SUCH_TABLE, f"no table {request.table}{unheard}")


# --- the command's side ----------------------------------------------------------------------------------


def _seat_number(text: str) -> int:
    """A seat as people number it (1 to N), for ``remove``."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError("a seat is numbered from 1, as the tables command shows it")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--socket", type=Path, metavar="PATH", help="the server's admin socket")
    where.add_argument(
        "--data",
        "--data-dir",
        dest="data",
        type=Path,
        metavar="DIR",
        help=f"the server's data directory (its socket is DIR/{SOCKET_NAME}; default {default_data_dir()})",
    )
    parser.add_argument("--json", action="store_true", help="print the server's reply as JSON, for scripts")
    commands = parser.add_subparsers(dest="admin_command", metavar="COMMAND", required=True)
    commands.add_parser(TABLES, help="list every table: game, phase, seats, watchers, age")
    close = commands.add_parser(CLOSE, help="close a table: its players and watchers land in the lobby, told why")
    close.add_argument("table", type=int)
    close.add_argument("--reason", help="what the players are told")
    remove = commands.add_parser(REMOVE, help="remove a seat's player: sent to the lobby, the seat's secret void")
    remove.add_argument("table", type=int)
    remove.add_argument("seat", type=_seat_number, help="the seat as people see it: 1 to the table's size")
    remove.add_argument("--reason", help="what the player is told")
    notice = commands.add_parser(NOTICE, help="show a notice to every connected player, on every screen")
    notice.add_argument("text")
    drain = commands.add_parser(DRAIN, help="take no new tables, let running matches finish, then stop")
    drain.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="stop after SECONDS even if matches still run (they are told; with a journal they come "
        "back after the restart)",
    )
    drain.add_argument("--wait", action="store_true", help="return only once the server has stopped")


def _request(args: argparse.Namespace) -> AdminRequest:
    command = args.admin_command
    if command == TABLES:
        return Tables()
    if command == CLOSE:
        return Close(args.table, args.reason)
    if command == REMOVE:
        return Remove(args.table, args.seat - 1, args.reason)  # the wire counts seats from 0
    if command == NOTICE:
        return Notice(args.text)
    return Drain(args.timeout)


def ask(path: Path, request: AdminRequest, timeout: float = REPLY_TIMEOUT) -> Message:
    """Send one request to the admin socket at ``path`` and return the server's reply (a map). Raises ``OSError``
    when no server answers there, ``ProtocolError`` when the answer is not a frame."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(path))
        sock.sendall(encode(request_to_frame(request)))
        decoder = FrameDecoder()
        while True:
            data = sock.recv(65536)
            if not data:
                raise ConnectionResetError(errno.ECONNRESET, "the server closed the admin connection without a reply")
            frames = decoder.feed(data)
            if frames:
                return frames[0]


def main(argv: list[str] | None = None) -> int:
    """``quatro-server admin ARGS`` on its own (``python -m quatro_server admin``: without loading the server)."""
    parser = argparse.ArgumentParser(prog="quatro-server admin", description="Ask the server running on this machine.")
    add_arguments(parser)
    return run(parser.parse_args(sys.argv[2:] if argv is None else argv))


def run(args: argparse.Namespace) -> int:
    """``quatro-server admin``: 0 done, 1 refused by the server, 2 no server to ask (or a bad request)."""
    path: Path = args.socket or default_socket(args.data)
    request = _request(args)
    try:
        reply = ask(path, request)
    except FileNotFoundError:
        print(
            f"quatro-server admin: no admin socket at {path}: is the server running (with a data directory, or "
            "--admin-socket)?",
            file=sys.stderr,
        )
        return 2
    except (OSError, ProtocolError) as exc:
        print(
            f"quatro-server admin: cannot ask the server at {path}: {getattr(exc, 'strerror', None) or exc}",
            file=sys.stderr,
        )
        return 2
    if reply.get("kind") == p.OK and isinstance(request, Drain) and args.wait:
        _wait_until_stopped(path)
        reply = {**reply, "stopped": True}
    if args.json:
        print(json.dumps(reply, sort_keys=True))
    else:
        print(describe(request, reply))
    if reply.get("kind") == p.OK:
        return 0
    return 1 if reply.get("kind") == p.REFUSED else 2


def _wait_until_stopped(path: Path) -> None:
    """Until nobody listens on ``path`` any more (the server removes it as it stops, or it refuses)."""
    while True:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.connect(str(path))
        except OSError:
            return
        time.sleep(WAIT_POLL)


def _age(seconds: int) -> str:
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def describe(request: AdminRequest, reply: Mapping[str, object]) -> str:
    """The reply in words for a person."""
    kind = reply.get("kind")
    if kind == p.REFUSED:
        return f"refused: {reply.get('message', reply.get('reason'))}"
    if kind == p.ERROR:
        return f"error: {reply.get('message', reply.get('code'))}"
    if isinstance(request, Tables):
        tables = maps(reply.get("tables"))
        head = f"{counted(len(tables), 'table')}, {counted(count(reply, 'connections'), 'connection')}"
        if "workers" in reply:  # a server of workers, asked as a whole
            head += f", {counted(count(reply, 'workers'), 'worker')}"
        lines = [head + (" (draining: no new tables)" if reply.get("draining") else ""), *_silent_lines(reply)]
        for t in tables:
            lines.append(
                f"table {t['table']}  {t['game']}  {t['phase']}  age {_age(count(t, 'age_s'))}  "
                f"watchers {t['watchers']}"
                + ("  password" if t["password"] else "")
                + (f"  worker {t['worker']}" if "worker" in t else "")
            )
            for s in maps(t.get("seats")):
                if not s["taken"]:
                    who = "free"
                elif s["bot"] is not None:
                    who = f"{s['name']} (bot, {s['bot']})"
                else:
                    who = f"{s['name']} ({'connected' if s['connected'] else 'not connected'})"
                lines.append(f"  seat {count(s, 'seat') + 1}: {who}")  # seats as people see them, 1 to N
        return "\n".join(lines)
    if isinstance(request, Close):
        return (
            f"table {reply['table']} closed; {counted(count(reply, 'told'), 'connection')} told and sent to the lobby"
        )
    if isinstance(request, Remove):
        told = "its player was told and sent to the lobby" if reply["told"] else "its player was not connected"
        seat = "the seat is free again" if reply["freed"] else "the seat stays in the match, disconnected"
        return f"seat {count(reply, 'seat') + 1} of table {reply['table']}: {told}; {seat}; its secret no longer works"
    if isinstance(request, Notice):
        return "\n".join([f"notice shown to {counted(count(reply, 'told'), 'connection')}", *_silent_lines(reply)])
    running = count(reply, "running")
    limit = reply.get("timeout")
    until = f"or in {limit:g} s at the latest" if isinstance(limit, (int, float)) else "whenever that is"
    out = "\n".join(
        [
            f"draining: no new tables; {counted(running, 'match', 'matches')} running; the server stops when "
            f"they end, {until}",
            *_silent_lines(reply),
        ]
    )
    if reply.get("stopped"):
        out += "\nthe server has stopped"
    return out


def _silent_lines(reply: Mapping[str, object]) -> list[str]:
    """The workers of a whole server that gave no answer (restarting, as a rule), and why."""
    return [f"worker {w['worker']} did not answer ({w['why']}): its part is missing" for w in maps(reply.get("silent"))]
