"""Conversion between the shared dataclasses (every message: see quatro_shared.messages) and plain msgpack-ready dicts.

Going out, ``to_wire(obj)`` gives ``{"kind": obj.kind, **fields}`` with tuples as lists and enums as
their string values; a ``SeatView`` gets ``"kind": "view"`` so it can be framed as it is, an ``Ok`` carries
its payload's fields beside ``kind`` and ``id``, and a lobby request leaves out its optional fields that are
None. Coming in, this module is the one place where a peer's message is checked field by field:
``request_from_wire`` (the server's door: every request, lobby request or game action),
``push_from_wire`` and ``reply_from_wire`` (the clients' doors), and, for a game's own types, its codec
(``codec(contract)``: ``action``, ``event``, ``view``, ``update``; ``action_from_wire``, ``event_from_wire`` and
``view_from_wire`` are the default game's). Anything that does not fit raises ``WireError`` with a stable
``code`` and a message naming the field (or, for a request, the protocol's ``RequestError``).

No game is named here: a game action is read by its kind through the game that declares it, and an ``update`` by
its ``game`` (the default game's when left out), each through the game's contract in ``quatro_shared.games``.

Nothing is listed twice: the fields and their types are read from the dataclasses themselves (their
annotations, such as ``Card``, ``Name``, ``Sign | None`` or ``tuple[int, ...]``), so a new message, or a
new field, is checked as soon as it is declared. A type this module does not know fails when its schema is
first built (at import for the shared messages, on a game's first use for its own).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Generic, TypeVar

from quatro_shared import games as g
from quatro_shared import messages as m
from quatro_shared import proofs
from quatro_shared import protocol as p
from quatro_shared.framing import Message
from quatro_shared.game import GameAction, GameContract, WireCheck
from quatro_shared.tables import LEFT_OUT_AT_DEFAULT, TablePhase

#: The ``kind`` of a framed view of a game whose views carry one (``GameContract.view_kind``; the default game's).
VIEW_KIND = "view"

#: A class of the contract that a schema rebuilds.
T = TypeVar("T")


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
    def reason(self) -> str:
        """The refusal to answer a bad action with: the protocol's errors are values (``refused: bad_argument``)."""
        return p.UNKNOWN_ACTION if self.code == "unknown_kind" else p.BAD_ARGUMENT


# --- outbound ------------------------------------------------------------------------------------------


def to_wire(obj: object) -> dict[str, object]:
    """Any message of the shared vocabulary (an action, event, view, lobby request, reply or push, see
    ``quatro_shared.messages``) as a dict of msgpack-ready values."""
    plan = _PLANS.get(type(obj))
    if plan is None:
        if type(obj) is m.Ok:
            return _ok_to_wire(obj)
        if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
            raise TypeError(f"to_wire takes a shared dataclass, not {type(obj).__name__}")
        plan = _PLANS[type(obj)] = _plan(type(obj))
    kind, fields, left_out = plan
    out: dict[str, object] = {"kind": kind} if kind is not None else {}
    if left_out:
        for name, encode in fields:
            value = getattr(obj, name)
            if name in left_out and value == left_out[name]:
                continue
            out[name] = value if value is None or encode is None else encode(value)
        return out
    for name, encode in fields:
        value = getattr(obj, name)
        out[name] = value if value is None or encode is None else encode(value)
    return out


def request_to_wire(request_id: int, body: m.RequestBody) -> dict[str, object]:
    """A request as a client sends it: its body's fields, with ``kind`` and ``id``."""
    out = to_wire(body)
    out["id"] = request_id
    return out


def _ok_to_wire(reply: m.Ok) -> dict[str, object]:
    # The payload's fields sit beside kind and id: {"kind": "ok", "id": 2, "table": 1, "seat": 0, "secret": "..."}
    return {"kind": p.OK, "id": reply.id, **to_wire(reply.payload)}


#: ``encode(value)`` returns the plain form of a value that is not None. The value is a dataclass field's, of the
#: type its annotation names; this codec reads annotations as text (``_parse``), so that type is known only at run
#: time: the one ``Any`` of the outbound path.
Encoder = Callable[[Any], object]

