"""What one SSH door session costs: start-up (connect to lobby on screen) and memory, against a baseline.

    python benchmarks/ssh_sessions.py [--sessions 10]

A real ``quatro-server --ssh 0`` on loopback (its own data directory, deleted afterwards). Sessions are
opened one after another with asyncssh's client, each with a pseudo-terminal, and timed from the TCP
connect to the lobby's title in the session's output; all stay open, then the memory of every session's
client process (resident set, and its unique set: what it alone holds) and the server's own growth are read.

Baseline, same run, same method: the same client, ``quatro join``, started directly on a local
pseudo-terminal (no SSH), timed from the spawn to the same text: what the door adds on top of the client.

Figures, not tests: nothing here asserts a threshold. Results go to docs/performance.md by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import asyncssh
import psutil

ROOT = Path(__file__).resolve().parent.parent
LOBBY = b"Tables on this server"


def summary(samples: list[float], unit: str = "ms", scale: float = 1000.0) -> str:
    values = sorted(s * scale for s in samples)
    p90 = values[min(len(values) - 1, int(round(0.9 * (len(values) - 1))))]
    return (
        f"median {statistics.median(values):7.1f} {unit}   p90 {p90:7.1f} {unit}   "
        f"max {values[-1]:7.1f} {unit}   (n={len(values)})"
    )


def start_server(data_dir: Path) -> tuple[subprocess.Popen[str], int, int]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "quatro_server",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--ssh",
            "0",
            "--data-dir",
            str(data_dir),
            "--log-level",
            "warning",
            "--ssh-max-sessions",
            "1000",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )
    out = ""
    assert process.stdout is not None
    while "ssh -p" not in out:
        line = process.stdout.readline()
        if not line:
            raise SystemExit(f"the server did not start: {out}")
        out += line
    port = int(re.search(r"quatro join 127\.0\.0\.1:(\d+)", out).group(1))  # type: ignore[union-attr]
    ssh_port = int(re.search(r"ssh -p (\d+)", out).group(1))  # type: ignore[union-attr]
    return process, port, ssh_port


async def read_until(read, text: bytes, timeout: float = 30.0) -> None:
    seen = b""
    async with asyncio.timeout(timeout):
        while text not in seen:
            chunk = await read()
            if not chunk:
                raise SystemExit(f"ended before {text!r}")
            seen = seen[-4096:] + chunk


async def direct_start(port: int, config: Path) -> float:
    """The client on a local pseudo-terminal, no SSH: spawn to lobby."""
    master, slave = os.openpty()
    env = dict(os.environ, TERM="xterm-256color", LANG="C.UTF-8", XDG_CONFIG_HOME=str(config))
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "quatro_tui",
        "join",
        f"127.0.0.1:{port}",
        "--name",
        "base",
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    loop = asyncio.get_running_loop()
    await read_until(lambda: loop.run_in_executor(None, os.read, master, 65536), LOBBY)
    elapsed = time.perf_counter() - started
    process.terminate()
    await process.wait()
    os.close(master)
    return elapsed


async def main(sessions: int) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="quatro-ssh-bench-"))
    server, port, ssh_port = start_server(tmp / "data")
    try:
        baseline = [await direct_start(port, tmp / "direct") for _ in range(max(3, sessions // 2))]
        server_process = psutil.Process(server.pid)
        server_before = server_process.memory_info().rss
        opened = []
        startups = []
        for i in range(sessions):
            started = time.perf_counter()
            conn = await asyncssh.connect(
                "127.0.0.1",
                ssh_port,
                username=f"p{i}",
                known_hosts=None,
                agent_path=None,
                client_keys=None,
                password="",
            )
            process = await conn.create_process(term_type="xterm-256color", term_size=(100, 30), encoding=None)
            await read_until(lambda: process.stdout.read(65536), LOBBY)
            startups.append(time.perf_counter() - started)
            opened.append((conn, process))
        await asyncio.sleep(1.0)  # let every client settle after its first screen
        clients = server_process.children()
        rss = [c.memory_info().rss for c in clients]
        uss = [c.memory_full_info().uss for c in clients]
        server_after = server_process.memory_info().rss
        print(f"{sessions} SSH sessions at the lobby at once ({len(clients)} client processes):")
        print(f"  baseline: quatro join on a local pty, spawn to lobby   {summary(baseline)}")
        print(f"  ssh door: connect to lobby on the SSH client's screen  {summary(startups)}")
        print(f"  client process resident (RSS)                          {summary(rss, 'MB', 1 / 2**20)}")
        print(f"  client process unique (USS)                            {summary(uss, 'MB', 1 / 2**20)}")
        print(
            f"  server growth with {sessions} sessions open: {(server_after - server_before) / 2**20:.1f} MB "
            f"({(server_after - server_before) / 2**10 / max(1, sessions):.0f} kB per session)"
        )
        for conn, _process in opened:
            conn.close()
    finally:
        server.terminate()
        server.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=10)
    asyncio.run(main(parser.parse_args().sessions))
