"""Conversion between the shared dataclasses (actions, events, views) and plain msgpack-ready dicts.

Going out, ``to_wire(obj)`` gives ``{"kind": obj.kind, **fields}`` with tuples as lists and enums as
their string values; a ``SeatView`` gets ``"kind": "view"`` so it can be framed as it is. Coming in,
``action_from_wire``, ``event_from_wire`` and ``view_from_wire`` rebuild the dataclasses and are the one
place where a peer's message is checked field by field: anything that does not fit raises
``WireError`` with a stable ``code`` and a message naming the field.

Nothing is listed twice: the fields and their types are read from the dataclasses themselves (their
annotations, such as ``Card``, ``Sign | None`` or ``tuple[int, ...]``), so a new action or event, or a
new field, is checked as soon as it is declared. A type this module does not know fails at import.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from enum import Enum
from typing import Any

from quatro_shared import actions, events
from quatro_shared.actions import PLAYER_ACTIONS, Action, Reason
from quatro_shared.cards import is_card
from quatro_shared.events import Event
from quatro_shared.signs import is_sign
from quatro_shared.views import Phase, RoundSummary, SeatState, SeatView, VoteState

#: The ``kind`` of a framed view. Views carry no ``kind`` of their own.
VIEW_KIND = "view"

#: Actions that only the server may issue for a seat (R19). A peer sending one is refused like an unknown kind.
SERVER_ONLY_ACTIONS: tuple[type[Action], ...] = (actions.Connect, actions.Disconnect)

#: Longest rendering of a bad value quoted in an error message: enough to recognise it, never a flood.
_QUOTE_CHARS = 40


class WireError(Exception):
    """A message that does not fit its kind. ``code`` is stable and machine-readable:

    ``not_a_map``, ``unknown_kind``, ``missing_field``, ``extra_field``, ``bad_field``. ``field`` names
    the offending field (a path such as ``seats[2].team`` inside a view), where there is one.
    """

    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.field = field

    @property
    def reason(self) -> Reason:
        """The refusal to answer a bad action with: the protocol's errors are values (``refused: bad_argument``)."""
        return Reason.UNKNOWN_ACTION if self.code == "unknown_kind" else Reason.BAD_ARGUMENT


# --- outbound ------------------------------------------------------------------------------------------


def to_wire(obj: object) -> dict[str, Any]:
    """An action, event or view (or any dataclass of the shared vocabulary) as a dict of msgpack-ready values."""
    plan = _PLANS.get(type(obj))
    if plan is None:
        if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
            raise TypeError(f"to_wire takes a shared dataclass, not {type(obj).__name__}")
        plan = _PLANS[type(obj)] = _plan(type(obj))
    kind, fields = plan
    out: dict[str, Any] = {"kind": kind} if kind is not None else {}
    for name, encode in fields:
        value = getattr(obj, name)
        out[name] = value if encode is None or value is None else encode(value)
    return out


#: ``encode(value)`` returns the plain form of a value that is not None.
Encoder = Callable[[Any], Any]

#: The outbound form of each class, worked out once from its annotations: its kind, and for each field
#: how to turn its value into plain msgpack values (None where the value already is one). The server
#: encodes every event and view it sends, so this path is kept free of per-value type tests.
_PLANS: dict[type, tuple[str | None, tuple[tuple[str, Encoder | None], ...]]] = {}


def _plan(cls: type) -> tuple[str | None, tuple[tuple[str, Encoder | None], ...]]:
    kind = VIEW_KIND if cls is SeatView else getattr(cls, "kind", None)
    where = cls.__name__
    return kind, tuple((f.name, _encoder(_parse(f.type, f"{where}.{f.name}"))) for f in dataclasses.fields(cls))


def _encoder(spec: _Spec) -> Encoder | None:
    shape, inner = spec
    if shape == "optional":
        return _encoder(inner)  # None is caught before any encoder runs
    if shape == "tuple":
        item = _encoder(inner)
        if item is None:
            return list
        return lambda value: [None if x is None else item(x) for x in value]
    if isinstance(inner, type) and issubclass(inner, Enum):
        return _enum_value
    if inner in _NESTED:
        return to_wire
    return None


def _enum_value(member: Enum) -> Any:
    return member.value


# --- inbound: one checking converter per annotation -------------------------------------------------------

#: ``convert(value)`` returns the value in its Python form, or raises ``_Refused``.
Converter = Callable[[Any], Any]


class _Refused(Exception):
    """A value that does not fit, on its way out of the nested converters. Each container it passes
    adds its key to ``path`` (innermost first), so that field paths cost nothing unless something is wrong."""

    def __init__(self, code: str, text: str) -> None:
        self.code = code
        self.text = text
        self.path: list[str] = []

    def at(self, step: str) -> _Refused:
        self.path.append(step)
        return self

    def to_error(self) -> WireError:
        field = "".join(reversed(self.path)).lstrip(".")
        return WireError(self.code, f"{field}: {self.text}" if field else self.text, field or None)