#: The outbound form of each class, worked out once from its annotations: its kind, and for each field
#: how to turn its value into plain msgpack values (None where the value already is one). The server
#: encodes every event and view it sends, so this path is kept free of per-value type tests.
#: The fields left out while they hold their default, by name with that default: a lobby request's optional fields
#: when they are None (the server refuses ``null`` for them, since "absent" is what they mean), and every field
#: declared ``LEFT_OUT_AT_DEFAULT`` (an update's optional parts, the clock's vote, a cooldown that is 0).
_Plan = tuple[str | None, tuple[tuple[str, "Encoder | None"], ...], dict[str, object]]
_PLANS: dict[type, _Plan] = {}


def _plan(cls: type) -> _Plan:
    owner = _owner(cls)
    if owner is not None and cls is owner.view:
        kind = owner.view_kind
    else:
        kind = None if issubclass(cls, m.Payload) else getattr(cls, "kind", None)
    where = cls.__name__
    names = _names_for(cls)
    fields = tuple((f.name, _encoder(_parse(f.type, f"{where}.{f.name}", names))) for f in dataclasses.fields(cls))
    lobby_request = issubclass(cls, m.LobbyRequest)
    left_out = {
        f.name: f.default
        for f in dataclasses.fields(cls)
        if (lobby_request and f.default is None) or LEFT_OUT_AT_DEFAULT.items() <= f.metadata.items()
    }
    return kind, fields, left_out


def _encoder(spec: _Spec) -> Encoder | None:
    shape, inner = spec
    if shape == "optional":
        return _encoder(inner)  # None is caught before any encoder runs
    if shape == "tuple":
        item = _encoder(inner)
        if item is None:
            return list
        return lambda value: [None if x is None else item(x) for x in value]
    if shape == "fixed":
        items = tuple(_encoder(spec) for spec in inner)
        if all(item is None for item in items):
            return list
        return lambda value: [x if item is None or x is None else item(x) for item, x in zip(items, value)]
    if isinstance(inner, type) and issubclass(inner, Enum):
        return _enum_value
    if _is_nested(inner) or isinstance(inner, _EventsOf):
        return to_wire
    return None


def _enum_value(member: Enum) -> object:
    return member.value


# --- inbound: one checking converter per annotation -------------------------------------------------------

#: ``convert(value)`` returns the value in its Python form, or raises ``_Refused``.
Converter = Callable[[object], object]


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


def quote(value: object) -> str:
    """A peer's value, shown in an error message: bounded, so that an answer never outgrows the codec's limits."""
    text = repr(value)
    return text if len(text) <= _QUOTE_CHARS else text[: _QUOTE_CHARS - 3] + "..."


class _Check:
    """A converter for a value kept as it is once ``test`` accepts it (ints, strings, cards, signs...).

    Arrays of these are checked in one pass (``_tuple_of``), which is most of a view."""

    __slots__ = ("test", "expected")

    def __init__(self, test: Callable[[object], bool], expected: str) -> None:
        self.test = test
        self.expected = expected

    def __call__(self, value: object) -> object:
        if self.test(value):
            return value
        raise _Refused("bad_field", f"expected {self.expected}, got {quote(value)}")


def _is_int(value: object) -> bool:
    return type(value) is int  # bool is an int to Python, never to the protocol: True is not seat 1


def _to_float(value: object) -> float:
    # Peers in other languages may send 2 for 2.0.
    if type(value) is int or type(value) is float:
        return float(value)
    raise _Refused("bad_field", f"expected a number, got {quote(value)}")


def _enum(enum: type[Enum]) -> Converter:
    members = {member.value: member for member in enum}
    expected = f"one of {', '.join(map(str, members))}"

    def convert(value: object) -> Enum:
        member = members.get(value) if type(value) is str else None
        if member is None:
            raise _Refused("bad_field", f"expected {expected}, got {quote(value)}")
        return member

    return convert


