"""Helpers for the client's tests: a real ``quatro-server`` process, asyncio players, waits on conditions.

pytest runs in trio mode, so the client's tests (Textual runs on asyncio) are plain functions that call
``asyncio.run`` themselves. Every wait is for a condition, with a generous deadline, never a fixed sleep.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from quatro_shared import protocol as p
from quatro_shared.games.quatro.views import Phase, SeatView
from quatro_shared.messages import Seating
from quatro_shared.wire import request_from_wire, to_wire

from quatro_tui.connection import Connection, ServerSeating, ServerUpdate
from quatro_tui.local_server import LocalServer

#: Seconds any single wait may take before the test fails. Generous: CI machines stall.
WAIT = 15.0

#: The client's tests' durations. Every window a test might have to act within is long, so that no test races a
#: rule's clock on a slow machine (a sign window closing before three readies, a vote timing out between three
#: key presses, a round ending mid-script); cooldowns and pulses are short, so that tests stay fast. A test that
#: needs a window to close does not wait for it: the host starts the next round, everyone is ready, a no ends a vote.
PATIENT_TIMING = {
    "sign_window": 600.0,
    "vote_window": 600.0,
    "round_length": 600.0,
    "break_length": 600.0,
    "swap_cooldown": 0.2,
    "channel_cooldown": 0.2,
    "pulse_interval": 0.5,
    "pulse_shown": 0.4,
    "vote_gap": 0.2,
}
#: The profile's name on the server: the file's stem.
PATIENT = "patient"


def timing_file(directory: Path) -> Path:
    """``PATIENT_TIMING`` as a TOML file in ``directory``, for ``quatro-server --timing FILE``."""
    path = directory / f"{PATIENT}.toml"
    path.write_text("".join(f"{key} = {value}\n" for key, value in PATIENT_TIMING.items()))
    return path


@pytest.fixture
def patient_timing(tmp_path) -> str:
    """The path of a ``PATIENT_TIMING`` file, for ``Play(timing=...)`` (the private server's ``--timing FILE``)."""
    return str(timing_file(tmp_path))


@pytest.fixture(scope="module")
def quatro_server(tmp_path_factory):
    """``quatro-server --timing patient.toml`` as a separate process on a free loopback port; yields the port.

    Its default profile is the file's: tables created without ``timing`` get it."""
    server = LocalServer(str(timing_file(tmp_path_factory.mktemp("timing"))))
    server.start()
    yield server.port
    server.stop()


def run(coro_fn: Callable[[], Awaitable[Any]], timeout: float = 90.0) -> Any:
    """Run an asyncio test body to completion (the test function itself stays sync for pytest-trio)."""

    async def bounded():
        async with asyncio.timeout(timeout):
            return await coro_fn()

    return asyncio.run(bounded())


async def until(predicate: Callable[[], Any], timeout: float = WAIT, what: str = "condition") -> Any:
    """Poll ``predicate`` until it returns something true; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def armed(app: Any) -> None:
    """Wait until the screen's keys work: a screen that replaced another ignores its keys for a moment (guard.py)."""
    from quatro_tui.guard import KeyGuard

    await until(lambda: not isinstance(app.screen, KeyGuard) or app.screen.armed(), what="the screen's keys")


class Player:
    """A scripted human at the table over the client's own ``Connection`` (no screen)."""

    def __init__(self, port: int, name: str) -> None:
        self.messages: list[Any] = []
        self.conn = Connection("127.0.0.1", port, name, self.messages.append)
        self.view: SeatView | None = None
        self.seating: Seating | None = None
        self.events: list[Any] = []
        self._task: asyncio.Task | None = None

    def _track(self, message: Any) -> None:
        if isinstance(message, ServerUpdate):
            self.view = message.view
            self.events.extend(message.events)
        elif isinstance(message, ServerSeating):
            self.seating = message.seating

    async def start(self) -> Player:
        self.conn.deliver = lambda m: (self.messages.append(m), self._track(m))
        await self.conn.open()
        self._task = asyncio.create_task(self.conn.run())
        return self

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Send a request given as its wire fields; the reply comes back in its wire form, for asserting on."""
        checked = request_from_wire({"kind": kind, "id": 0, **fields})
        assert checked.body is not None, checked.invalid
        return to_wire(await self.conn.request(checked.body))

    async def act(self, kind: str, **fields: Any) -> dict[str, Any]:
        reply = await self.request(kind, **fields)
        assert reply["kind"] == p.OK, reply
        return reply

    async def wait_view(self, predicate: Callable[[SeatView], bool], what: str = "a view") -> SeatView:
        return await until(lambda: self.view is not None and predicate(self.view) and self.view, what=what)

    async def wait_phase(self, phase: Phase) -> SeatView:
        return await self.wait_view(lambda v: v.phase is phase, f"phase {phase}")

    async def close(self) -> None:
        await self.conn.close()
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - the player is gone either way
                pass
