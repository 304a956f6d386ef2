"""``quatro-server soak``: a short run holds (no crash, leak, hijack or lost point), and its audit can fail."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest
import trio

from quatro_shared import protocol as p
from quatro_shared.games.quatro.legal import legal
from quatro_shared.games.quatro.views import Phase

from helpers.engine import new_table, random_play
from quatro_server.games.quatro.engine import view as engine_view
from quatro_server.tools import soak, soak_directory, soak_doors
from quatro_server.tools.audit import frame_leaks, update_leaks
from quatro_server.tools.soak import soak_server
from quatro_server.workers import metrics


def _view(**fields: object) -> dict:
    view = {
        "kind": "view",
        "seat": 0,
        "team": 0,
        "hand": ["AS", "KS", "QS", "JS"],
        "center": ["AH", "KH", "QH", "JH"],
        "sign": "fox",
        "channel_sign": None,
        "seats": [{"seat": i, "last_pulse": None} for i in range(4)],
        "summary": None,
    }
    view.update(fields)
    return view


def _update() -> dict:
    """An update that is not a snapshot (protocol 3): events and the table's countdowns, no view."""
    clock = {"phase_ms": 1000, "next_pulse_ms": [0, 0, 0, 0], "last_pulse_ms": [0, 0, 0, 0]}
    return {
        "kind": p.UPDATE,
        "table": 1,
        "seq": 2,
        "snapshot": False,
        "at": 5000,
        "events": [{"kind": "player_ready", "seat": 0}],
        "clock": clock,
    }


def test_the_audit_passes_a_clean_update_and_catches_each_kind_of_leak():
    known = _view()  # the seat's view as its client built it
    clean = _update()
    assert update_leaks(clean, 0, 0, known=known) == []
    assert frame_leaks(clean, 0, 0, known=known) == []
    snapshot = {"kind": p.UPDATE, "table": 1, "seq": 1, "snapshot": True, "at": 4000, "events": [], "view": _view()}
    assert update_leaks(snapshot, 0, 0) == []  # a snapshot carries its own view, and may carry no event
    assert update_leaks(clean, 0, 0) == ["an update that is not a snapshot before any snapshot"]
    assert update_leaks({**clean, "view": _view()}, 0, 0, known=known)  # a full view only in a snapshot
    assert update_leaks(snapshot, 1, 1)  # another seat's view
    hidden_hand = {**snapshot, "view": _view(seats=[{"seat": 1, "hand": ["AC"]}])}
    assert "card AC" in update_leaks(hidden_hand, 0, 0)
    other_card = _update()
    other_card["events"] = [
        {"kind": "swapped", "seat": 1, "slot": 0, "put_down": "AD", "taken": "AH"},
        {"kind": "hand_dealt", "seat": 1, "hand": ["AC", "KC", "QC", "JC"]},
    ]
    found = update_leaks(other_card, 0, 0, known=known)
    assert "hand_dealt of seat 1" in found and "card AC" in found and "card AD" not in found
    other_sign = _update()
    other_sign["events"] = [{"kind": "sign_chosen", "team": 1, "sign": "owl", "seat": 1}]
    assert {"sign_chosen of team 1", "sign owl"} <= set(update_leaks(other_sign, 0, 0, known=known))
    pulse = _update()
    pulse["events"] = [{"kind": "pulse", "seat": 1, "sign": "owl"}]
    assert update_leaks(pulse, 0, 0, known=known) == []  # a pulse shows its emoji to everyone (R11)
    empty = _update()
    empty["events"] = []
    assert update_leaks(empty, 0, 0, known=known)  # an empty update tells when something private happened (H3)
    seating = {"kind": p.TABLE, "table": 1, "seats": [{"seat": 0, "name": "QH", "bot": None}], "secret": "s"}
    assert frame_leaks(seating, None, None) == [
        "private keys ['secret'] in a table frame"
    ]  # a name may look like a card
    lobby = {"kind": p.LOBBY, "tables": [{"table": 1, "hint": "KS"}]}
    assert frame_leaks(lobby, None, None) == ["'KS' in a lobby frame"]
    reply = {"kind": p.OK, "id": 3, "table": 1, "seat": 2, "secret": "mine"}
    assert frame_leaks(reply, 2, 0, own_secret="mine", secrets={"mine", "theirs"}) == []
    stolen = {"kind": p.OK, "id": 3, "table": 1, "seat": 2, "secret": "theirs"}
    assert "another seat's secret" in frame_leaks(stolen, 2, 0, own_secret="mine", secrets={"mine", "theirs"})
    # A rejoiner's look back (protocol 7): its own hand and team's sign, the table's swaps and pulses; nothing else's.
    own = [
        {"kind": "hand_dealt", "seat": 1, "hand": ["KS", "KH", "QS", "JD"]},
        {"kind": "sign_chosen", "team": 1, "sign": "rocket", "seat": 3},
        {"kind": "swapped", "seat": 0, "slot": 1, "put_down": "AS", "taken": "JH"},
        {"kind": "pulse", "seat": 2, "sign": "turtle"},
    ]
    recent = {"kind": p.RECENT, "table": 1, "game": "quatro", "events": own}
    assert frame_leaks(recent, 1, 1) == []
    theirs = {
        **recent,
        "events": [
            *own,
            {"kind": "hand_dealt", "seat": 0, "hand": ["AD", "AH", "10S", "10H"]},
            {"kind": "emoji_chosen", "seat": 2, "sign": "fox"},
        ],
    }
    assert frame_leaks(theirs, 1, 1) == ["hand_dealt of seat 0", "emoji_chosen of seat 2"]
    assert frame_leaks(recent, 1, 0) == ["sign_chosen of team 1"]  # another team's sign
    assert frame_leaks(recent, None, None) == ["a recent frame to a connection with no seat"]