def _optional(inner: Converter) -> Converter:
    if isinstance(inner, _Check):
        test = inner.test
        return _Check(lambda value: value is None or test(value), f"{inner.expected} or nil")

    def convert(value: object) -> object:
        return None if value is None else inner(value)

    return convert


def _tuple_of(inner: Converter) -> Converter:
    test = inner.test if isinstance(inner, _Check) else None

    def convert(value: object) -> tuple[object, ...]:
        if not isinstance(value, (list, tuple)):
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


class _Schema(Generic[T]):
    """How to check and rebuild one dataclass from a dict: its fields, each with its converter.

    ``lenient``: keys the class does not know are ignored, as the protocol asks of a client reading the server's
    messages (so that a newer server may add some). ``absent_only``: an optional field may be left out but is
    never ``null`` (lobby requests)."""

    def __init__(self, cls: type[T], *, lenient: bool = False, absent_only: bool = False) -> None:
        self.cls = cls
        self.lenient = lenient
        names = _names_for(cls)
        klass: type = cls  # a dataclass: every class of the contract is one
        self.fields: tuple[tuple[str, Converter, bool], ...] = tuple(
            (f.name, _converter(_parse(f.type, f"{cls.__name__}.{f.name}", names), absent_only), _has_default(f))
            for f in dataclasses.fields(klass)
        )
        self.names = frozenset(name for name, _, _ in self.fields)
        kind = getattr(cls, "kind", None)
        self.described = f'"{kind}"' if kind else cls.__name__
        #: A view framed inside an update keeps its ``"kind"`` (``"view"``), where its game frames views.
        owner = _owner(cls)
        self.kinded = owner is not None and cls is owner.view and owner.view_kind is not None

    def build(self, data: object, top: bool = False) -> T:
        """The dataclass from ``data``; a top-level message may also hold its ``"kind"``."""
        if type(data) is not dict:
            raise _Refused("not_a_map" if top else "bad_field", f"expected a map, got {quote(data)}")
        for key in data:
            if key not in self.names and not ((top or self.kinded) and key == "kind") and not self.lenient:
                name = key if type(key) is str and len(key) <= _QUOTE_CHARS else quote(key)
                raise _Refused("extra_field", f"not a field of {self.described}").at(f".{name}")
        values: dict[str, object] = {}
        for name, convert, optional in self.fields:
            if name in data:
                try:
                    values[name] = convert(data[name])
                except _Refused as refused:
                    raise refused.at(f".{name}") from None
            elif not optional:  # a field with a default (Counter.team) may be left out, as in Python
                raise _Refused("missing_field", f"required by {self.described}").at(f".{name}")
        return self.cls(**values)

    def build_message(self, data: object) -> T:
        try:
            return self.build(data, top=True)
        except _Refused as refused:
            raise refused.to_error() from None


def _has_default(f: dataclasses.Field[object]) -> bool:
    return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING


# --- annotations ---------------------------------------------------------------------------------------

#: The names a shared annotation may use. Card and Sign are both ``str`` to Python, which is why the
#: annotation text is read rather than the resolved types.
_BASE: dict[str, object] = {
    "int": int,
    "bool": bool,
    "str": str,
    "float": float,
    "Name": "Name",
    "Password": "Password",
    "Secret": "Secret",
    "DoorToken": "DoorToken",
    "ProfileName": "ProfileName",
    "LevelName": "LevelName",
    "ChatText": "ChatText",
    "Durations": "Durations",
    "Nonce": "Nonce",
    "ProofOf": "ProofOf",
    "TablePhase": TablePhase,
    "TableSummary": m.TableSummary,
    "SeatInfo": m.SeatInfo,
    "GameName": "GameName",
    "UpdateFrame": "UpdateFrame",
    "MatchSummary": m.MatchSummary,
    "ReplayNote": m.ReplayNote,
    "PersonId": "PersonId",
    "PersonKey": "PersonKey",
    "Standing": m.Standing,
    "Tally": m.Tally,
    "GameRecord": m.GameRecord,
}
#: Nested classes of the lobby's own messages, read leniently by a client (keys it does not know are skipped).
#: Each game's nested classes are its contract's ``view_parts``.
_LOBBY_NESTED = (m.TableSummary, m.SeatInfo, m.MatchSummary, m.ReplayNote, m.Standing, m.Tally, m.GameRecord)

