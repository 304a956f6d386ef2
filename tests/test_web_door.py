"""The browser door in a real browser: Debian's Chromium driven by Playwright, every request off this machine
blocked. A visitor is asked their name, plays a table with bots by keys and by the mouse, reloads and is back in
their seat; two visitors share a table, and one's client dying or page closing leaves the other playing; the visitor cap turns
the next page away with a page that says so; an idle page is closed. Beside them, the door's rules without a
browser: the cookie, the fixed command, foreign pages refused.

Without chromium the browser tests are skipped on a developer's machine but fail in CI (.ci/run installs it).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import math
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from aiohttp import WSMessage, WSMsgType

from quatro_shared.protocol import PERSON_KEY_ENV

from helpers.web import WAIT, Page, WebServer, chromium_path, start_web
from quatro_server.doors.gate import DoorThread
from quatro_server.doors.web import COOKIE, WebDoor, issue_token, issued, person_of, web_urls
from quatro_server.records.identity import door_key

pytestmark = pytest.mark.timeout(120)

NAME_QUESTION = "Your name at the tables"
LOBBY = "Tables on this server"


@pytest.fixture(scope="module")
def browser():
    path = chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = start_web(tmp_path_factory.mktemp("web"))
    yield running
    running.stop()


def arrive(visitor: Page, name: str) -> None:
    """Open the page, answer the name question by typing at once (the terminal has the keyboard), reach the lobby."""
    response = visitor.open()
    assert response is not None and response.status == 200
    visitor.wait_for(NAME_QUESTION, "the name question")
    visitor.type(name)
    visitor.press("Enter")
    visitor.wait_for(LOBBY, "the lobby")


def at_the_table(visitor: Page) -> bool:
    """One step towards the round's table: ready at signing (the highlighted sign), past a reveal."""
    text = visitor.text()
    if "center" in text and "hand" in text:
        return True
    if "pick this sign" in text and "you: ready" not in text:
        visitor.press("Enter")
    elif "starts the next round now" in text:
        visitor.press("n")
    return False


def to_the_table(*visitors: Page) -> None:
    """Everyone ready at signing (the round opens when all are), past a reveal, until all see the table."""
    deadline = time.monotonic() + WAIT
    while not all([at_the_table(visitor) for visitor in visitors]):
        assert time.monotonic() < deadline, "never all at the table:\n" + "\n".join(v.text() for v in visitors)
        visitors[0].page.wait_for_timeout(200)


def card_cell(visitor: Page, keys: str, index: int) -> tuple[int, int]:
    """Where card ``index`` of the row labelled with ``keys`` (``asdf``: the hand, ``qwer``: the center) is drawn:
    the middle of its face, two lines under its key label."""
    pattern = re.compile(r"\s+".join(rf"\[?{key}\]?" for key in keys))
    for row, line in enumerate(visitor.screen.display):
        found = pattern.search(line)
        if found:
            label = re.search(rf"\[?{keys[index]}\]?", line[found.start() :])
            assert label is not None
            return found.start() + label.start() + 1, row + 2
    raise AssertionError(f"no card row {keys} on screen:\n{visitor.text()}")


def swap(visitor: Page, by_mouse: bool) -> None:
    """Swap the first hand card with the center's first until the feed shows it (a bot may take the card first, or end
    the round first)."""
    for _ in range(10):
        to_the_table(visitor)
        before = visitor.text().count("you put down")
        try:
            if by_mouse:
                # The round may end between the look and the click (a bot's call): then the rows are gone, and the
                # next try waits for the next round's table, as a person would.
                visitor.click_cell(*card_cell(visitor, "asdf", 0))
                visitor.click_cell(*card_cell(visitor, "qwer", 0))
            else:
                visitor.press("a")
                visitor.press("q")
            visitor.wait_for(lambda t: t.count("you put down") > before, "a swap in the feed", timeout=3)
            return
        except AssertionError:
            continue
    raise AssertionError(f"no swap seen on the page:\n{visitor.text()}")


def children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(child) for child in out.stdout.split()]


def client_environ(pid: int) -> dict[str, str]:
    pairs = [item.split(b"=", 1) for item in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0") if b"=" in item]
    return {key.decode(): value.decode() for key, value in pairs}


def client_commands(server: WebServer) -> list[list[str]]:
    return [Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1] for pid in server.clients()]


