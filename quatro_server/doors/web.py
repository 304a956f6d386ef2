"""The browser door (``quatro-server --web PORT``): anyone with a web browser reaches the lobby, nothing installed.

Each visitor's page gets its own client: the ``quatro join`` program, the same Textual app as everywhere,
started as a child process of the server and connected to this server's tables over loopback TCP, exactly as
an SSH door session's (doors.py holds what the two doors share). textual-serve carries the app to the page:
its browser side (xterm.js) draws the app and sends keys, mouse and window sizes over a websocket; its
``AppService`` speaks Textual's web driver protocol with the client process. This module decides what runs
and for whom:

- The command is fixed: ``quatro join`` to this server. Nothing a visitor sends picks what runs; the page's
  size (clamped) and the visitor's identity are the only things taken from the request.
- Who is who: a random token in an HttpOnly cookie (``quatro_visitor``), made on the first visit and kept for
  30 days, and signed by the door (an HMAC under a secret kept in the data directory): a token the door did not
  issue is replaced by one it does, so only issued tokens ever get a directory, and at most
  ``MAX_VISITOR_DIRS`` directories are kept (the least recently seen go first). The client is told only a hash of it (``--person web:...``), so the token itself never appears in
  a process list or a file. Each visitor has a settings directory of their own under the data directory
  (``web-clients/``): the name they gave on the first screen, and the seats they took, so that a reload (or
  coming back later) returns them to their seat (R19). One visitor, one page: a second page of the same
  browser takes the visit over and the first is told so.
- Bounded: at most ``max_visitors`` pages at once, at most ``max_per_address`` from one address (the next is
  shown a page that says so); a client left without a key press outside a match for ``idle_timeout``
  seconds closes itself and its page says so; websocket messages are small and a dead page is noticed by
  heartbeats. A visitor's client crashing, hanging or being killed ends that visit and nothing else. Connections
  are capped (``WEB_MAX_CONNECTIONS``, and per address) and get ``WEB_HEADER_TIMEOUT`` seconds for a request's
  headers; none is taken while the game port's reserve of descriptors would be touched (``doors.Gate``). A
  request that is not HTTP, or a message too deep to read, is one quiet log line (counted), never a traceback.
- Only this server's own files are served: the page, its script and style, and textual-serve's browser code
  and fonts. The page loads nothing from elsewhere.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import html
import logging
import os
import re
import secrets
import signal
import sys
import time
from collections.abc import Iterable
from importlib.metadata import version
from pathlib import Path
from typing import cast
from urllib.parse import urlsplit

import textual_serve
from aiohttp import WSMsgType, web
from aiohttp.http_exceptions import HttpProcessingError
from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

from quatro_shared import exits

from quatro_server.doors.gate import (
    DOOR_BACKLOG,
    MAX_COLUMNS,
    MAX_ROWS,
    STOP_GRACE,
    WEB_HEADER_TIMEOUT,
    WEB_MAX_CONNECTIONS,
    WEB_MAX_CONNECTIONS_PER_ADDRESS,
    Gate,
    bounded_boot,
    client_command,
    client_environment,
    door_quiet_log,
)
from quatro_server.doors.gate import (
    WEB_IDLE_TIMEOUT as IDLE_TIMEOUT,
)
from quatro_server.doors.gate import (
    WEB_MAX_PER_ADDRESS as MAX_PER_ADDRESS,
)
from quatro_server.doors.gate import (
    WEB_MAX_VISITORS as MAX_VISITORS,
)
from quatro_server.records.identity import door_environment
from quatro_server.server import QuietLog

log = logging.getLogger("quatro.web")

#: The cookie that tells visitors apart, and how long a browser keeps it (seconds).
COOKIE = "quatro_visitor"
COOKIE_AGE = 30 * 24 * 3600
#: Where the visitors' clients keep their names and remembered seats, one directory each, in the data directory.
CLIENTS_DIR = "web-clients"
#: A visitor's directory untouched this long (days) is forgotten when the door opens.
FORGET_AFTER_DAYS = 30
#: The most visitors' directories kept: a new visitor past it makes the least recently seen one forgotten.
MAX_VISITOR_DIRS = 2000
#: The secret the door signs its cookies' tokens with, in the data directory (made once, readable by its owner).
SECRET_FILE = "web_cookie_secret"
#: The page's font size in pixels (``?fontsize=N`` picks another, within FONT_SIZES).
FONT_SIZE = 16
FONT_SIZES = (10, 32)
#: The client's size in cells, as the page asks for it, is clamped to these.
COLUMNS = (20, MAX_COLUMNS)
ROWS = (8, MAX_ROWS)
#: The websocket close code the door ends a page's game with; the close's reason is one of WHY_CLOSED, and the page
#: says it (a page closed any other way lost its link to the server).
CLOSE_CODE = 4000
#: Why a page's game closed: its visitor quit; its client closed itself, idle; another page of the same visitor
#: took the game over; the server stopped; the client stopped unexpectedly (a crash, a kill, a failure it printed).
QUIT, IDLE, REPLACED, STOPPED, ENDED = "quit", "idle", "replaced", "stopped", "ended"
WHY_CLOSED = (QUIT, IDLE, REPLACED, STOPPED, ENDED)
#: The largest message a page may send (keys, mouse, sizes are tiny); seconds between heartbeats.
MAX_MESSAGE = 64 * 1024
HEARTBEAT = 15.0

#: Runs ``quatro``, but first asks the kernel to hang it up when the door's thread (its parent) is gone: a
#: server killed outright leaves no client behind (Linux; elsewhere the client ends at its idle limit).
_CLIENT_BOOT = bounded_boot("""
import ctypes, os, runpy, signal, sys
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGHUP)  # PR_SET_PDEATHSIG
except (OSError, AttributeError):
    pass