#: A parsed annotation: ("optional", spec), ("tuple", spec), ("fixed", (spec, ...)) for ``tuple[X, Y]``, or
#: ("base", what ``_BASE`` maps the name to). Its second part's type depends on the first: the one ``Any`` of the
#: annotations' parser, read at schema-building time only.
_Spec = tuple[str, Any]


@dataclass(frozen=True, slots=True)
class _EventsOf:
    """What ``Event`` stands for in a game's own annotations (its update's ``events``): that game's events."""

    game: str


#: An event of the game a message names (``messages.GameEvent``, the ``recent`` push's): written as any event.
_BASE["GameEvent"] = _EventsOf("")


def _owner(cls: type) -> g.AnyContract | None:
    """The game whose own class ``cls`` is, if any."""
    for contract in g.CONTRACTS.values():
        if contract.owns(cls):
            return contract
    return None


def _is_nested(inner: object) -> bool:
    return isinstance(inner, type) and (
        inner in _LOBBY_NESTED or any(inner in c.view_parts for c in g.CONTRACTS.values())
    )


def _is_lenient(inner: type) -> bool:
    owner = _owner(inner)
    return inner in _LOBBY_NESTED or (owner is not None and owner.lenient)


def _names_for(cls: type) -> dict[str, object]:
    """The names a class's annotations use: the shared ones, and for a game's own class its game's in their place."""
    owner = _owner(cls)
    if owner is None:
        return _BASE
    return {**_BASE, **owner.wire_names, "Event": _EventsOf(owner.name)}


def _parse(annotation: object, where: str, names: dict[str, object] = _BASE) -> _Spec:
    """An annotation string: a base name, ``X | None``, ``tuple[X, ...]`` or ``tuple[X, Y]``, nested at will."""
    if not isinstance(annotation, str):  # the shared modules use postponed annotations, so these are strings
        raise TypeError(f"{where}: annotation {annotation!r} is not a string")
    text = annotation.strip()
    if text.endswith("| None"):
        return ("optional", _parse(text[: -len("| None")], where, names))
    if text.startswith("tuple[") and text.endswith(", ...]"):
        return ("tuple", _parse(text[len("tuple[") : -len(", ...]")], where, names))
    if text.startswith("tuple[") and text.endswith("]") and "[" not in text[len("tuple[") :]:
        items = text[len("tuple[") : -1].split(",")
        return ("fixed", tuple(_parse(item, where, names) for item in items))
    if text in names:
        return ("base", names[text])
    raise TypeError(f"{where}: quatro_shared.wire does not know the type {annotation!r}; add it to _BASE")


def _text(limit: int) -> _Check:
    # Names reach other players' terminals, where a control character could do harm (protocol.printable).
    return _Check(
        lambda v: type(v) is str and 0 < len(v) <= limit and p.printable(v),
        f"a printable string of 1 to {limit} characters",
    )


_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def _is_nonce(value: object) -> bool:
    return (
        type(value) is str
        and 2 * p.MIN_NONCE_BYTES <= len(value) <= 2 * p.MAX_NONCE_BYTES
        and len(value) % 2 == 0
        and set(value) <= _HEX_DIGITS
    )


def _is_number(value: object) -> bool:
    return type(value) in (int, float)


def _durations(value: object) -> dict[str, float]:
    if type(value) is not dict:
        raise _Refused("bad_field", f"expected a map, got {quote(value)}")
    for key, number in value.items():
        if type(key) is not str or not _is_number(number):
            raise _Refused("bad_field", f"expected a number, got {quote(number)}").at(f".{key}")
    return value


