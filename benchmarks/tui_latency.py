"""How fast the client is where a player feels it: launch to the table, and a server event to the screen.

    python benchmarks/tui_latency.py [--runs 5] [--events 40]

1. Launch: ``quatro play --timing fast`` in a real terminal (tmux), timed from the command to the signing
   screen on screen, then (Enter pressed at once) to the round's table. Baseline, same run, same method: a
   bare Textual app that draws one line.
2. Event to screen: the client headless against a real server; a scripted player swaps, and each update is
   timed from the moment its frame arrived to the moment the client wrote the frame showing it to the
   terminal. Baseline, same run, same method: a bare Textual app told by a message to change one label.

Figures, not tests: nothing here asserts a threshold. Results go to docs/performance.md by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from textual.app import App, ComposeResult  # noqa: E402
from textual.message import Message  # noqa: E402
from textual.widgets import Static  # noqa: E402

from quatro_shared import messages as m  # noqa: E402
from quatro_shared.games.quatro.actions import Ready, Swap  # noqa: E402
from quatro_shared.games.quatro.cards import display  # noqa: E402
from quatro_shared.games.quatro.views import Phase  # noqa: E402

from quatro_tui.app import Join, QuatroApp  # noqa: E402
from quatro_tui.connection import Connection, ServerUpdate  # noqa: E402
from quatro_tui.local_server import LocalServer  # noqa: E402

BARE_APP = """
from textual.app import App
from textual.widgets import Static
class Bare(App):
    def compose(self):
        yield Static("bare textual app is up")
Bare().run()
"""


def summary(samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p90 = ms[min(len(ms) - 1, int(round(0.9 * (len(ms) - 1))))]
    return f"median {statistics.median(ms):7.1f} ms   p90 {p90:7.1f} ms   max {ms[-1]:7.1f} ms   (n={len(ms)})"


# --- 1. launch to the table --------------------------------------------------------------------------


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=False).stdout


def _time_in_tmux(
    command: str, marks: list[str], keys_after_first: str | None = None, timeout: float = 30
) -> list[float]:
    """Seconds from launching ``command`` in a fresh tmux pane to each of ``marks`` appearing on it."""
    session = f"bench-{uuid.uuid4().hex[:8]}"
    start = time.perf_counter()
    _tmux("-u", "new-session", "-d", "-s", session, "-x", "100", "-y", "30", command)
    found: list[float] = []
    text = ""
    try:
        deadline = start + timeout
        while len(found) < len(marks) and time.perf_counter() < deadline:
            text = _tmux("capture-pane", "-p", "-t", session)
            if marks[len(found)] in text:
                found.append(time.perf_counter() - start)
                if len(found) == 1 and keys_after_first:
                    _tmux("send-keys", "-t", session, keys_after_first)
                continue
            time.sleep(0.005)
    finally:
        _tmux("send-keys", "-t", session, "C-q")
        time.sleep(0.3)
        _tmux("kill-session", "-t", session)
    if len(found) < len(marks):
        raise RuntimeError(f"{command!r}: {marks[len(found)]!r} never appeared; the screen was:\n{text}")
    return found


def bench_launch(runs: int) -> None:
    if shutil.which("tmux") is None:
        print("launch: skipped (tmux is not installed)")
        return
    python = shlex.quote(sys.executable)
    bare, signing, table = [], [], []
    with tempfile.TemporaryDirectory() as config:
        env = f"env XDG_CONFIG_HOME={config} LANG=C.UTF-8"
        for _ in range(runs):
            bare += _time_in_tmux(f"{env} {python} -c {shlex.quote(BARE_APP)}", ["bare textual app is up"])
            sign, round_ = _time_in_tmux(
                f"{env} {python} -m quatro_tui play --timing fast --name bench",
                ["pick your team's sign", "center"],
                keys_after_first="Enter",
            )
            signing.append(sign)
            table.append(round_)
    print("launch (tmux, 100x30, polled every 5 ms):")
    print(f"  baseline: bare Textual app on screen        {summary(bare)}")
    print(f"  quatro play: signing screen on screen       {summary(signing)}")
    print(f"  quatro play: round table on screen (Enter)  {summary(table)}")


# --- 2. a server event to the screen --------------------------------------------------------------------


class _WriteClock:
    """Wraps the driver's write: notes when each frame went to the terminal, and what it held."""

    def __init__(self, app: App) -> None:
        self.writes: list[tuple[float, str]] = []
        driver = app._driver
        original = driver.write

        # A headless driver skips rendering to the terminal altogether; this one renders every frame to
        # escape codes as a real terminal would get them (and throws them away), so the timing is honest.
        class Rendering(type(driver)):
            @property
            def is_headless(self) -> bool:
                return False

        driver.__class__ = Rendering

        def write(data: str) -> None:
            self.writes.append((time.monotonic(), data))
            original(data)

        driver.write = write

    def first_after(self, t0: float, needle: str) -> float | None:
        for t, data in self.writes:
            if t >= t0 and needle in data:
                return t
        return None


