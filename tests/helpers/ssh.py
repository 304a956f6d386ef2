"""Helpers for the SSH door's tests: ``quatro-server --ssh 0`` as a real process on loopback, and player keys."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import asyncssh

from helpers.door_process import DoorProcess, start_server


@dataclass
class DoorServer(DoorProcess):
    """A running ``quatro-server --ssh 0``: its ports, the host key it printed, and its log so far."""

    ssh_port: int = 0
    fingerprint: str = ""


def start_door(tmp: Path, *args: str, data_dir: Path | None = None) -> DoorServer:
    """Start the server with its SSH door on free loopback ports (patient timing); wait until both listen."""
    started = start_server(tmp, ["--ssh", "0"], args, data_dir, "ssh -p", "its SSH door")
    ssh_port = int(re.search(r"ssh -p (\d+) NAME@127\.0\.0\.1", started.out).group(1))  # type: ignore[union-attr]
    fingerprint = re.search(r"host key (SHA256:\S+)\)", started.out).group(1)  # type: ignore[union-attr]
    return DoorServer(started.process, started.port, started.out, started.log, ssh_port, fingerprint)


def player_key(path: Path) -> asyncssh.SSHKey:
    """A player's key pair, written where OpenSSH reads it (``path`` and ``path.pub``, private 0600)."""
    key = asyncssh.generate_private_key("ssh-ed25519", comment=path.name)
    key.write_private_key(str(path))
    path.chmod(0o600)
    key.write_public_key(str(path) + ".pub")
    return key