def test_a_visitor_names_themself_plays_bots_by_keys_and_mouse_and_a_reload_returns_to_the_seat(browser, server):
    ann = Page(browser, server.url)
    try:
        arrive(ann, "ann")
        # Their own client: quatro join to this very server (not a private one), and nothing else runs for them.
        [command] = client_commands(server)
        assert command[3:5] == ["join", f"127.0.0.1:{server.port}"] and "--ask-name" in command
        assert not children(server.clients()[0]), "a visitor's client started something (a private server?)"
        # Who they are, for their records: the door's key for this visitor, in the environment and not the arguments.
        served = Path(f"/proc/{server.process.pid}/cmdline").read_bytes().decode().split("\0")
        data_dir = Path(served[served.index("--data-dir") + 1])
        key = client_environ(server.clients()[0])[PERSON_KEY_ENV]
        assert key == door_key(data_dir, command[command.index("--person") + 1]) and key not in " ".join(command)

        ann.press("c")  # create a table; three bots; start
        ann.wait_for("ann (you) (host)", "ann's table")
        for count in (1, 2, 3):
            ann.press("b")
            ann.wait_for("Add a bot at which level?", "the level question")
            ann.press("Enter")  # the level highlighted: the server's default
            ann.wait_for(lambda t, n=count: t.count("bot normal") == n, f"{count} bots")
        ann.press("s")
        ann.wait_for("pick this sign", "the sign screen (the sign window outlasts the page's drawing)")
        to_the_table(ann)
        swap(ann, by_mouse=False)
        swap(ann, by_mouse=True)
        ann.shot("web-table")
        assert "♠" in ann.text() or "♥" in ann.text() or "♦" in ann.text() or "♣" in ann.text(), "no suits: not UTF-8"
        assert Page.blocked == [], "the page asked for something beyond this machine"
        assert ann.failed == [], "the page asked for something this server does not have"

        # A reload: the cookie tells who it is; the same seat, with no name asked and no lobby on the way.
        ann.page.reload()
        ann.wait_for("Back in your seat", "ann back in her seat")
        assert NAME_QUESTION not in ann.text() and LOBBY not in ann.text()
        # The key bar is there at once, before any key is pressed on the new page.
        ann.wait_for(lambda t: "quit" in t.splitlines()[-1], "the key bar after the reload", timeout=5)
        server.wait_clients(1)
        swap(ann, by_mouse=False)
    finally:
        ann.close()
    server.wait_clients(0)  # the page closed: its client went with it


def test_two_visitors_at_one_table_and_one_clients_death_leaves_the_other_playing(browser, server):
    ann, ben = Page(browser, server.url), Page(browser, server.url)
    try:
        arrive(ann, "ann")
        ann.press("c")
        ann.wait_for("ann (you) (host)", "ann's table")
        for count in (1, 2):
            ann.press("b")
            ann.wait_for("Add a bot at which level?", "the level question")
            ann.press("Enter")  # the level highlighted: the server's default
            ann.wait_for(lambda t, n=count: t.count("bot normal") == n, f"{count} bots")
        arrive(ben, "ben")
        ben.wait_for(lambda t: "ann" in t and "1/4" not in t, "ann's table in ben's lobby")
        ben.press("Enter")  # join the highlighted table: ann's
        ben.wait_for("ben (you)", "ben at ann's table")
        ann.wait_for("ben", "ben on ann's page")
        ann.press("s")
        to_the_table(ann, ben)
        swap(ann, by_mouse=False)
        ben.wait_for("ann put down", "ann's swap on ben's page")

        # ben's client dies: his page says the game closed; ann's client, the server and the table go on.
        [ben_pid] = [
            pid
            for pid in server.clients()
            if f"{person_of_page(ben)}" in Path(f"/proc/{pid}/cmdline").read_bytes().decode()
        ]
        os.kill(ben_pid, signal.SIGKILL)
        assert "Your game stopped unexpectedly" in ben.closed_why()
        server.wait_clients(1)
        swap(ann, by_mouse=False)
        assert server.process.poll() is None

        # ben reloads: a new client, back in his seat; then he closes the page, and ann still plays on.
        ben.page.reload()
        ben.wait_for("Back in your seat", "ben back in his seat")
        server.wait_clients(2)
        ben.close()
        server.wait_clients(1)
        swap(ann, by_mouse=False)
    finally:
        ann.close()
        ben.close()
    server.wait_clients(0)


