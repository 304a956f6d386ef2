"""Timing profiles: the spec's durations by default, shorter ones for tests, overrides from TOML."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from quatro_shared.profiles import PROFILE_NAMES, STANDARD_PROFILE

from quatro_server import timing
from quatro_server.games.quarto import engine as quarto
from quatro_server.timing import FAST, PROFILES, STANDARD, Timing, load_timing, optional_durations

ROOT = Path(__file__).resolve().parent.parent

SPEC = {
    "sign_window": 30,  # R7
    "swap_cooldown": 2,  # R9
    "channel_cooldown": 2,  # R12
    "pulse_interval": 5,  # R11
    "vote_window": 20,  # R15
    "vote_gap": 30,  # R15
    "round_length": 180,  # R18: 3 minutes
    "break_length": 30,  # R18
    "target_score": 5,  # R20
}


def test_standard_holds_the_specs_values():
    for name, value in SPEC.items():
        assert getattr(STANDARD, name) == value, name
    assert load_timing("standard") == STANDARD == Timing()


def test_fast_is_shorter_in_every_duration_and_keeps_the_target():
    assert load_timing("fast") == FAST
    fast, standard = FAST.values(), STANDARD.values()
    assert list(fast) == list(standard) and "quarto_move_clock" in standard  # the games' durations too
    for name in standard:
        if name == "target_score":
            assert FAST.target_score == STANDARD.target_score
        elif name in optional_durations():
            assert fast[name] == standard[name] == 0, f"{name} is off by default"
        else:
            assert 0 < fast[name] < standard[name], name
    assert set(PROFILES) >= {"standard", "fast"}


def test_a_toml_file_overrides_the_standard_values(tmp_path):
    path = tmp_path / "quick.toml"
    path.write_text("round_length = 90\nbreak_length = 10.5\ntarget_score = 3\n")

    timing = load_timing(str(path))

    assert (timing.round_length, timing.break_length, timing.target_score) == (90, 10.5, 3)
    assert timing.sign_window == STANDARD.sign_window and timing.vote_gap == STANDARD.vote_gap  # the rest stays


def test_unknown_keys_are_rejected(tmp_path):
    path = tmp_path / "typo.toml"
    path.write_text("round_lenght = 90\n")
    with pytest.raises(ValueError, match="round_lenght"):
        load_timing(str(path))


def test_an_unknown_profile_name_is_rejected(tmp_path):
    with pytest.raises(ValueError):
        load_timing("slow")
    with pytest.raises(ValueError):
        load_timing(str(tmp_path / "missing.toml"))


@pytest.mark.parametrize(
    "bad",
    [
        "round_length = 0\n",
        "swap_cooldown = -2\n",
        'vote_window = "20"\n',
        "sign_window = true\n",
        "target_score = 4.5\n",
    ],
)
def test_durations_must_be_positive_numbers_and_the_target_whole(tmp_path, bad):
    path = tmp_path / "bad.toml"
    path.write_text(bad)
    with pytest.raises(ValueError):
        load_timing(str(path))


def test_profiles_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        STANDARD.round_length = 1  # type: ignore[misc]


def test_every_server_offers_the_profiles_every_client_knows_by_name():
    assert tuple(PROFILES) == PROFILE_NAMES and PROFILE_NAMES[0] == STANDARD_PROFILE
    assert PROFILES[STANDARD_PROFILE] == STANDARD


# --- the durations a game adds -------------------------------------------------------------------


def test_the_timing_profile_names_no_game_and_a_game_s_duration_is_its_own():
    """Quarto's move clock is declared by Quarto's engine (``quarto.MOVE_CLOCK``), not written into the profile."""
    assert "quarto" not in (ROOT / "quatro_server" / "timing.py").read_text().lower()
    assert timing.DECLARED["quarto_move_clock"] is quarto.MOVE_CLOCK and quarto.MOVE_CLOCK.optional
    assert "quarto_move_clock" not in {f.name for f in dataclasses.fields(Timing)}


def test_a_declared_duration_is_a_key_of_every_profile_its_files_and_its_push(tmp_path, monkeypatch):
    monkeypatch.setattr(timing, "DECLARED", dict(timing.DECLARED))
    clock = timing.declare("test_clock", 4.0)
    assert timing.declare("test_clock", 4.0) == clock  # declared again: the same
    with pytest.raises(ValueError):
        timing.declare("test_clock", 5.0)
    with pytest.raises(ValueError):
        timing.declare("round_length", 5.0)  # a field's name is taken
    assert STANDARD.of(clock) == FAST.of(clock) == 4.0 and STANDARD.values()["test_clock"] == 4.0
    assert list(STANDARD.values())[-1] == "test_clock"  # after the fields and the durations declared before it

    path = tmp_path / "clocked.toml"
    path.write_text("test_clock = 2.5\nround_length = 90\n")
    loaded = load_timing(str(path))
    assert (loaded.of(clock), loaded.round_length, loaded.of(quarto.MOVE_CLOCK)) == (2.5, 90, 0)
    assert Timing.from_values(loaded.values()) == loaded  # as the journal keeps it and reads it back
    assert loaded.changed(test_clock=4.0, round_length=180) == STANDARD  # the standard values are the standard profile
    for bad in ("0", "-1", "true"):
        path.write_text(f"test_clock = {bad}\n")
        with pytest.raises(ValueError, match="test_clock"):
            load_timing(str(path))
    with pytest.raises(ValueError, match="no_clock"):
        STANDARD.changed(no_clock=3.0)