def quote(value: Any) -> str:
    """A peer's value, shown in an error message: bounded, so that an answer never outgrows the codec's limits."""
    text = repr(value)
    return text if len(text) <= _QUOTE_CHARS else text[: _QUOTE_CHARS - 3] + "..."


class _Check:
    """A converter for a value kept as it is once ``test`` accepts it (ints, strings, cards, signs...).

    Arrays of these are checked in one pass (``_tuple_of``), which is most of a view."""

    __slots__ = ("test", "expected")

    def __init__(self, test: Callable[[Any], bool], expected: str) -> None:
        self.test = test
        self.expected = expected

    def __call__(self, value: Any) -> Any:
        if self.test(value):
            return value
        raise _Refused("bad_field", f"expected {self.expected}, got {quote(value)}")


def _is_int(value: Any) -> bool:
    return type(value) is int  # bool is an int to Python, never to the protocol: True is not seat 1


def _to_float(value: Any) -> float:
    # Peers in other languages may send 2 for 2.0.
    if type(value) in (int, float):
        return float(value)
    raise _Refused("bad_field", f"expected a number, got {quote(value)}")


def _enum(enum: type[Enum]) -> Converter:
    members = {member.value: member for member in enum}
    expected = f"one of {', '.join(map(str, members))}"

    def convert(value: Any) -> Enum:
        member = members.get(value) if type(value) is str else None
        if member is None:
            raise _Refused("bad_field", f"expected {expected}, got {quote(value)}")
        return member

    return convert


def _optional(inner: Converter) -> Converter:
    if isinstance(inner, _Check):
        test = inner.test
        return _Check(lambda value: value is None or test(value), f"{inner.expected} or nil")

    def convert(value: Any) -> Any:
        return None if value is None else inner(value)

    return convert


def _tuple_of(inner: Converter) -> Converter:
    test = inner.test if isinstance(inner, _Check) else None

    def convert(value: Any) -> tuple[Any, ...]:
        if type(value) not in (list, tuple):
            raise _Refused("bad_field", f"expected an array, got {quote(value)}")
        if test is not None and all(map(test, value)):
            return tuple(value)
        # Items that need rebuilding, or a bad item somewhere: one by one, to name the first bad index.
        out = []
        for i, item in enumerate(value):
            try:
                out.append(inner(item))
            except _Refused as refused:
                raise refused.at(f"[{i}]") from None
        return tuple(out)

    return convert


class _Schema:
    """How to check and rebuild one dataclass from a dict: its fields, each with its converter."""

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self.fields: tuple[tuple[str, Converter, bool], ...] = tuple(
            (f.name, _converter(_parse(f.type, f"{cls.__name__}.{f.name}")), _has_default(f))
            for f in dataclasses.fields(cls)
        )
        self.names = frozenset(name for name, _, _ in self.fields)
        kind = getattr(cls, "kind", None)
        self.described = f'"{kind}"' if kind else cls.__name__

    def build(self, data: Any, top: bool = False) -> Any:
        """The dataclass from ``data``; a top-level message may also hold its ``"kind"``."""
        if type(data) is not dict:
            raise _Refused("not_a_map" if top else "bad_field", f"expected a map, got {quote(data)}")
        for key in data:
            if key not in self.names and not (top and key == "kind"):
                name = key if type(key) is str and len(key) <= _QUOTE_CHARS else quote(key)
                raise _Refused("extra_field", f"not a field of {self.described}").at(f".{name}")
        values = {}
        for name, convert, optional in self.fields:
            if name in data:
                try:
                    values[name] = convert(data[name])
                except _Refused as refused:
                    raise refused.at(f".{name}") from None
            elif not optional:  # a field with a default (Counter.team) may be left out, as in Python
                raise _Refused("missing_field", f"required by {self.described}").at(f".{name}")
        return self.cls(**values)

    def build_message(self, data: Any) -> Any:
        try:
            return self.build(data, top=True)
        except _Refused as refused:
            raise refused.to_error() from None


def _has_default(f: dataclasses.Field[Any]) -> bool:
    return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING


# --- annotations ---------------------------------------------------------------------------------------

#: The names a shared annotation may use. Card and Sign are both ``str`` to Python, which is why the
#: annotation text is read rather than the resolved types.
_BASE: dict[str, Any] = {
    "int": int,
    "bool": bool,
    "str": str,
    "float": float,
    "Card": "Card",
    "Sign": "Sign",
    "Phase": Phase,
    "Reason": Reason,
    "SeatState": SeatState,
    "VoteState": VoteState,
    "RoundSummary": RoundSummary,
}
_NESTED = (SeatState, VoteState, RoundSummary)

