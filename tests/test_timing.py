"""Timing profiles: the spec's durations by default, shorter ones for tests, overrides from TOML."""

from __future__ import annotations

import dataclasses

import pytest

from quatro_shared.profiles import PROFILE_NAMES, STANDARD_PROFILE

from quatro_server.timing import FAST, OPTIONAL_DURATIONS, PROFILES, STANDARD, Timing, load_timing

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
    for f in dataclasses.fields(Timing):
        if f.name == "target_score":
            assert FAST.target_score == STANDARD.target_score
        elif f.name in OPTIONAL_DURATIONS:
            assert getattr(FAST, f.name) == getattr(STANDARD, f.name) == 0, f"{f.name} is off by default"
        else:
            assert 0 < getattr(FAST, f.name) < getattr(STANDARD, f.name), f.name
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
    ["round_length = 0\n", "swap_cooldown = -2\n", 'vote_window = "20"\n', "sign_window = true\n", "target_score = 4.5\n"],
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
