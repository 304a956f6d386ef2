"""Helpers for the browser door's tests: ``quatro-server --web 0`` as a real process on loopback, the system's
Chromium driven by Playwright with every request off this machine blocked, and the screen a page received,
rebuilt with a terminal emulator (pyte) from the bytes that came over its websocket."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pyte
import pytest

from helpers.door_process import DoorProcess, start_server

WAIT = 20.0
CHROMIUM = "/usr/bin/chromium"
#: A laptop's window: at the page's 16 px font, about 130 columns by 40 rows.
VIEWPORT = {"width": 1280, "height": 800}
ARTIFACTS = Path(os.environ.get("QUATRO_TEST_ARTIFACTS", Path(__file__).parent.parent / "test-artifacts"))


def chromium_path() -> str:
    """Debian's Chromium; skipped on a developer's machine without it, a failure in CI (.ci/run installs it)."""
    found = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed, and CI must run the browser tests (.ci/run installs it)")
        pytest.skip("chromium is not installed (apt-get install chromium fonts-noto-color-emoji; .ci/run does)")
    return found


@dataclass
class WebServer(DoorProcess):
    """A running ``quatro-server --web 0``: its ports, the URL it printed, and its log so far."""

    url: str = ""

    def wait_clients(self, count: int, timeout: float = WAIT) -> None:
        deadline = time.monotonic() + timeout
        while len(self.clients()) != count:
            assert time.monotonic() < deadline, f"{len(self.clients())} visitors' clients run, not {count}"
            time.sleep(0.1)


def start_web(tmp: Path, *args: str, data_dir: Path | None = None) -> WebServer:
    """The server with its browser door on free loopback ports (patient timing: the sign window outlasts a
    page's first drawing); waits until both listen."""
    started = start_server(tmp, ["--web", "0", "--no-announce"], args, data_dir, "http://", "its browser door")
    url = re.search(r"(http://127\.0\.0\.1:\d+/)", started.out).group(1)  # type: ignore[union-attr]
    return WebServer(started.process, started.port, started.out, started.log, url)


def loopback_only(route: Any) -> None:
    """Every request to anywhere but this machine is refused (the page must not need one)."""
    host = urlsplit(route.request.url).hostname or ""
    if host in ("127.0.0.1", "localhost", "::1") or route.request.url.startswith(("data:", "blob:")):
        route.continue_()
    else:
        Page.blocked.append(route.request.url)
        route.abort()


class Page:
    """One visitor: a browser context of its own (its own cookies; ``context``: another page of the same visitor),
    a page on the door, the screen the page received, rebuilt by pyte from the websocket's bytes at the size the
    page asked for, and the requests the server answered with an error."""

    blocked: list[str] = []

    def __init__(self, browser: Any, url: str, viewport: dict[str, int] = VIEWPORT, context: Any = None) -> None:
        if context is None:
            context = browser.new_context(viewport=viewport, locale="en-GB")
            context.route("**/*", loopback_only)
        self.context = context
        self.page = self.context.new_page()
        self.failed: list[str] = []
        self.page.on("response", lambda r: self.failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        self.url = url
        self.screen = pyte.Screen(80, 24)
        self.stream = pyte.ByteStream(self.screen)
        self.received = 0
        self.closed = False
        self.page.on("websocket", self._socket)

    def _socket(self, socket: Any) -> None:
        query = parse_qs(urlsplit(socket.url).query)
        self.screen = pyte.Screen(int(query.get("width", ["80"])[0]), int(query.get("height", ["24"])[0]))
        self.stream = pyte.ByteStream(self.screen)
        self.closed = False
        socket.on("framereceived", self._received)
        socket.on("framesent", self._sent)
        socket.on("close", lambda _: setattr(self, "closed", True))

    def _received(self, payload: bytes | str) -> None:
        if isinstance(payload, bytes):
            self.received += len(payload)
            self.stream.feed(payload)

    def _sent(self, payload: bytes | str) -> None:
        if isinstance(payload, str) and payload.startswith('["resize"'):
            size = json.loads(payload)[1]
            self.screen.resize(size["height"], size["width"])

    def open(self) -> Any:
        return self.page.goto(self.url)

    def text(self) -> str:
        return "\n".join(self.screen.display)

    def wait_for(self, check: Any, what: str, timeout: float = WAIT) -> str:
        """Until ``check(screen text)`` (or the text is on screen, for a str); returns the screen."""
        test = (lambda t: check in t) if isinstance(check, str) else check
        deadline = time.monotonic() + timeout
        while True:
            text = self.text()
            if test(text):
                return text
            if time.monotonic() > deadline:
                raise AssertionError(f"never saw {what}; the screen was:\n{text}")
            self.page.wait_for_timeout(100)

    def type(self, keys: str) -> None:
        self.page.keyboard.type(keys)

    def press(self, key: str) -> None:
        self.page.keyboard.press(key)

    def find(self, text: str) -> tuple[int, int]:
        """The cell (column, row) where ``text`` starts on the screen."""
        for row, line in enumerate(self.screen.display):
            column = line.find(text)
            if column >= 0:
                return column, row
        raise AssertionError(f"{text!r} is not on the screen:\n{self.text()}")

    def click_cell(self, column: int, row: int) -> None:
        """A mouse click on a cell of the terminal, where the browser draws it."""
        box = self.page.locator(".xterm-screen").bounding_box()
        assert box is not None
        width, height = box["width"] / self.screen.columns, box["height"] / self.screen.lines
        self.page.mouse.click(box["x"] + (column + 0.5) * width, box["y"] + (row + 0.5) * height)

    def shot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path))
        return path

    def closed_why(self) -> str:
        """What the page says once its game has closed."""
        self.page.wait_for_selector(".closed-notice", state="visible", timeout=15000)
        return str(self.page.inner_text(".closed-notice"))

    def close(self) -> None:
        self.context.close()
