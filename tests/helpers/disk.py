"""A small file system of its own for a test's data directory (a tmpfs of a few MiB), to fill up and free.

Mounting needs root (or CAP_SYS_ADMIN); where the machine does not allow it, the fixture skips and says why."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

FILLER = "filler"


class SmallDisk:
    """A mounted tmpfs: ``fill`` takes every free byte, ``free`` gives them back."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def fill(self) -> int:
        """Write a filler file until the disk says it is full (ENOSPC); the bytes written."""
        written = 0
        chunk = b"\0" * 65536
        fd = os.open(self.root / FILLER, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o600)
        try:
            while True:
                try:
                    written += os.write(fd, chunk if len(chunk) > 1 else b"\0")
                except OSError:
                    if len(chunk) == 1:
                        break
                    chunk = chunk[: len(chunk) // 2]
        finally:
            os.close(fd)
        return written

    def free(self) -> None:
        (self.root / FILLER).unlink(missing_ok=True)

    def available(self) -> int:
        st = os.statvfs(self.root)
        return st.f_bavail * st.f_frsize


def mounted(path: Path, size: str) -> Iterator[SmallDisk]:
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs for the data directory needs root; not root here")
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)], capture_output=True, text=True
    )
    if result.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {result.stderr.strip() or result.returncode}")
    try:
        yield SmallDisk(path)
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)