async def test_a_short_soak_holds_and_exercises_every_scenario(monkeypatch):
    monkeypatch.setattr(soak, "CRASH_EVERY", 6.0)  # a kill -9 and restart within the short soak
    report = await soak_server(15.0, seed=7)
    assert report["crashes"] == 0, report["server_errors"]
    assert report["leaks"] == 0, report["leak_samples"]
    assert report["hijacks"] == 0 and report["points_lost"] == 0 and report["secrets_lost"] == 0, report
    counts = report["counts"]
    for done in (
        "junk_sent",
        "floods_cut",
        "watchers_held",
        "churn_too_many_tables",
        "idle_refused",
        "guess_rate_limited",
        "hijack_attempts",
        "silent_opened",
        "slow_seats",
        "honest_tables",
        "server_killed",
        "crash_rejoins",
    ):
        assert counts.get(done, 0) > 0, (done, counts)
    assert counts.get("floods_not_cut", 0) == 0 and counts.get("silent_kept_too_long", 0) == 0, counts
    assert counts.get("updates_out_of_step", 0) == 0, counts  # every player's state built from the updates (protocol 3)
    assert report["bystander_actions"] > 50 and report["bystander_p99_ms"] is not None
    assert 0 < report["peak_rss_mib"] < 200


def test_the_soak_command_is_wired():
    result = subprocess.run([sys.executable, "-m", "quatro_server", "soak", "--help"], capture_output=True, text=True)
    assert (
        result.returncode == 0
        and "--minutes" in result.stdout
        and "--json" in result.stdout
        and "--no-doors" in result.stdout
        and "--no-directory" in result.stdout
    )


def test_the_honest_players_play_only_what_legal_offers():
    """The soak's honest players draw their moves from ``legal``: a refusal they get is the server's doing (a card
    another player took first, R10), never their own mistake, and they play in every phase."""
    rng = random.Random(8)
    played: dict[Phase, int] = {}
    table = new_table(4, seed=8)
    for now, _ in random_play(table, rng, steps=1500):
        for seat in range(4):
            view = engine_view(table, seat, now)
            action = soak._action(view, rng)
            if action is not None:
                assert action in legal(view), (view.phase, action)
                played[view.phase] = played.get(view.phase, 0) + 1
    assert played.get(Phase.SIGNING) and played.get(Phase.ROUND) and played.get(Phase.BREAK), played


