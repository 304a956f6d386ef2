"""The benchmarks still run: tiny sizes, figures printed, and no timing asserted (speed is for benchmarks, not tests)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _bench(script: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``benchmarks/<script>`` with ``args`` from the checkout; it must succeed."""
    result = subprocess.run(
        [sys.executable, f"benchmarks/{script}", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, result.stderr
    return result


def test_server_fanout_benchmark_runs():
    """One table at twenty times the standard pace, for half a second: every relay writer, then the real server."""
    result = _bench(
        "server_fanout.py",
        "--tables",
        "1",
        "--seconds",
        "0.5",
        "--warmup",
        "0.2",
        "--pace",
        "20",
        "--relays",
        "naive,coalesce,flusher,plain",
        timeout=90,
    )
    out = result.stdout
    targets = ("relay", "relay-coalesce", "relay-flusher", "relay-plain", "quatro")
    for target in targets:
        row = re.search(rf"^  {target} +1 +8 +(\d+) +[\d.]+% +([\d.]+) ", out, re.MULTILINE)
        assert row, f"no figures for {target}:\n{out}"
        assert int(row.group(1)) > 0, f"{target} delivered nothing:\n{out}"
    summary = re.search(
        r"1 tables: quatro [\d.]+ µs / relay [\d.]+ µs = [\d.]+x.*/ relay-plain [\d.]+ µs = [\d.]+x"
        r".*tables per core",
        out,
    )
    assert summary, out
    # Every target's tail and longest pass (the relays watch their loop as the server does).
    tails = re.search(r"p99 swap -> own update \(ms\): (.*); longest pass \(ms\): (.*)$", out, re.MULTILINE)
    assert tails, out
    for figures in tails.groups():
        assert [name for name, _ in (f.split() for f in figures.split(", "))] == ["quatro", *targets[:-1]], out
        assert all(re.fullmatch(r"[\d.]+", f.split()[1]) for f in figures.split(", ")), out


def test_server_fanout_benchmark_prints_its_figures_as_json():
    """The figures the performance goals are read from: the server beside the plain and the flusher relay, same run."""
    result = _bench(
        "server_fanout.py", "--tables", "1", "--seconds", "0.5", "--warmup", "0.2", "--pace", "20", "--json", timeout=90
    )
    report = json.loads(result.stdout)
    (row,) = report["sizes"]
    assert row["tables"] == 1 and row["deliveries_per_s"] > 0, report
    assert row["us_per_msg"] > 0 and row["relay_flusher_us_per_msg"] > 0 and row["relay_plain_us_per_msg"] > 0, report
    # The ratio comes from the unrounded figures; the two printed beside it are each rounded to 0.01 µs.
    for relay in ("flusher", "plain"):
        assert abs(row[f"ratio_to_{relay}"] - row["us_per_msg"] / row[f"relay_{relay}_us_per_msg"]) < 0.011, report
        assert row[f"relay_{relay}_p99_ms"] > 0 and row[f"relay_{relay}_longest_batch_ms"] > 0, report
    assert row["tables_per_core"] > 0 and row["p50_ms"] is not None and row["p99_ms"] >= row["p50_ms"], report
    assert row["bytes_per_seat_per_s"] > 0 and row["bytes_per_update"] > 0, report
    assert row["longest_batch_ms"] is not None and row["longest_batch_ms"] > 0, report  # the server's loop_stats
    assert row["process_us_per_msg"] >= row["us_per_msg"], report  # every thread of the server, the loop's among them
    assert re.match(r"le_1=\d+ le_2=\d+ .* longest=\[", row["passes"]), report  # the window's pass trace
    (worker,) = row["generator"]  # the lean load generator says what it cost and whether it kept up
    assert 0 < worker["cpu_share"] < 1 and worker["swaps_sent"] > 0 and worker["lag_p99_ms"] is not None, report
    assert worker["skipped_awaiting_reply"] + worker["skipped_no_view"] < worker["swaps_sent"], report
    assert "relay-flusher" in result.stderr and "relay-plain" in result.stderr  # the table still shows every target


def test_server_fanout_benchmark_alternates_rounds_and_takes_the_median_ratio():
    """With ``--rounds``, the relay and the server take turns, and the ratio is the median of the rounds' ratios."""
    result = _bench(
        "server_fanout.py",
        "--tables",
        "1",
        "--seconds",
        "0.3",
        "--warmup",
        "0.1",
        "--pace",
        "20",
        "--relays",
        "flusher",
        "--rounds",
        "3",
        "--json",
        timeout=120,
    )
    report = json.loads(result.stdout)
    (row,) = report["sizes"]
    assert report["rounds"] == 3, report
    each = row["ratio_to_flusher_rounds"]
    assert len(each) == 3 and all(r > 0 for r in each), report
    assert row["ratio_to_flusher"] == sorted(each)[1], report
    targets = re.findall(r"^  (relay-flusher|quatro) ", result.stderr, re.MULTILINE)
    assert targets == ["relay-flusher", "quatro"] * 3, result.stderr  # alternating, not one target's runs in a row


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="--pin needs two cores")
def test_server_fanout_benchmark_pins_the_target_to_one_core_and_the_load_to_the_others():
    """``--pin``: one core's figures, the load never on it (the benchmark checks the target's placement as it starts)."""
    result = _bench(
        "server_fanout.py",
        "--tables",
        "1",
        "--seconds",
        "0.3",
        "--warmup",
        "0.1",
        "--pace",
        "20",
        "--relays",
        "plain",
        "--pin",
        "--json",
        timeout=90,
    )
    report = json.loads(result.stdout)
    assert len(report["target_cores"]) == 1 and report["load_cores"], report
    assert not set(report["target_cores"]) & set(report["load_cores"]), report
    assert report["sizes"][0]["relay_plain_us_per_msg"] > 0 and report["sizes"][0]["us_per_msg"] > 0, report
    refused = subprocess.run(
        [sys.executable, "benchmarks/server_fanout.py", "--pin", "--procs", "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert refused.returncode == 2 and "--pin" in refused.stderr, refused.stderr


def test_server_fanout_benchmark_measures_the_server_with_metrics_on_and_off():
    """``--metrics``: the server measured again with its endpoint on and scraped, the ratio printed."""
    result = _bench(
        "server_fanout.py",
        "--tables",
        "1",
        "--seconds",
        "0.5",
        "--warmup",
        "0.2",
        "--pace",
        "20",
        "--relays",
        "none",
        "--metrics",
        "--scrape-every",
        "0.1",
    )
    targets = re.findall(r"^  (quatro\+metrics|quatro) ", result.stdout, re.MULTILINE)
    assert targets == ["quatro", "quatro+metrics"], result.stdout
    assert re.search(r"^metrics on / off at 1 tables: x\d", result.stdout, re.MULTILINE), result.stdout


def test_server_work_benchmark_runs():
    """The in-process figure: the server's Python per message, beside the relay's for the same messages."""
    result = _bench("server_work.py", "--tables", "3", "--steps", "60", "--json")
    variants = json.loads(result.stdout)["variants"]
    assert set(variants) == {"relay", "server", "server+journal", "server+metrics"}, variants
    assert variants["server+metrics"]["scrapes"] >= 1 and variants["server+metrics"]["us_per_scrape"] > 0, variants
    # The same load: every swap's ok and updates, every pulse (the server's first pulses come in one catch-up batch).
    relay = variants["relay"]["messages"]
    assert relay > 3 * 60 * 9 and all(abs(v["messages"] - relay) < 0.05 * relay for v in variants.values()), variants
    assert all(v["us_per_msg"] > 0 for v in variants.values()) and variants["relay"]["ratio_to_relay"] == 1, variants


def test_watchers_benchmark_builds_one_frame_per_batch_for_the_whole_audience():
    """200 watchers of one busy table: the bytes built per batch are one watcher's, the bytes queued 200 times
    that, and no watcher is dropped."""
    result = _bench("watchers.py", "--watchers", "0,1,200", "--steps", "120", "--repeat", "1", "--json")
    rows = {row["watchers"]: row for row in json.loads(result.stdout)["rows"]}
    assert set(rows) == {0, 1, 200}, rows
    one, crowd = rows[1], rows[200]
    assert one["watched_batches"] == crowd["watched_batches"] > 100 and rows[0]["watched_batches"] == 0, rows
    assert one["built_bytes_per_batch"] > 50, rows
    assert crowd["built_bytes_per_batch"] == pytest.approx(one["built_bytes_per_batch"], rel=0.02), rows
    assert crowd["queued_bytes_per_batch"] == pytest.approx(200 * crowd["built_bytes_per_batch"], rel=0.02), rows
    assert all(row["dropped"] == 0 and row["us_per_batch"] > 0 for row in rows.values()), rows


def test_lobby_listing_benchmark_prints_the_lobby_s_figures_beside_the_baseline_s():
    """A small lobby: both ways of answering ``list_tables`` measured, the same list (in bytes) either way."""
    result = _bench(
        "lobby_listing.py", "--tables", "60", "--changed", "0,3", "--lists", "30", "--repeat", "1", "--json"
    )
    figures = json.loads(result.stdout)
    rows = {row["changed"]: row for row in figures["rows"]}
    assert figures["tables"] == 60 and set(rows) == {0, 3}, figures
    for row in rows.values():
        assert row["lobby_us_per_list"] > 0 and row["afresh_us_per_list"] > 0 and row["list_bytes"] > 1000, row
    assert rows[3]["lobby_us_per_push"] > 0 and rows[3]["afresh_us_per_push"] > 0, rows


def test_wire_codec_benchmark_runs():
    """Every real message is encoded and decoded by the shipped codec (and by msgspec, where it is installed), then
    the server's own codec calls are counted per delivered message."""
    result = _bench(
        "wire_codec.py", "--repeat", "1", "--seconds", "0.01", "--server-tables", "2", "--server-steps", "40"
    )
    for label in ("update, 8 players, break", "update, 4 players, swap", "lobby, 50 tables", "swap request"):
        row = re.search(rf"^{re.escape(label)} +(\d+) +([\d.]+) ", result.stdout, re.MULTILINE)
        assert row and int(row.group(1)) > 0 and float(row.group(2)) > 0, f"no figures for {label}:\n{result.stdout}"
    for call in ("updates._packb", "decode"):
        row = re.search(rf"^{re.escape(call)} +([\d.]+) +([\d.]+) ", result.stdout, re.MULTILINE)
        assert row and float(row.group(1)) > 0 and float(row.group(2)) > 0, f"no figures for {call}:\n{result.stdout}"
    assert re.search(r"the server's own Python: [\d.]+ µs per delivered message", result.stdout), result.stdout


def test_ssh_sessions_benchmark_runs():
    """One SSH session and the direct baseline: start-up and memory figures are printed."""
    result = _bench("ssh_sessions.py", "--sessions", "1", timeout=90)
    out = result.stdout
    for label in (
        "baseline: quatro join on a local pty",
        "ssh door: connect to lobby",
        "client process resident",
        "client process unique",
    ):
        assert re.search(rf"{label}.*median +[\d.]+ (ms|MB) .*\(n=\d+\)", out), f"no figures for {label}:\n{out}"
    assert re.search(r"1 SSH sessions at the lobby at once \(1 client processes\)", out), out


def test_bot_stall_benchmark_prints_each_run_as_json():
    """The bystander's round trips and the server's longest step, without bots, with inline bots, with thinking threads."""
    result = _bench("bot_stall.py", "--tables", "1", "--seconds", "0.6", "--warmup", "0.3", "--json", timeout=120)
    report = json.loads(result.stdout)
    assert [run["mode"] for run in report["runs"]] == ["idle", "inline", "thread"], report
    for run in report["runs"]:
        assert run["requests"] > 0 and run["worst_ms"] >= run["p99_ms"] >= run["p50_ms"] > 0, run
        assert run["longest_batch_ms"] > 0, run
    assert report["runs"][0]["placed"] == 0  # the baseline has no bots' tables


def test_workers_benchmark_compares_one_worker_with_two_in_one_run():
    """benchmarks/workers.py: one table on one worker and on two, a moment each; both capacities and their ratio,
    the load generator's CPU and the load average are printed."""
    result = _bench(
        "workers.py", "--tables", "1", "--seconds", "0.3", "--warmup", "0.1", "--procs", "1", "--json", timeout=120
    )
    report = json.loads(result.stdout)
    assert set(report["capacity"]) == {"1", "2"}
    assert {run["workers"] for run in report["runs"]} == {1, 2}
    for run in report["runs"]:
        assert run["swaps"] > 0 and run["generator_cpu"] > 0 and len(run["worker_cpu"]) == run["workers"]
    assert "load average during the runs" in result.stderr and "1 worker" in result.stderr


def test_directory_benchmark_prints_its_figures_as_json(redis_server):
    """A few lobby changes and hand-overs between two servers sharing a directory (its own redis-server; the
    fixture only makes a missing one fail in CI), and one server without, for the difference."""
    result = _bench("directory.py", "--changes", "10", "--handovers", "4", "--json", timeout=120)
    figures = json.loads(result.stdout)
    assert figures["with_directory"]["push_p50_ms"] > 0
    assert figures["join_moved_p50_ms"] > 0 and figures["join_direct_p50_ms"] > 0
    assert {"directory_ms_per_change", "handover_ms"} <= set(figures)