_BASE_CONVERTERS: dict[object, Callable[[], Converter]] = {
    int: lambda: _Check(_is_int, "an integer"),
    bool: lambda: _Check(lambda v: type(v) is bool, "true or false"),
    str: lambda: _Check(lambda v: type(v) is str, "a string"),
    float: lambda: _to_float,
    "Name": lambda: _text(p.MAX_NAME_LEN),
    "Password": lambda: _text(p.MAX_PASSWORD_LEN),
    "Secret": lambda: _text(p.MAX_SECRET_LEN),
    "DoorToken": lambda: _text(p.MAX_DOOR_TOKEN_LEN),
    "ProfileName": lambda: _text(p.MAX_PROFILE_LEN),
    "LevelName": lambda: _text(p.MAX_LEVEL_LEN),
    "GameName": lambda: _text(p.MAX_GAME_LEN),
    "PersonId": lambda: _text(p.MAX_PERSON_LEN),
    "PersonKey": lambda: _text(p.MAX_PERSON_KEY_LEN),
    "ChatText": lambda: _text(p.MAX_CHAT_LEN),
    "Durations": lambda: _durations,
    "Nonce": lambda: _Check(_is_nonce, f"the hex of {p.MIN_NONCE_BYTES} to {p.MAX_NONCE_BYTES} bytes"),
    "ProofOf": lambda: _Check(
        lambda v: v in (proofs.OF_SECRET, proofs.OF_PASSWORD),
        f"{proofs.OF_SECRET!r} or {proofs.OF_PASSWORD!r}",
    ),
    "UpdateFrame": lambda: _Check(lambda v: type(v) is dict and v.get("kind") == p.UPDATE, "an update"),
}


def _converter(spec: _Spec, absent_only: bool = False) -> Converter:
    """``absent_only``: an optional field's ``null`` is refused (it may only be left out)."""
    shape, inner = spec
    if shape == "optional":
        return _converter(inner) if absent_only else _optional(_converter(inner))
    if shape == "tuple":
        if inner[0] == "base" and isinstance(inner[1], _EventsOf):
            return _known_events(inner[1].game)
        return _tuple_of(_converter(inner))
    if shape == "fixed":
        return _fixed_tuple(tuple(_converter(spec) for spec in inner))
    if isinstance(inner, type) and issubclass(inner, Enum):
        return _enum(inner)
    if _is_nested(inner):
        return _Schema(inner, lenient=_is_lenient(inner)).build
    if isinstance(inner, WireCheck):
        return _Check(inner.test, inner.expected)
    return _BASE_CONVERTERS[inner]()


def _known_events(game: str) -> Converter:
    """An update's events, of its game: the ones this side knows and can read. One it cannot (a newer server's) is
    left out, never the update: the view beside them (or the snapshot that follows) holds what a client needs."""

    def convert(value: object) -> tuple[object, ...]:
        if not isinstance(value, (list, tuple)):
            raise _Refused("bad_field", f"expected an array, got {quote(value)}")
        events = _codec_of(game).events
        out = []
        for item in value:
            try:
                out.append(_schema_for(item, events, "an event").build_message(item))
            except WireError:
                continue
        return tuple(out)

    return convert


def _fixed_tuple(items: tuple[Converter, ...]) -> Converter:
    def convert(value: object) -> tuple[object, ...]:
        if not isinstance(value, (list, tuple)) or len(value) != len(items):
            raise _Refused("bad_field", f"expected an array of {len(items)}, got {quote(value)}")
        out = []
        for i, (item, convert_item) in enumerate(zip(value, items)):
            try:
                out.append(convert_item(item))
            except _Refused as refused:
                raise refused.at(f"[{i}]") from None
        return tuple(out)

    return convert


def _by_kind(classes: tuple[type[T], ...], family: str) -> dict[str, _Schema[T]]:
    table: dict[str, _Schema[T]] = {}
    for cls in classes:
        kind: str = getattr(cls, "kind")  # every action and event class declares one (GameAction)
        if kind in table:
            raise TypeError(f"two {family} share the kind {kind!r}")
        table[kind] = _Schema(cls)
    return table


