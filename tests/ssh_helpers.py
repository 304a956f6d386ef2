"""Helpers for the SSH door's tests: ``quatro-server --ssh 0`` as a real process on loopback, and player keys."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh

from tui_helpers import timing_file

START_TIMEOUT = 20.0


@dataclass
class DoorServer:
    """A running ``quatro-server --ssh 0``: its ports, the host key it printed, and its log so far."""

    process: subprocess.Popen[str]
    port: int
    ssh_port: int
    fingerprint: str
    log: list[str] = field(default_factory=list)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def clients(self) -> list[int]:
        """The pids of the sessions' client processes (children of the server)."""
        out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(self.process.pid)], capture_output=True, text=True)
        return [int(pid) for pid in out.stdout.split()]


def start_door(tmp: Path, *args: str, data_dir: Path | None = None) -> DoorServer:
    """Start the server with its SSH door on free loopback ports (patient timing); wait until both listen."""
    command = [
        sys.executable, "-m", "quatro_server", "--host", "127.0.0.1", "--port", "0", "--ssh", "0",
        "--data-dir", str(data_dir or tmp / "data"), "--timing", str(timing_file(tmp)), *args,
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log: list[str] = []
    threading.Thread(target=lambda: log.extend(process.stderr), daemon=True).start()  # type: ignore[arg-type]
    out = ""
    deadline = time.monotonic() + START_TIMEOUT
    assert process.stdout is not None
    while "ssh -p" not in out:
        line = process.stdout.readline()
        if not line or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"the server did not open its SSH door: {out}{''.join(log)}")
        out += line
    port = int(re.search(r"quatro join 127\.0\.0\.1:(\d+)", out).group(1))  # type: ignore[union-attr]
    ssh_port = int(re.search(r"ssh -p (\d+) NAME@127\.0\.0\.1", out).group(1))  # type: ignore[union-attr]
    fingerprint = re.search(r"host key (SHA256:\S+)\)", out).group(1)  # type: ignore[union-attr]
    return DoorServer(process, port, ssh_port, fingerprint, log)


def player_key(path: Path) -> asyncssh.SSHKey:
    """A player's key pair, written where OpenSSH reads it (``path`` and ``path.pub``, private 0600)."""
    key = asyncssh.generate_private_key("ssh-ed25519", comment=path.name)
    key.write_private_key(str(path))
    path.chmod(0o600)
    key.write_public_key(str(path) + ".pub")
    return key