async def _until(predicate, timeout: float = 10.0) -> None:
    deadline = time.perf_counter() + timeout
    while not predicate():
        if time.perf_counter() > deadline:
            raise RuntimeError("timed out")
        await asyncio.sleep(0.002)


async def bench_event_to_screen(events: int) -> tuple[list[float], list[float]]:
    server = LocalServer("fast")
    port = await asyncio.to_thread(server.start)
    try:
        # The measured seat is the app; a scripted player hosts and swaps.
        host_messages: list = []
        host = Connection("127.0.0.1", port, "host", host_messages.append)
        await host.open()
        reader = asyncio.create_task(host.run())
        # Fast timing: a 0.2 s swap cooldown lets the host swap often; rounds last 18 s, plenty for the samples.
        created = (await host.request(m.CreateTable(4, "fast"))).payload
        assert isinstance(created, m.Seated)
        app = QuatroApp(Join("127.0.0.1", port, "bench", table=created.table))
        arrivals: list[tuple[float, ServerUpdate]] = []
        samples: list[float] = []
        async with app.run_test(size=(100, 30)) as pilot:
            await _until(lambda: app.conn is not None and app.game.seating is not None and app.game.my_seat is not None)
            deliver = app.conn.deliver

            def noting(message) -> None:
                # The frame has just been read and decoded: the moment the event "arrived" at the client.
                if isinstance(message, ServerUpdate):
                    arrivals.append((message.received_at, message))
                deliver(message)

            app.conn.deliver = noting
            # Idle people rather than bots in the other seats: nothing but the host's swaps happens.
            idle = []
            for i in range(2):
                c = Connection("127.0.0.1", port, f"idle{i}", lambda m: None)
                await c.open()
                idle.append((c, asyncio.create_task(c.run())))
                await c.request(m.Join(created.table))
            await host.request(m.Start())
            await _until(lambda: app.game.view is not None and app.game.view.phase is Phase.SIGNING)
            for c in [host] + [c for c, _ in idle]:
                await c.request(Ready())
            await pilot.press("enter")
            await _until(lambda: app.game.view.phase is Phase.ROUND and len(app.game.view.hand) == 4)
            await pilot.pause(0.3)
            clock = _WriteClock(app)
            host_view = lambda: next(m.view for m in reversed(host_messages) if isinstance(m, ServerUpdate))  # noqa: E731
            for i in range(events):
                view = host_view()
                give = view.hand[i % 4]
                slot = (i * 3) % 4
                take = view.center[slot]
                sent = len(arrivals)
                reply = await host.request(Swap(give, slot, take))
                if not isinstance(reply, m.Ok):
                    raise RuntimeError(f"swap refused: {reply}")
                await _until(lambda: len(arrivals) > sent)
                arrived, message = arrivals[sent]
                needle = display(give)  # the card put down now lies in the center, on the app's screen
                await _until(lambda: clock.first_after(arrived, needle) is not None, timeout=5)
                samples.append(clock.first_after(arrived, needle) - arrived)
                await asyncio.sleep(0.25)  # past the host's swap cooldown (R9, fast timing)
            await pilot.press("ctrl+q")
        for c, task in idle:
            await c.close()
            task.cancel()
        await host.close()
        reader.cancel()
    finally:
        server.stop()
    return samples, await bench_bare_message(len(samples) or events)


class _Bump(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
        self.arrived = time.monotonic()


class _Bare(App):
    def compose(self) -> ComposeResult:
        yield Static("start", id="label")

    def on__bump(self, message: _Bump) -> None:
        self.arrivals.append(message.arrived)
        self.query_one("#label", Static).update(message.text)


async def bench_bare_message(events: int) -> list[float]:
    app = _Bare()
    app.arrivals = []
    samples = []
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause(0.2)
        clock = _WriteClock(app)
        for i in range(events):
            text = f"marker-{i:04d}"
            app.post_message(_Bump(text))
            await _until(lambda: len(app.arrivals) > i)
            await _until(lambda: clock.first_after(app.arrivals[i], text) is not None, timeout=5)
            samples.append(clock.first_after(app.arrivals[i], text) - app.arrivals[i])
            await asyncio.sleep(0.05)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="launches of each kind")
    parser.add_argument("--events", type=int, default=30, help="swaps timed from arrival to screen")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {sys.platform}")
    bench_launch(args.runs)
    quatro, bare = asyncio.run(bench_event_to_screen(args.events))
    print("event to screen (headless driver, frame arrival to the terminal write that shows it):")
    print(f"  baseline: bare Textual app, message to label  {summary(bare)}")
    print(f"  quatro: a swap's update to the center drawn   {summary(quatro)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