async def test_the_door_scenarios_report_their_figures_and_pass():
    """A few of the doors' scenarios (the cheap ones) against a server with both doors, the game port's hellos
    timed beside them: each reported with its figures and passing."""
    chosen = {
        name: soak_doors.DOOR_SCENARIOS[name] for name in ("web_junk_http", "web_forged_cookies", "web_foreign_origins")
    }
    report = await soak_doors.soak_doors(soak.ServerProcess, chosen)
    assert report["passed"] and report["crashes"] == 0, report
    scenarios = report["scenarios"]
    assert set(scenarios) == {*chosen, "game_port_hellos"}
    assert scenarios["web_junk_http"]["requests"] == soak_doors.JUNK_REQUESTS
    assert scenarios["web_junk_http"]["log_bytes"] < soak_doors.LOG_BOUND
    assert scenarios["game_port_hellos"]["answered"] > 0


async def test_the_descriptor_starvation_holds_the_game_port():
    report = await soak_doors.soak_descriptors(soak.ServerProcess)
    starved = report["scenarios"]["descriptor_starvation"]
    assert report["passed"] and starved["passed"], report
    assert starved["nofile"] == soak_doors.STARVED_NOFILE and starved["handshakes_refused"] > 0


def test_a_door_scenario_that_did_not_pass_fails_the_soak():
    clean = {"crashes": 0, "leaks": 0, "hijacks": 0, "points_lost": 0, "secrets_lost": 0}
    assert not soak.failed(clean)
    assert not soak.failed({**clean, "doors": {"passed": True}, "descriptors": {"passed": True}})
    assert soak.failed({**clean, "doors": {"passed": False}, "descriptors": {"passed": True}})
    assert soak.failed({**clean, "doors": {"passed": True}, "descriptors": {"passed": False}})


@pytest.mark.slow
async def test_the_directory_scenarios_report_their_figures_and_pass(redis_server):
    """Two servers sharing a real redis-server: Redis stopped, killed and restarted empty, and a forged record;
    each scenario reported with its figures, and the zeros counted."""
    report = await soak_directory.soak_directory(soak.ServerProcess)
    assert report["passed"] and report["crashes"] == 0, report
    assert report["secrets_leaked"] == 0 and report["id_collisions"] == 0 and report["journal_writes_lost"] == 0
    scenarios = report["scenarios"]
    assert set(scenarios) == {"redis_stalled", "redis_restarted", "forged_record"}
    stalled = scenarios["redis_stalled"]
    for server in ("server_0", "server_1"):
        assert stalled[server]["pings"] > 0 and stalled[server]["creates"] > 0, stalled
        assert stalled[server]["p99_ms"] < stalled["ping_p99_bound_ms"], stalled
    restarted = scenarios["redis_restarted"]
    assert all(len(tables) == soak_directory.NEW_TABLES for tables in restarted["new_tables"].values()), restarted
    forged = scenarios["forged_record"]
    assert forged["sent_to_forger"] > 0 and forged["secrets_leaked"] == 0 and forged["passwords_leaked"] == 0
    assert set(forged["forger_received"]) <= {p.HELLO, p.PROVE}, forged


async def test_the_metrics_flood_reports_its_figures_and_passes():
    report = await soak_directory.soak_metrics(soak.ServerProcess)
    flood = report["scenarios"]["metrics_flood"]
    assert report["passed"] and flood["passed"] and report["tracebacks"] == 0, report
    assert flood["one_address"]["connections"] > metrics.MAX_CONNECTIONS_PER_ADDRESS
    assert flood["many_addresses"]["connections"] > metrics.MAX_CONNECTIONS
    assert flood["descriptors_grew"] <= flood["descriptor_bound"]


def test_the_directory_and_metrics_reports_fail_the_soak_and_a_missing_redis_is_said(monkeypatch):
    clean = {"crashes": 0, "leaks": 0, "hijacks": 0, "points_lost": 0, "secrets_lost": 0}
    assert soak.failed({**clean, "directory": {"passed": False}})
    assert soak.failed({**clean, "metrics": {"passed": False}})
    monkeypatch.setattr(soak_directory, "available", lambda: False)
    report = trio.run(soak.soak_everything, 1.0, 3, False, True, False)
    assert report["directory"] == {"passed": True, "skipped": "redis-server is not on PATH"}