_LOBBY_REQUESTS = {cls.kind: _Schema(cls, absent_only=True) for cls in m.LOBBY_REQUESTS}
_PUSHES = {cls.kind: _Schema(cls, lenient=True) for cls in m.PUSHES if cls is not m.Recent}
_REPLIES = {cls.kind: _Schema(cls, lenient=True) for cls in (m.Refused, m.Error, m.MovedTo)}
_PAYLOADS = {cls: _Schema(cls, lenient=True) for cls in {*m.REPLY_PAYLOADS.values(), m.GAME_ACTION_PAYLOAD}}


# --- a game's own messages ------------------------------------------------------------------------------

ActionT = TypeVar("ActionT")
EventT = TypeVar("EventT")
ViewT = TypeVar("ViewT")
UpdateT = TypeVar("UpdateT")


class GameCodec(Generic[ActionT, EventT, ViewT, UpdateT]):
    """How one game's messages are read: its player actions and events by kind, its view and its update, each
    checked field by field from the classes its contract names. Raises ``WireError``."""

    def __init__(self, contract: GameContract[ActionT, EventT, ViewT, UpdateT]) -> None:
        self.contract = contract
        title = contract.title
        self.actions = _by_kind(contract.actions, f"{title} actions")
        self.events = _by_kind(contract.events, f"{title} events")
        self._server_only = frozenset(getattr(cls, "kind") for cls in contract.server_actions)
        self._view = _Schema(contract.view, lenient=contract.lenient)
        self._update = _Schema(contract.update, lenient=True)
        self._families = (f"a {title} player action", f"a {title} event")

    def action(self, data: object) -> ActionT:
        """A player's action from a peer's message. Actions the server alone issues (Quatro's ``connect`` and
        ``disconnect``, R19) are refused as an unknown kind."""
        kind = data.get("kind") if isinstance(data, dict) else None
        if type(kind) is str and kind in self._server_only:
            raise WireError("unknown_kind", f"kind: {kind!r} is issued by the server only, never by a player", "kind")
        return _schema_for(data, self.actions, self._families[0]).build_message(data)

    def event(self, data: object) -> EventT:
        """An event from the server's message, rebuilt as its dataclass."""
        return _schema_for(data, self.events, self._families[1]).build_message(data)

    def view(self, data: object) -> ViewT:
        """A seat's view from the server's message (a framed one with its ``kind``, or without)."""
        kind = self.contract.view_kind
        if kind is not None and isinstance(data, dict) and "kind" in data and data["kind"] != kind:
            raise WireError("unknown_kind", f"kind: {quote(data['kind'])} is not a view", "kind")
        return self._view.build_message(data)

    def update(self, data: object) -> UpdateT:
        """An ``update`` push of this game's tables."""
        return self._update.build_message(data)


#: Any game's codec: the registry holds games of different types, each codec typed by its own contract.
AnyCodec = GameCodec[Any, Any, Any, Any]
_CODECS: dict[str, AnyCodec] = {}


def codec(contract: GameContract[ActionT, EventT, ViewT, UpdateT]) -> GameCodec[ActionT, EventT, ViewT, UpdateT]:
    """The codec of a registered game (built on first use, so that a game registered later has one too)."""
    found = _CODECS.get(contract.name)
    if found is None or found.contract is not contract:
        found = _CODECS[contract.name] = GameCodec(contract)
    return found


def _codec_of(game: str) -> AnyCodec:
    return codec(g.CONTRACTS[game])


def _game_action(kind: str) -> _Schema[GameAction] | None:
    """The schema of a game action by its kind, whichever game declares it (the registry keeps kinds apart)."""
    for contract in g.CONTRACTS.values():
        schema = codec(contract).actions.get(kind)
        if schema is not None:
            return schema
    return None


def _schema_for(data: object, table: dict[str, _Schema[T]], family: str) -> _Schema[T]:
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