if str(os.getppid()) != os.environ.pop("QUATRO_DOOR_PID", str(os.getppid())):
    sys.exit(0)  # the door went before the line above took effect
runpy.run_module("quatro_tui", run_name="__main__")
""")

#: A token: 16 random bytes and their HMAC-SHA256 under the door's secret (cut to 16 bytes), each in URL-safe base64.
_TOKEN = re.compile(r"([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{22})")
_HERE = Path(__file__).parent / "page"
_TEXTUAL_SERVE = Path(textual_serve.__file__).parent / "static"


def person_of(token: str) -> str:
    """Who a visitor is, for the client and its directory: a hash of the cookie's token, never the token."""
    return "web-" + hashlib.sha256(token.encode()).hexdigest()[:32]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def cookie_secret(data_dir: Path) -> bytes:
    """The door's signing secret: read from the data directory, or made there once (readable by its owner only),
    so that a visitor's cookie still holds after a restart."""
    path = data_dir / SECRET_FILE
    try:
        secret = path.read_bytes()
        if len(secret) >= 32:
            return secret
    except FileNotFoundError:
        pass
    data_dir.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_bytes(32)
    temporary = path.with_suffix(".new")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(secret)
    os.replace(temporary, path)
    return secret


def issue_token(secret: bytes) -> str:
    """A new visitor's token, signed."""
    nonce = _b64(secrets.token_bytes(16))
    return f"{nonce}.{_b64(hmac.digest(secret, nonce.encode(), 'sha256')[:16])}"


def issued(token: str, secret: bytes) -> bool:
    """A token this door issued (whatever else looks like one is a stranger's)."""
    found = _TOKEN.fullmatch(token)
    if found is None:
        return False
    expected = _b64(hmac.digest(secret, found.group(1).encode(), "sha256")[:16])
    return hmac.compare_digest(expected, found.group(2))


def _clamp(text: str | None, bounds: tuple[int, int], default: int) -> int:
    try:
        value = int(text) if text is not None else default
    except ValueError:
        value = default
    return max(bounds[0], min(bounds[1], value))