def person_of_page(visitor: Page) -> str:
    [cookie] = [c for c in visitor.context.cookies() if c["name"] == COOKIE]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    return person_of(cookie["value"])


def test_the_visitor_cap_shows_a_full_page_an_idle_page_is_closed_and_no_client_outlives_the_server(browser, tmp_path):
    capped = start_web(tmp_path, "--web-max-visitors", "1", "--web-idle", "4")
    first, second = Page(browser, capped.url), Page(browser, capped.url)
    try:
        first.open()
        first.wait_for(NAME_QUESTION, "the name question")
        response = second.open()
        assert response is not None and response.status == 503
        assert "Quatro is full" in second.page.inner_text("body")
        assert "1 people are playing" in second.page.inner_text("#message")
        # Nobody presses a key on the first page: its client closes itself, and the page says so.
        said = first.closed_why()
        assert "closed after 4 seconds without a key press" in said and "reload to come back" in said
        assert "quit" not in said and "another page" not in said
        capped.wait_clients(0)
        response = second.open()  # the place is free again
        assert response is not None and response.status == 200
        second.wait_for(NAME_QUESTION, "the name question, once there is room")
        # The server killed outright: its visitors' clients do not outlive it.
        [client] = capped.clients()
        capped.process.kill()
        capped.process.wait()
        deadline = time.monotonic() + WAIT
        while Path(f"/proc/{client}").exists() and "Z" not in Path(f"/proc/{client}/stat").read_text().split()[2]:
            assert time.monotonic() < deadline, "a visitor's client outlived its server"
            time.sleep(0.1)
    finally:
        first.close()
        second.close()
        capped.stop()


def test_the_page_says_why_its_game_closed_a_quit_another_page_the_server_stopping(browser, tmp_path):
    own = start_web(tmp_path)
    ann = Page(browser, own.url)
    again = None
    try:
        arrive(ann, "ann")
        ann.press("Control+q")  # in the lobby: quits at once
        said = ann.closed_why()
        assert "You quit the game" in said and "unexpectedly" not in said and "idle" not in said
        own.wait_clients(0)
        ann.page.reload()
        ann.wait_for(LOBBY, "the lobby again, the name remembered")
        # The same visitor opens the game in another tab: the first says where the game went.
        again = Page(browser, own.url, context=ann.context)
        again.open()
        again.wait_for(LOBBY, "the lobby on the second page")
        assert "opened on another page of this browser" in ann.closed_why()
        # The server stops: the page says so.
        own.stop()
        said = again.closed_why()
        assert "The server stopped" in said and "another page" not in said
    finally:
        ann.close()
        own.stop()


# --- without a browser -------------------------------------------------------------------------------------


def test_the_page_sets_an_httponly_cookie_and_loads_nothing_from_elsewhere(server):
    with urllib.request.urlopen(server.url) as response:
        page = response.read().decode()
        cookie = response.headers["Set-Cookie"]
        policy = response.headers["Content-Security-Policy"]
    assert cookie.startswith(f"{COOKIE}=") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert "default-src 'self'" in policy
    assert not re.search(r"(src|href)=\"(https?:)?//", page), "the page links something of another host"
    icon = re.search(r'<link rel="icon" href="([^"]+)"', page)
    assert icon is not None, "the page names no icon (browsers then ask for /favicon.ico)"
    for path in (icon.group(1), "/favicon.ico"):
        with urllib.request.urlopen(server.url.rstrip("/") + path) as response:
            assert response.headers["Content-Type"].startswith("image/svg+xml") and b"<svg" in response.read()