def request_from_wire(frame: Message) -> m.Request:
    """A client's request from its decoded frame: the one place where requests are checked.

    Raises ``quatro_shared.protocol.RequestError``: ``bad_request`` (no integer ``id`` in range, or a lobby
    request's field missing, unknown, of the wrong type, out of range or not printable), ``unknown_kind``.
    A game action whose fields do not fit is returned with ``invalid`` set (its codes are ``WireError``'s), so
    that the server can check the seat first.
    """
    given = frame.get("kind")
    kind = given if type(given) is str else None
    request_id = frame.get("id")
    if type(request_id) is not int or not 0 <= request_id <= p.MAX_REQUEST_ID:
        raise p.RequestError(p.BAD_REQUEST, "every request needs an integer id between 0 and 2**53")
    if kind is None:
        raise p.RequestError(p.UNKNOWN_KIND, f"unknown request kind {quote(given)}")
    quick = g.QUICK_REQUESTS.get(kind)
    if quick is not None:  # a game's busiest request, read without the general walk (GameContract.quick_requests)
        action = quick(frame)
        if action is not None:
            return m.Request(request_id, kind, action)
    data = {key: value for key, value in frame.items() if key != "id"}
    game_action = _game_action(kind)
    if game_action is not None:
        try:
            return m.Request(request_id, kind, game_action.build_message(data))
        except WireError as exc:
            return m.Request(request_id, kind, None, exc)
    schema = _LOBBY_REQUESTS.get(kind)
    if schema is None:
        raise p.RequestError(p.UNKNOWN_KIND, f"unknown request kind {quote(kind)}")
    try:
        return m.Request(request_id, kind, schema.build_message(data))
    except WireError as exc:
        raise p.RequestError(p.BAD_REQUEST, f"{kind}: {exc.message}") from None


def push_from_wire(data: object) -> m.Push:
    """A push from the server (``update``, ``table``, ``lobby``, ``bye``, ``chat``), checked and rebuilt. Raises
    ``WireError``.

    An ``update`` is read as its ``game``'s (the contract's ``update`` class); one with no ``game`` is the default
    game's."""
    if isinstance(data, dict) and data.get("kind") == p.UPDATE:
        game = data.get("game", g.DEFAULT.name)
        contract = g.CONTRACTS.get(game) if type(game) is str else None
        if contract is None:
            raise WireError("bad_field", f"game: {quote(game)} is no game this side knows", "game")
        update: m.Push = codec(contract).update(data)
        return update
    if isinstance(data, dict) and data.get("kind") == p.RECENT:
        return _recent(data)
    push: m.Push = _schema_for(data, _PUSHES, "a push").build_message(data)
    return push


def _recent(data: Message) -> m.Recent:
    """A ``recent`` push: its events read as its game's (protocol 7)."""
    table, game, events = data.get("table"), data.get("game"), data.get("events")
    if type(table) is not int:
        raise WireError("bad_field", f"table: expected an integer, got {quote(table)}", "table")
    contract = g.CONTRACTS.get(game) if isinstance(game, str) else None
    if contract is None or not isinstance(game, str):
        raise WireError("bad_field", f"game: {quote(game)} is no game this side knows", "game")
    if type(events) is not list or len(events) > p.MAX_RECENT_EVENTS:
        raise WireError("bad_field", f"events: a list of at most {p.MAX_RECENT_EVENTS} events", "events")
    reader = codec(contract)
    return m.Recent(table, game, tuple(reader.event(item) for item in events))


def reply_from_wire(data: object, payload: type[m.Payload] = m.Done) -> m.Reply:
    """A reply from the server; an ``ok`` is read with the payload of the request it answers
    (``quatro_shared.messages.REPLY_PAYLOADS``, ``GAME_ACTION_PAYLOAD`` for a game action). Raises ``WireError``."""
    if isinstance(data, dict) and data.get("kind") == p.OK:
        request_id = data.get("id")
        if request_id is not None and type(request_id) is not int:
            raise WireError("bad_field", f"id: expected an integer or nil, got {quote(request_id)}", "id")
        return m.Ok(request_id, _PAYLOADS[payload].build_message(data))
    reply: m.Reply = _schema_for(data, _REPLIES, "a reply").build_message(data)
    return reply