class Visit(AppService):
    """One page: its client process, and the bytes between it and the page (textual-serve's protocol)."""

    def __init__(self, door: WebDoor, person: str, address: str, page: web.WebSocketResponse) -> None:
        super().__init__(
            "quatro join",
            write_bytes=page.send_bytes,
            write_str=page.send_str,
            close=self._close_page,
            download_manager=door.downloads,
        )
        self.door, self.person, self.address, self.page = door, person, address, page
        self.ended = asyncio.Event()
        #: Why the door ends this visit (REPLACED, STOPPED), before its client has gone; None: the client went
        #: by itself, or the page did.
        self.ending: str | None = None
        #: The client said it is leaving (its "exit" message): a quit, or its idle limit.
        self.leaving = False

    async def _close_page(self) -> None:
        # The client's "exit": the page is closed once the client has exited, its status telling why.
        self.leaving = True

    async def close_page(self, why: str) -> None:
        """Close the page, telling it why its game closed (the page shows it)."""
        if not self.page.closed:
            log.info("web_page_closed person=%s why=%s", self.person, why)
            await self.page.close(code=CLOSE_CODE, message=why.encode())

    async def why_closed(self) -> str:
        """Why the game closed, once the client's output has ended: the door's reason, or the client's exit."""
        if self.ending is not None:
            return self.ending
        status = None
        if self._process is not None:
            try:
                status = await asyncio.wait_for(self._process.wait(), STOP_GRACE)
            except TimeoutError:
                pass
        if status == exits.IDLE:
            return IDLE
        return QUIT if self.leaving and status == 0 else ENDED

    async def _open_app_process(self, width: int = 80, height: int = 24) -> asyncio.subprocess.Process:
        """The fixed command, each argument apart (no shell), its own session (killed as a group), its own
        environment: the web driver's variables, a UTF-8 locale and the visitor's settings directory."""
        env = client_environment(
            self.door.make_home(self.person),
            {
                "TEXTUAL_DRIVER": "textual.drivers.web_driver:WebDriver",
                "TEXTUAL_FPS": "60",
                "TEXTUAL_COLOR_SYSTEM": "truecolor",
                "COLORTERM": "truecolor",
                "TERM_PROGRAM": "textual",
                "TERM_PROGRAM_VERSION": version("textual-serve"),
                "COLUMNS": str(width),
                "ROWS": str(height),
                "QUATRO_DOOR_PID": str(os.getpid()),
            },
            door_token=self.door.door_token,
        )
        env.update(door_environment(self.door.data_dir, self.person))  # the visitor's person, for their records
        self._process = process = await asyncio.create_subprocess_exec(
            *self.door.client_command(self.person),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    async def run(self) -> None:
        """The client's output to the page until it exits; then the page is closed, told why."""
        try:
            await super().run()
        finally:
            if not self.page.closed:
                await self.close_page(await self.why_closed())

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    async def stop(self) -> None:
        """Ask the client to quit; kill it if it has not within ``STOP_GRACE`` seconds."""
        try:
            await asyncio.wait_for(super().stop(), STOP_GRACE)
        except (TimeoutError, OSError, RuntimeError):
            pass
        process = self._process
        if process is not None and process.returncode is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            await process.wait()


class WebDoor:
    """The browser door's settings, its web server and its live visits (one per visitor)."""

    def __init__(
        self,
        game_address: str,
        data_dir: Path,
        *,
        max_visitors: int = MAX_VISITORS,
        max_per_address: int = MAX_PER_ADDRESS,
        idle_timeout: float = IDLE_TIMEOUT,
        max_connections: int = WEB_MAX_CONNECTIONS,
        max_connections_per_address: int = WEB_MAX_CONNECTIONS_PER_ADDRESS,
        header_timeout: float = WEB_HEADER_TIMEOUT,
        max_visitor_dirs: int = MAX_VISITOR_DIRS,
        python: str = sys.executable,
        door_token: str = "",
    ) -> None:
        #: Where the visitors' clients join: this server's port, on loopback.
        self.game_address = game_address
        self.data_dir = data_dir
        self.max_visitors = max_visitors
        self.max_per_address = max_per_address
        self.idle_timeout = idle_timeout
        self.header_timeout = header_timeout
        self.max_visitor_dirs = max_visitor_dirs
        self.python = python
        #: What this door's clients present to the game port (``doors.DOOR_TOKEN_ENV``).
        self.door_token = door_token
        self.secret = cookie_secret(data_dir)
        self.visits: dict[str, Visit] = {}
        self.downloads = DownloadManager()
        self.runner: web.AppRunner | None = None
        self.quiet = door_quiet_log(log)
        self.gate = Gate(max_connections, max_connections_per_address, self.quiet, "web")
        self.server: asyncio.base_events.Server | None = None

    # --- what runs, for whom ----------------------------------------------------------------------

    def client_command(self, person: str) -> list[str]:
        return client_command(
            self.python,
            self.game_address,
            idle_timeout=self.idle_timeout,
            person=person,
            ask_name=True,
            boot=_CLIENT_BOOT,
        )

    def config_home(self, person: str) -> Path:
        return self.data_dir / CLIENTS_DIR / person

    def make_home(self, person: str) -> Path:
        """A visitor's directory, made if new; past ``max_visitor_dirs`` the least recently seen are forgotten
        first (a visitor's seats live as long as their tables, and those end within hours)."""
        home = self.config_home(person)
        if not home.exists():
            clients = self.data_dir / CLIENTS_DIR
            try:
                known = sorted(clients.iterdir(), key=_last_seen)
            except OSError:
                known = []
            live = {self.config_home(visit.person) for visit in self.visits.values()}
            for directory in known[: max(0, len(known) - self.max_visitor_dirs + 1)]:
                if directory not in live:
                    _remove(directory)
            home.mkdir(parents=True, exist_ok=True)
        return home

    def refusal(self, address: str) -> str | None:
        """Why a new page from ``address`` cannot have a client now (None: it can)."""
        if len(self.visits) >= self.max_visitors:
            return (
                f"Quatro is full: {self.max_visitors} people are playing in a browser, the most this server "
                "takes. Try again in a while."
            )
        if sum(visit.address == address for visit in self.visits.values()) >= self.max_per_address:
            return (
                f"Quatro is full for your machine: {self.max_per_address} pages from {address} are open "
                "already. Close one, or try again in a while."
            )
        return None

    # --- the web server ---------------------------------------------------------------------------

    def application(self) -> web.Application:
        app = web.Application(client_max_size=MAX_MESSAGE)
        app.add_routes(
            [
                web.get("/", self.handle_page),
                web.get("/ws", self.handle_websocket),
                web.get("/favicon.ico", self.handle_icon),
                web.static("/page", _HERE),
                web.static("/static", _TEXTUAL_SERVE),
            ]
        )
        return app

    async def listen(self, host: str | None, port: int) -> int:
        """Start serving pages; returns the port. Every connection passes the door's gate (``_Gated``); the
        keep-alive limit is the header deadline: a connection that has not sent a whole request's headers
        ``header_timeout`` seconds after it opened (or after its last answer) is closed."""
        self._forget_old_visitors()
        self.runner = web.AppRunner(
            self.application(),
            access_log=None,
            handle_signals=False,
            keepalive_timeout=self.header_timeout,
            logger=_HttpLog(self.quiet),
        )
        await self.runner.setup()
        handlers = self.runner.server
        assert handlers is not None
        self.server = await asyncio.get_running_loop().create_server(
            lambda: _Gated(self.gate, handlers), host or None, port, reuse_address=True, backlog=DOOR_BACKLOG
        )
        return int(self.server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        """Stop serving; every visitor's client is told to quit, and their pages that the server stopped."""
        if self.server is not None:
            self.server.close()
        await asyncio.gather(
            *(self._end(visit, STOPPED) for visit in list(self.visits.values())), return_exceptions=True
        )
        if self.runner is not None:
            await self.runner.cleanup()

    def _forget_old_visitors(self) -> None:
        """Directories of visitors not seen for FORGET_AFTER_DAYS: their seats' tables are long gone."""
        clients = self.data_dir / CLIENTS_DIR
        horizon = time.time() - FORGET_AFTER_DAYS * 86400
        try:
            for directory in clients.iterdir():
                if _last_seen(directory) < horizon:
                    _remove(directory)
        except OSError:
            pass  # a convenience: a directory that cannot be read or removed stays

    async def handle_page(self, request: web.Request) -> web.Response:
        """The page: the game's terminal, or a page saying that the door is full."""
        token = request.cookies.get(COOKIE, "")
        if not issued(token, self.secret):
            token = issue_token(self.secret)  # a stranger's token (or none): this visitor is new
        person = person_of(token)
        address = request.remote or "?"
        refusal = None if person in self.visits else self.refusal(address)
        if refusal is not None:
            log.info("web_full peer=%s visits=%d", address, len(self.visits))
            body = _template("full.html").replace("{message}", html.escape(refusal))
            response = web.Response(text=body, content_type="text/html", status=503, headers={"Retry-After": "60"})
        else:
            font = _clamp(request.query.get("fontsize"), FONT_SIZES, FONT_SIZE)
            body = (
                _template("index.html")
                .replace("{font_size}", str(font))
                .replace("{idle}", html.escape(_duration(self.idle_timeout)))
            )
            response = web.Response(text=body, content_type="text/html")
        response.headers["Cache-Control"] = "no-store"
        response.headers["Content-Security-Policy"] = (
            "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; style-src 'self' 'unsafe-inline'"
        )
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.set_cookie(COOKIE, token, max_age=COOKIE_AGE, httponly=True, samesite="Strict", path="/")
        return response

    async def handle_icon(self, request: web.Request) -> web.FileResponse:
        """The page's icon, at the address browsers ask for by default too."""
        return web.FileResponse(_HERE / "favicon.svg", headers={"Content-Type": "image/svg+xml"})

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """A page's websocket: its visitor's client, from start to end."""
        page = web.WebSocketResponse(heartbeat=HEARTBEAT, max_msg_size=MAX_MESSAGE)
        address = request.remote or "?"
        if not _same_origin(request):
            self.quiet(
                "web_foreign_origin",
                logging.WARNING,
                "web_foreign_origin peer=%s origin=%r",
                address,
                request.headers.get("Origin", "")[:100],
            )
            raise web.HTTPForbidden(text="This websocket is for the page of this server only.")
        await page.prepare(request)
        token = request.cookies.get(COOKIE, "")
        if not issued(token, self.secret):
            await _say_and_close(page, "This page needs its cookie to tell players apart: reload it, with cookies on.")
            return page
        person = person_of(token)
        earlier = self.visits.get(person)
        if earlier is not None:
            await self._end(earlier, REPLACED)  # one visitor, one page: the newest takes the seat over
        refusal = self.refusal(address)
        if refusal is not None:
            log.info("web_full peer=%s visits=%d", address, len(self.visits))
            await _say_and_close(page, refusal)
            return page
        width = _clamp(request.query.get("width"), COLUMNS, 80)
        height = _clamp(request.query.get("height"), ROWS, 24)
        visit = Visit(self, person, address, page)
        self.visits[person] = visit
        try:
            await visit.start(width, height)
            log.info(
                "web_visit_started peer=%s person=%s pid=%s size=%dx%d visits=%d",
                address,
                person,
                visit.pid,
                width,
                height,
                len(self.visits),
            )
            await self._relay(page, visit)
        except OSError as exc:  # a shortage (descriptors, memory) fails many visits at once: one line a while
            self.quiet(
                "web_visit_failed", logging.WARNING, "web_visit_failed peer=%s person=%s error=%s", address, person, exc
            )
        except Exception:  # noqa: BLE001 - this visit only: the door and every other visit carry on
            self.quiet(
                "web_visit_failed", logging.ERROR, "web_visit_failed peer=%s person=%s", address, person, exc_info=True
            )
        finally:
            await visit.stop()
            if self.visits.get(person) is visit:
                del self.visits[person]
            if not page.closed:
                await visit.close_page(visit.ending or ENDED)
            visit.ended.set()
            log.info("web_visit_ended peer=%s person=%s visits=%d", address, person, len(self.visits))
        return page

    async def _relay(self, page: web.WebSocketResponse, visit: Visit) -> None:
        """What the page sends: keys and mouse (``stdin``), its size, focus, pings. Anything else, or anything
        malformed, is ignored."""
        async for message in page:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                kind, *rest = message.json()
                data = rest[0] if rest else None
            except (ValueError, TypeError, RecursionError):
                continue  # not JSON, not a list, or nested too deep to read (the decoder's own limit): ignored
            if kind == "stdin" and isinstance(data, str):
                await visit.send_bytes(data.encode("utf-8", "replace"))
            elif kind == "resize" and isinstance(data, dict):
                await visit.set_terminal_size(
                    _clamp(str(data.get("width")), COLUMNS, 80), _clamp(str(data.get("height")), ROWS, 24)
                )
            elif kind == "ping" and isinstance(data, str) and len(data) < 32:
                await page.send_json(["pong", data])
            elif kind == "blur":
                await visit.blur()
            elif kind == "focus":
                await visit.focus()

    async def _end(self, visit: Visit, why: str) -> None:
        """Close a visit's page, saying ``why``; its handler stops the client. Returns once it has."""
        visit.ending = why
        if not visit.page.closed:
            await visit.close_page(why)
        try:
            await asyncio.wait_for(visit.ended.wait(), STOP_GRACE + 2)
        except TimeoutError:
            await visit.stop()


class _Gated(asyncio.Protocol):
    """One browser connection, past the door's gate: aiohttp's handler serves it, or it is closed at once."""

    def __init__(self, gate: Gate, handlers: web.Server) -> None:
        self.gate, self.handlers = gate, handlers
        self.handler: asyncio.Protocol | None = None
        self.address = "?"

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if peer else "?"
        if self.gate.admit(address) is not None:
            cast(asyncio.Transport, transport).abort()
            return
        self.address = address
        self.handler = self.handlers()
        self.handler.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.handler is not None:
            self.handler.data_received(data)

    def eof_received(self) -> bool | None:
        return self.handler.eof_received() if self.handler is not None else None

    def pause_writing(self) -> None:
        if self.handler is not None:
            self.handler.pause_writing()

    def resume_writing(self) -> None:
        if self.handler is not None:
            self.handler.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        handler = self.handler
        if handler is not None:
            self.handler = None
            self.gate.release(self.address)
            handler.connection_lost(exc)


class _HttpLog:
    """aiohttp's server log, as the door wants it: a request that is not HTTP (or not one the door reads) is
    one line at most every few seconds, with a count, never a traceback; a handler's own failure keeps its
    traceback, also at most one every few seconds."""

    def __init__(self, quiet: QuietLog) -> None:
        self.quiet = quiet

    def exception(self, message: str, *args: object, exc_info: BaseException | bool | None = True, **_: object) -> None:
        if isinstance(exc_info, HttpProcessingError):
            self.quiet("web_bad_request", logging.INFO, "web_bad_request error=%s", type(exc_info).__name__)
        elif isinstance(exc_info, (ConnectionError, TimeoutError)):
            self.quiet("web_connection_lost", logging.INFO, "web_connection_lost error=%s", type(exc_info).__name__)
        else:
            self.quiet(
                "web_handler_failed",
                logging.ERROR,
                "web_handler_failed %s",
                message % args if args else message,
                exc_info=bool(exc_info),
            )

    def debug(self, message: str, *args: object, **_: object) -> None:
        pass  # aiohttp's "not HTTP at all" requests, and its own chatter

    def warning(self, message: str, *args: object, **_: object) -> None:
        self.quiet("web_server_warning", logging.WARNING, "web_server_warning %s", str(message)[:200])

    error = warning
    info = debug


def _last_seen(directory: Path) -> float:
    """When a visitor was last seen: their client's settings written, else their directory made."""
    config = directory / "quatro" / "client.toml"
    try:
        return config.stat().st_mtime if config.exists() else directory.stat().st_mtime
    except OSError:
        return 0.0


def _remove(directory: Path) -> None:
    try:
        for path in sorted(directory.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        directory.rmdir()
    except OSError:
        pass  # a directory that cannot be removed stays


def _duration(seconds: float) -> str:
    """``600`` as "10 minutes", ``4`` as "4 seconds", for the page."""
    if seconds >= 60:
        minutes = seconds / 60
        return f"{minutes:g} minute" + ("" if minutes == 1 else "s")
    return f"{seconds:g} second" + ("" if seconds == 1 else "s")


def _template(name: str) -> str:
    return (_HERE / name).read_text(encoding="utf-8")


def _same_origin(request: web.Request) -> bool:
    """A websocket opened by this server's own page (browsers send Origin; a page of another site would be
    refused here even though SameSite keeps its requests from carrying the cookie)."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True  # not a browser: it has no cookie of another site to abuse
    return urlsplit(origin).netloc.lower() == request.host.lower()


async def _say(page: web.WebSocketResponse, text: str) -> None:
    """A line on the page's terminal (red on its own line), as the client would draw it."""
    try:
        await page.send_bytes(f"\x1b[2J\x1b[H\x1b[1;31m{text}\x1b[0m\r\n".encode())
    except (ConnectionError, RuntimeError):
        pass


async def _say_and_close(page: web.WebSocketResponse, text: str) -> None:
    await _say(page, text)
    await page.close()


def web_urls(port: int, addresses: Iterable[str]) -> list[str]:
    """The page's address, one per join address (``HOST:PORT`` as the join lines have them)."""
    out = []
    for address in addresses:
        host = address.rsplit(":", 1)[0]
        out.append(f"http://{host}:{port}/")
    return out