def test_a_websocket_from_another_sites_page_is_refused(server):
    request = urllib.request.Request(
        server.url + "ws",
        headers={
            "Origin": "http://evil.example",
            "Connection": "Upgrade",
            "Upgrade": "websocket",
            "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        },
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request)
    assert refused.value.code == 403


def test_the_command_is_fixed_and_the_person_is_a_hash_of_the_token(tmp_path):
    door = WebDoor("127.0.0.1:7777", tmp_path, idle_timeout=60)
    token = "x" * 43
    command = door.client_command(person_of(token))
    assert command[1] == "-c" and 'run_module("quatro_tui"' in command[2]
    assert command[3:] == ["join", "127.0.0.1:7777", "--idle-exit", "60", "--ask-name", "--person", person_of(token)]
    assert token not in " ".join(command)
    assert person_of(token) != person_of("y" * 43) and re.fullmatch(r"web-[0-9a-f]{32}", person_of(token))


def test_the_door_refuses_past_its_caps_in_all_and_per_address(tmp_path):
    door = WebDoor("127.0.0.1:7777", tmp_path, max_visitors=3, max_per_address=2)
    assert door.refusal("10.0.0.1") is None
    door.visits = {"a": _At("10.0.0.1"), "b": _At("10.0.0.1")}  # type: ignore[dict-item]
    assert "for your machine" in (door.refusal("10.0.0.1") or "")
    assert door.refusal("10.0.0.2") is None
    door.visits["c"] = _At("10.0.0.2")  # type: ignore[assignment]
    assert "Quatro is full: 3 people" in (door.refusal("10.0.0.3") or "")


class _At:
    def __init__(self, address: str) -> None:
        self.address = address


def test_the_urls_beside_the_join_addresses():
    assert web_urls(8080, ["192.168.1.20:7777", "[fd00::1]:7777", "127.0.0.1:7777"]) == [
        "http://192.168.1.20:8080/",
        "http://[fd00::1]:8080/",
        "http://127.0.0.1:8080/",
    ]


def test_a_taken_web_port_is_said_plainly(tmp_path):
    command = [
        sys.executable,
        "-m",
        "quatro_server",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--no-announce",
        "--data-dir",
        str(tmp_path),
    ]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([*command, "--web", str(port)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert f"cannot open the browser door on port {port}" in result.stderr and "in use" in result.stderr


# --- the door's bounds, without a browser ---------------------------------------------------------------------


@pytest.fixture
def gated(tmp_path):
    """The browser door alone on a thread (no game behind it): short header deadline, small caps."""
    door = WebDoor("127.0.0.1:1", tmp_path, header_timeout=1.0, max_connections=5, max_connections_per_address=3)
    thread = DoorThread(door, "127.0.0.1", 0, name="browser door")
    port = thread.start()
    yield door, port
    thread.stop()


def _in_a_thread(coroutine):
    """Run ``coroutine`` on an event loop of its own (the browser tests' Playwright holds this thread's)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _open(port: int, local: str = "127.0.9.1") -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(local, 0))


def _closed_after(sock: socket.socket, limit: float, drip: bytes | None = None) -> float:
    """Seconds until the door closes ``sock`` (reading what it answers), dripping ``drip`` every 0.3 s meanwhile."""
    started = time.monotonic()
    sock.settimeout(0.3)
    while time.monotonic() - started < limit:
        try:
            if not sock.recv(65536):
                return time.monotonic() - started
        except TimeoutError:
            if drip is not None:
                sock.sendall(drip)
        except ConnectionError:
            return time.monotonic() - started
    return math.inf


def test_a_request_whose_headers_drip_is_closed_at_the_header_deadline(gated):
    door, port = gated
    with _open(port) as slow:
        slow.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        assert _closed_after(slow, 5, drip=b"X-Slow: 1\r\n") < 2.5
    with _open(port) as idle:  # a keep-alive connection that asks nothing more goes too
        idle.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert _closed_after(idle, 5) < 2.5


def test_browser_connections_are_capped_in_all_and_per_address(tmp_path):
    door = WebDoor("127.0.0.1:1", tmp_path, header_timeout=30, max_connections=5, max_connections_per_address=3)
    thread = DoorThread(door, "127.0.0.1", 0, name="browser door")
    port = thread.start()
    held = [_open(port, "127.0.9.2") for _ in range(4)]
    held += [_open(port, "127.0.9.3") for _ in range(3)]
    try:
        time.sleep(0.3)
        closed = [_closed_after(sock, 0.5) < 0.5 for sock in held]
        assert closed == [False, False, False, True, False, False, True], closed  # 3 from one address, 5 in all
        assert door.gate.open == 5
    finally:
        for sock in held:
            sock.close()
        thread.stop()


def test_junk_http_is_one_quiet_line_never_a_traceback(gated, caplog):
    door, port = gated
    caplog.set_level(logging.DEBUG)
    junk = [
        b"GET / HTTP/9.9\r\n\r\n",
        b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost\r\n\r\n",
    ]
    for i in range(120):
        with _open(port, f"127.0.10.{i % 200 + 1}") as sock:
            sock.sendall(junk[i % len(junk)])
            _closed_after(sock, 5)
    records = [r for r in caplog.records if r.name.startswith(("aiohttp", "quatro"))]
    assert not [r for r in records if r.exc_info], [r.getMessage() for r in records if r.exc_info][:3]
    assert 1 <= len(records) <= 2, [r.getMessage() for r in records]
    assert "web_bad_request" in records[0].getMessage()


def test_only_issued_tokens_are_visitors_and_their_directories_are_bounded(tmp_path):
    door = WebDoor("127.0.0.1:1", tmp_path, max_visitor_dirs=3)
    token = issue_token(door.secret)
    assert issued(token, door.secret)
    assert not issued(issue_token(b"another server's secret" * 2), door.secret)
    assert not issued("x" * 43, door.secret)  # the shape of a token, never issued
    nonce, mac = token.split(".")
    assert not issued(f"{nonce}.{mac[::-1]}", door.secret)
    assert WebDoor("127.0.0.1:1", tmp_path).secret == door.secret  # kept: a visitor's cookie holds after a restart
    homes = []
    for i in range(5):
        homes.append(door.make_home(f"web-{i}"))
        os.utime(homes[-1], (time.time() - 1000 + i, time.time() - 1000 + i))
    left = sorted(path.name for path in (tmp_path / "web-clients").iterdir())
    assert left == ["web-2", "web-3", "web-4"]  # the least recently seen went first


def test_a_forged_cookie_gets_a_new_token_and_its_websocket_no_directory(gated, tmp_path):
    door, port = gated
    forged = "f" * 22 + "." + "g" * 22
    request = urllib.request.Request(f"http://127.0.0.1:{port}/", headers={"Cookie": f"{COOKIE}={forged}"})
    with urllib.request.urlopen(request) as page:
        cookie = page.headers["Set-Cookie"]
    token = cookie.split("=", 1)[1].split(";", 1)[0]
    assert token != forged and issued(token, door.secret)

    async def websocket() -> bytes:
        import aiohttp

        async with aiohttp.ClientSession(cookies={COOKIE: forged}) as session:
            async with session.ws_connect(f"http://127.0.0.1:{port}/ws") as ws:
                message = await ws.receive(timeout=5)
                return bytes(message.data)

    assert b"needs its cookie" in _in_a_thread(websocket())
    assert not (tmp_path / "web-clients").exists()


class _Page:
    """What ``_relay`` reads a page through: its messages, and what it sends back."""

    def __init__(self, texts: list[str]) -> None:
        self.texts, self.sent = texts, []

    def __aiter__(self):
        return self._messages()

    async def _messages(self):
        for text in self.texts:
            yield WSMessage(WSMsgType.TEXT, text, None)

    async def send_json(self, data) -> None:
        self.sent.append(data)


class _Visit:
    def __init__(self) -> None:
        self.keys: list[bytes] = []

    async def send_bytes(self, data: bytes) -> None:
        self.keys.append(data)


def test_a_message_nested_too_deep_is_ignored_and_the_visit_goes_on(tmp_path):
    """docs/web.md: anything malformed is ignored. 30000 levels deep fits in a message and is past what the
    decoder reads (RecursionError): it is ignored like any other, and the messages after it are served."""
    door = WebDoor("127.0.0.1:1", tmp_path)
    page, visit = (
        _Page(["[" * 30000 + "]" * 30000, '{"a":' * 5000 + "1" + "}" * 5000, '["stdin", "x"]', '["ping", "p1"]']),
        _Visit(),
    )
    _in_a_thread(door._relay(page, visit))  # type: ignore[arg-type]
    assert visit.keys == [b"x"] and page.sent == [["pong", "p1"]]


def test_foreign_origins_are_refused_with_one_log_line_a_while(gated, caplog):
    door, port = gated
    caplog.set_level(logging.INFO)
    for _ in range(20):
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/ws",
            headers={
                "Origin": "http://evil.example",
                "Connection": "Upgrade",
                "Upgrade": "websocket",
                "Sec-WebSocket-Version": "13",
                "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
            },
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request)
        assert refused.value.code == 403
    lines = [r for r in caplog.records if "web_foreign_origin" in r.getMessage()]
    assert len(lines) == 1
