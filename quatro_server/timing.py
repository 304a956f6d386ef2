"""Every duration of the rules in one place, as timing profiles (and the target score beside them).

``standard`` holds the spec's values; ``fast`` is about a tenth of them, for tests and demos; ``lesson`` is the guided
first match's (``quatro learn``, ``quatro_server.games.quatro.lesson``): slow enough to read the coach between two moves.
A custom profile is a TOML file whose keys are the field names below, and the durations a game adds; missing keys
keep the standard value::

    # my-timing.toml
    round_length = 90
    break_length = 10

The fields of ``Timing`` are the durations every table's profile has. A game whose rules need more declares them
in its own module (``declare``): each is a key of the TOML file and of the ``table`` push like the fields, with the
standard value until a profile sets another. The rules engine reads durations only from a ``Timing``; it never
reads a clock.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from quatro_shared.profiles import FAST_PROFILE, STANDARD_PROFILE


@dataclass(frozen=True, slots=True)
class Duration:
    """A duration a game adds to every timing profile: its key (in a TOML file, in the ``table`` push), its
    standard value, and whether 0 is allowed (it switches the duration off)."""

    name: str
    standard: float
    optional: bool = False

    def check(self, value: object) -> None:
        """Raises ``ValueError`` unless ``value`` is a positive number (or 0, for an optional duration)."""
        _check(self.name, value, self.optional)


#: The durations games added (``declare``), by name, in the order they were declared.
DECLARED: dict[str, Duration] = {}


def declare(name: str, standard: float, *, optional: bool = False) -> Duration:
    """Add a duration to every timing profile (a game's, from its own module). Declaring the same one again gives
    it back; another duration under a name taken is a ``ValueError``."""
    duration = Duration(name, standard, optional)
    duration.check(standard)
    taken = DECLARED.get(name)
    if taken is not None and taken != duration or name in _FIELD_NAMES:
        raise ValueError(f"timing {name!r} is declared already")
    DECLARED[name] = duration
    return duration


def optional_durations() -> frozenset[str]:
    """The durations that may be 0, meaning "off"."""
    return frozenset(name for name, duration in DECLARED.items() if duration.optional)


def _check(name: str, value: object, optional: bool) -> None:
    if optional and not isinstance(value, bool) and isinstance(value, (int, float)) and value == 0:
        return  # 0 switches an optional duration off
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"timing {name} must be a positive number, not {value!r}")


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
    #: The durations games declared (``declare``) that this profile sets to other than their standard value, as
    #: (name, value) pairs in name order: ``of`` reads them, ``changed`` sets them.
    added: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.name != "added":
                _check(f.name, getattr(self, f.name), optional=False)
        if int(self.target_score) != self.target_score:
            raise ValueError(f"target_score must be a whole number, not {self.target_score!r}")
        for name, value in self.added:
            duration = DECLARED.get(name)
            if duration is None:
                raise ValueError(f"no timing {name!r} (known: {', '.join(sorted(known_names()))})")
            duration.check(value)

    def of(self, duration: Duration) -> float:
        """The value of a duration a game declared: this profile's, or its standard one."""
        for name, value in self.added:
            if name == duration.name:
                return value
        return duration.standard

    def changed(self, **values: float) -> Timing:
        """This profile with ``values`` (fields and declared durations, by name) in place of its own. Raises
        ``ValueError`` for a name that is neither, or a value out of range."""
        unknown = sorted(set(values) - known_names())
        if unknown:
            raise ValueError(f"unknown timing keys {', '.join(unknown)} (known: {', '.join(sorted(known_names()))})")
        # The fields' own types (seconds, and the target score's whole number), which ``check`` has not yet held
        # them to: ``__post_init__`` does, once ``replace`` builds the profile.
        own: dict[str, Any] = {name: value for name, value in values.items() if name in _FIELD_NAMES}
        added = dict(self.added)
        for name, value in values.items():
            if name not in _FIELD_NAMES:
                DECLARED[name].check(value)
                added[name] = value
        kept = tuple(sorted((name, value) for name, value in added.items() if value != DECLARED[name].standard))
        return replace(self, **own, added=kept)

    def values(self) -> dict[str, float]:
        """Every duration of the profile by name, the fields first, then every declared one in the order of
        declaration: the ``table`` push's ``timing``, and what the journal keeps of a table's profile."""
        out: dict[str, float] = {name: getattr(self, name) for name in _FIELD_NAMES}
        out.update((name, self.of(duration)) for name, duration in DECLARED.items())
        return out

    @classmethod
    def from_values(cls, values: Mapping[str, float]) -> Timing:
        """The profile ``values`` gives (as ``values`` writes it; a missing key keeps the standard value)."""
        return STANDARD.changed(**values)


_FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Timing) if f.name != "added")


def known_names() -> frozenset[str]:
    """Every key a profile has: the fields and the declared durations."""
    return frozenset(_FIELD_NAMES) | frozenset(DECLARED)


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

#: The guided first match's profile (``quatro-server --lesson --timing lesson``): a server offers it only when started
#: with it, as any profile given on its command line.
LESSON_PROFILE = "lesson"
#: A newcomer reads the coach, then the table, before each move: pulses slow enough to be read and answered, a sign
#: window and a round long enough never to run out on someone still reading, and a match that never ends before the
#: lesson does (R20's target well above its scenes). The break ends when the learner (the host) says (R18).
LESSON = Timing(
    sign_window=120.0,
    swap_cooldown=1.0,
    channel_cooldown=1.0,
    pulse_interval=3.0,
    pulse_shown=2.0,
    round_length=600.0,
    break_length=120.0,
    target_score=9,
)


def load_timing(name_or_path: str) -> Timing:
    """A named profile (``standard``, ``fast``, ``lesson``) or a TOML file of overrides on ``standard``."""
    if name_or_path in PROFILES:
        return PROFILES[name_or_path]
    if name_or_path == LESSON_PROFILE:
        return LESSON
    path = Path(name_or_path)
    if not path.is_file():
        raise ValueError(f"no timing profile named {name_or_path!r} and no such file (profiles: {', '.join(PROFILES)})")
    with path.open("rb") as f:
        data = tomllib.load(f)
    try:
        return STANDARD.changed(**data)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