#: A parsed annotation: ("optional", spec), ("tuple", spec) or ("base", what ``_BASE`` maps the name to).
_Spec = tuple[str, Any]


def _parse(annotation: object, where: str) -> _Spec:
    """An annotation string: a base name, ``X | None`` or ``tuple[X, ...]``, nested at will."""
    if not isinstance(annotation, str):  # the shared modules use postponed annotations, so these are strings
        raise TypeError(f"{where}: annotation {annotation!r} is not a string")
    text = annotation.strip()
    if text.endswith("| None"):
        return ("optional", _parse(text[: -len("| None")], where))
    if text.startswith("tuple[") and text.endswith(", ...]"):
        return ("tuple", _parse(text[len("tuple[") : -len(", ...]")], where))
    if text in _BASE:
        return ("base", _BASE[text])
    raise TypeError(f"{where}: quatro_shared.wire does not know the type {annotation!r}; add it to _BASE")


_BASE_CONVERTERS: dict[Any, Callable[[], Converter]] = {
    int: lambda: _Check(_is_int, "an integer"),
    bool: lambda: _Check(lambda v: type(v) is bool, "true or false"),
    str: lambda: _Check(lambda v: type(v) is str, "a string"),
    float: lambda: _to_float,
    "Card": lambda: _Check(is_card, 'a card such as "QH"'),
    "Sign": lambda: _Check(is_sign, 'a sign such as "pineapple"'),
}


def _converter(spec: _Spec) -> Converter:
    shape, inner = spec
    if shape == "optional":
        return _optional(_converter(inner))
    if shape == "tuple":
        return _tuple_of(_converter(inner))
    if isinstance(inner, type) and issubclass(inner, Enum):
        return _enum(inner)
    if inner in _NESTED:
        return _Schema(inner).build
    return _BASE_CONVERTERS[inner]()


def _by_kind(classes: tuple[type[Any], ...], family: str) -> dict[str, _Schema]:
    table: dict[str, _Schema] = {}
    for cls in classes:
        if cls.kind in table:
            raise TypeError(f"two {family} share the kind {cls.kind!r}")
        table[cls.kind] = _Schema(cls)
    return table


def _event_classes() -> tuple[type[Event], ...]:
    """Every event declared in quatro_shared.events, in declaration order."""
    return tuple(
        obj
        for obj in vars(events).values()
        if isinstance(obj, type) and issubclass(obj, Event) and obj is not Event and obj.__module__ == events.__name__
    )


_ACTIONS = _by_kind(PLAYER_ACTIONS, "actions")
_SERVER_ONLY_KINDS = frozenset(cls.kind for cls in SERVER_ONLY_ACTIONS)
_EVENTS = _by_kind(_event_classes(), "events")
_VIEW = _Schema(SeatView)

#: The kinds a peer may send, and the kinds a server sends as events.
ACTION_KINDS: frozenset[str] = frozenset(_ACTIONS)
EVENT_KINDS: frozenset[str] = frozenset(_EVENTS)


def _schema_for(data: Any, table: dict[str, _Schema], family: str) -> _Schema:
    if not isinstance(data, dict):
        raise WireError("not_a_map", f"a message is a map, not {type(data).__name__}")
    if "kind" not in data:
        raise WireError("missing_field", "kind: every message names its kind", "kind")
    kind = data["kind"]
    schema = table.get(kind) if isinstance(kind, str) else None
    if schema is None:
        raise WireError("unknown_kind", f"kind: {quote(kind)} is not {family}", "kind")
    return schema


# --- inbound ---------------------------------------------------------------------------------------


def action_from_wire(data: Any) -> Action:
    """A player's action from a peer's message, checked field by field. Raises ``WireError``.

    Only ``PLAYER_ACTIONS`` are accepted: ``connect`` and ``disconnect`` come from the server alone (R19).
    """
    kind = data.get("kind") if isinstance(data, dict) else None
    if type(kind) is str and kind in _SERVER_ONLY_KINDS:
        raise WireError("unknown_kind", f"kind: {kind!r} is issued by the server only, never by a player", "kind")
    action: Action = _schema_for(data, _ACTIONS, "a player action").build_message(data)
    return action


def event_from_wire(data: Any) -> Event:
    """An event from the server's message, rebuilt as its dataclass. Raises ``WireError``."""
    event: Event = _schema_for(data, _EVENTS, "an event").build_message(data)
    return event


def view_from_wire(data: Any) -> SeatView:
    """A seat's view from the server's message (with or without ``"kind": "view"``). Raises ``WireError``."""
    if isinstance(data, dict) and "kind" in data and data["kind"] != VIEW_KIND:
        raise WireError("unknown_kind", f"kind: {quote(data['kind'])} is not a view", "kind")
    seat_view: SeatView = _VIEW.build_message(data)
    return seat_view
