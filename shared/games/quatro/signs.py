"""The 24 emojis used for team signs and channel pulses (R5), each with its ASCII name.

A sign travels on the wire by its ASCII name (``"pineapple"``); clients draw the emoji, or the name
where the terminal cannot show emoji.
"""

from __future__ import annotations

#: (ASCII name, emoji) in the order of the rules (R5). Every emoji is one code point, two cells wide.
SIGN_TABLE: tuple[tuple[str, str], ...] = (
    ("pineapple", "🍍"),
    ("rocket", "🚀"),
    ("turtle", "🐢"),
    ("fox", "🦊"),
    ("octopus", "🐙"),
    ("cactus", "🌵"),
    ("mushroom", "🍄"),
    ("guitar", "🎸"),
    ("moon", "🌙"),
    ("fire", "🔥"),
    ("watermelon", "🍉"),
    ("bee", "🐝"),
    ("tophat", "🎩"),
    ("crab", "🦀"),
    ("doughnut", "🍩"),
    ("sunflower", "🌻"),
    ("penguin", "🐧"),
    ("balloon", "🎈"),
    ("cherries", "🍒"),
    ("owl", "🦉"),
    ("whale", "🐳"),
    ("die", "🎲"),
    ("rainbow", "🌈"),
    ("clover", "🍀"),
)

Sign = str

SIGNS: tuple[Sign, ...] = tuple(name for name, _ in SIGN_TABLE)
EMOJI: dict[Sign, str] = dict(SIGN_TABLE)
SIGN_SET: frozenset[Sign] = frozenset(SIGNS)


def is_sign(value: object) -> bool:
    return isinstance(value, str) and value in SIGN_SET


def display(sign: Sign, ascii_only: bool = False) -> str:
    """The emoji, or its ASCII name for terminals without emoji."""
    return sign if ascii_only else EMOJI[sign]
