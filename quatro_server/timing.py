"""Every duration of the rules in one place, as timing profiles (and the target score beside them).

``standard`` holds the spec's values; ``fast`` is about a tenth of them, for tests and demos.
A custom profile is a TOML file whose keys are the field names below; missing keys keep the
standard value::

    # my-timing.toml
    round_length = 90
    break_length = 10

The rules engine reads durations only from a ``Timing``; it never reads a clock.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path

from quatro_shared.profiles import FAST_PROFILE, STANDARD_PROFILE


#: Durations that may be 0, meaning "off".
OPTIONAL_DURATIONS = frozenset({"quarto_move_clock"})


@dataclass(frozen=True, slots=True)
class Timing:
    """Durations in seconds."""

    sign_window: float = 30.0  # R7: the sign phase lasts at most this long
    swap_cooldown: float = 2.0  # R9: wait after a successful swap
    channel_cooldown: float = 2.0  # R12: wait between two changes of control
    pulse_interval: float = 5.0  # R11: a held channel pulses this often, counted from the take
    pulse_shown: float = 1.0  # R11: how long clients show a pulse ("for a moment")
    vote_window: float = 20.0  # R15: voters must all agree within this
    vote_gap: float = 30.0  # R15: from the end of one vote to the start of the next
    round_length: float = 180.0  # R18: a round with no call or counter is a draw after this
    break_length: float = 30.0  # R18: the break after every round
    target_score: int = 5  # R20: the first team to reach it wins
    # --- Quarto (docs/quarto.md) ---
    quarto_move_clock: float = 0.0  # seconds for each step of a Quarto turn; 0 (the default) is no clock

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in OPTIONAL_DURATIONS and not isinstance(value, bool) and isinstance(value, (int, float)) and value == 0:
                continue  # 0 switches an optional clock off
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f"timing {f.name} must be a positive number, not {value!r}")
        if int(self.target_score) != self.target_score:
            raise ValueError(f"target_score must be a whole number, not {self.target_score!r}")


STANDARD = Timing()

#: About a tenth of the standard durations. Pulses stay on screen long enough to be seen in a demo.
FAST = Timing(
    sign_window=3.0,
    swap_cooldown=0.2,
    channel_cooldown=0.2,
    pulse_interval=0.5,
    pulse_shown=0.4,
    vote_window=2.0,
    vote_gap=3.0,
    round_length=18.0,
    break_length=3.0,
)

PROFILES: dict[str, Timing] = {STANDARD_PROFILE: STANDARD, FAST_PROFILE: FAST}


def load_timing(name_or_path: str) -> Timing:
    """A named profile (``standard``, ``fast``) or a TOML file of overrides on ``standard``."""
    if name_or_path in PROFILES:
        return PROFILES[name_or_path]
    path = Path(name_or_path)
    if not path.is_file():
        raise ValueError(f"no timing profile named {name_or_path!r} and no such file (profiles: {', '.join(PROFILES)})")
    with path.open("rb") as f:
        data = tomllib.load(f)
    known = {f.name for f in fields(Timing)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"{path}: unknown timing keys {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    return replace(STANDARD, **data)
