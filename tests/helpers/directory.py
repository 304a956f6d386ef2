"""Server processes sharing a table directory, for the directory's tests: each on a loopback port of its own that it
keeps across restarts (a client sent to it comes back to the same address), with its own data directory."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

#: The directory's time to live in the tests: a dead server's tables must leave the lobbies within it.
TTL = 1.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Node:
    """One ``quatro-server --directory`` process. ``start`` blocks until it listens (call it from a thread in trio)."""

    def __init__(self, url: str, data: Path, name: str, *options: str) -> None:
        self.url, self.data, self.name, self.options = url, data / name, name, options
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.out = ""
        #: What the server logged (warnings and above, unless ``options`` ask for more), across its restarts.
        self.log = data / f"{name}.log"

    def start(self) -> Node:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "quatro_server",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--timing",
                "fast",
                "--data-dir",
                str(self.data),
                "--directory",
                self.url,
                "--directory-ttl",
                str(TTL),
                "--log-level",
                "warning",
                *self.options,
            ],
            stdout=subprocess.PIPE,
            stderr=self.log.open("ab"),
        )
        assert self.proc.stdout is not None
        lines = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline().decode()
            assert line, f"{self.name} exited early: {''.join(lines)!r}"
            lines.append(line)
            if "quatro join 127.0.0.1:" in line:
                self.out = "".join(lines)
                return self
        raise AssertionError(f"{self.name} did not start: {''.join(lines)!r}")

    def kill(self) -> None:
        """SIGKILL: no goodbye, no record removed from the directory."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait()
            if self.proc.stdout is not None:
                self.proc.stdout.close()
