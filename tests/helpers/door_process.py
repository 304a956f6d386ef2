"""A server with a door (``--ssh 0`` or ``--web 0``) as a real process on loopback, for the doors' tests."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from helpers.tui import timing_file

START_TIMEOUT = 20.0


@dataclass
class DoorProcess:
    """A running server with a door: its game port, what it printed when it started, and its log so far."""

    process: subprocess.Popen[str]
    port: int
    out: str
    log: list[str]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def clients(self) -> list[int]:
        """The pids of the door's client processes (children of the server)."""
        out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(self.process.pid)], capture_output=True, text=True)
        return [int(pid) for pid in out.stdout.split()]


def start_server(
    tmp: Path, door: list[str], args: tuple[str, ...], data_dir: Path | None, ready: str, what: str
) -> DoorProcess:
    """Start the server with ``door``'s options on free loopback ports (patient timing); wait until it prints
    ``ready`` (its door listens), or fail saying the server did not open ``what``."""
    command = [
        sys.executable,
        "-m",
        "quatro_server",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        *door,
        "--data-dir",
        str(data_dir or tmp / "data"),
        "--timing",
        str(timing_file(tmp)),
        *args,
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log: list[str] = []
    threading.Thread(target=lambda: log.extend(process.stderr), daemon=True).start()  # type: ignore[arg-type]
    out = ""
    deadline = time.monotonic() + START_TIMEOUT
    assert process.stdout is not None
    while ready not in out:
        line = process.stdout.readline()
        if not line or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"the server did not open {what}: {out}{''.join(log)}")
        out += line
    port = int(re.search(r"quatro join (?:tls://)?127\.0\.0\.1:(\d+)", out).group(1))  # type: ignore[union-attr]
    return DoorProcess(process, port, out, log)
