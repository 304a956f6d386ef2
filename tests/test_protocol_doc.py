"""docs/protocol.md documents every kind, field, reason and code the server sends or accepts.

Everything is enumerated from the code itself (the shared dataclasses, the protocol module's constants, the
engine's ``Emit`` calls, and the messages a real ``Lobby`` produces), so a new request, action, event, view
field, reason or error code makes this test fail until the document names it, in backticks (`` `swap` ``).
"""

from __future__ import annotations

import ast
import dataclasses
import re
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from quatro_server import bots, engine, lobby, outbound, server, timing
from lobby_peer import RecordingPeer as _Peer
from vocabulary import exported_subclasses

from quatro_shared import actions, events, framing, messages, protocol, quarto, signs, views, wire
from quatro_shared.cards import RANKS, SUITS

ROOT = Path(__file__).resolve().parent.parent
DOC_PATH = ROOT / "docs" / "protocol.md"

#: Module-level constants whose value is a protocol word: lowercase snake_case.
_SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")


# --- the document ----------------------------------------------------------------------------------


def _doc() -> str:
    return DOC_PATH.read_text(encoding="utf-8")


def _prose(doc: str) -> str:
    """The document without its fenced code blocks: a name counts as documented where the text says it."""
    return re.sub(r"^```.*?^```", "", doc, flags=re.S | re.M)


def _spans(doc: str) -> set[str]:
    """Every inline code span of the prose: `swap` gives "swap"."""
    return set(re.findall(r"`([^`\n]+)`", _prose(doc)))


def _rows(doc: str, first: str) -> list[str]:
    """The table rows whose first cell is exactly `first` in backticks."""
    prefix = f"| `{first}` |"
    return [line for line in doc.splitlines() if line.startswith(prefix)]


# --- what the code says exists ---------------------------------------------------------------------


def _subclasses(cls: type) -> list[type]:
    return exported_subclasses(cls)


def _fields(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


EVENT_CLASSES = [cls for cls in _subclasses(events.Event) if dataclasses.is_dataclass(cls)]
#: Quarto's events (``quatro_shared.quarto``), every one sent to both seats (Quarto hides nothing).
QUARTO_EVENT_CLASSES = [
    obj
    for obj in vars(quarto).values()
    if isinstance(obj, type) and issubclass(obj, quarto.Event) and obj is not quarto.Event and obj.__module__ == quarto.__name__
]


def _protocol_words() -> set[str]:
    """Every uppercase str constant of quatro_shared.protocol whose value is snake_case: kinds, lobby reasons, codes."""
    return {
        value
        for name, value in vars(protocol).items()
        if name.isupper() and isinstance(value, str) and _SNAKE.match(value)
    }


def _source_tree(module) -> ast.Module:
    return ast.parse(Path(module.__file__).read_text(encoding="utf-8"))


def _error_codes() -> set[str]:
    """Every code a ProtocolError (framing) or a WireError (actions' fields, built directly or from
    quatro_shared.wire's internal ``_Refused``) can be raised with."""
    codes: set[str] = set()
    for module in (framing, wire):
        for node in ast.walk(_source_tree(module)):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("ProtocolError", "WireError", "_Refused")
                and node.args
            ):
                for inner in ast.walk(node.args[0]):
                    if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                        codes.add(inner.value)
    assert {"frame_too_large", "too_deep", "bad_field", "extra_field"} <= codes, codes
    return codes


def _bye_reasons() -> set[str]:
    """The ``reason`` of every ``bye``: the ``BYE_*`` words of quatro_shared.messages, each used by the server."""
    reasons = {value for name, value in vars(messages).items() if name.startswith("BYE_")}
    used = {
        node.attr
        for module in (lobby, server)
        for node in ast.walk(_source_tree(module))
        if isinstance(node, ast.Attribute) and node.attr.startswith("BYE_")
    }
    assert used == {name for name in vars(messages) if name.startswith("BYE_")}, used
    assert "replaced" in reasons, reasons
    return reasons


#: Each lobby request kind and its fields.
REQUEST_FIELDS = {cls.kind: _fields(cls) for cls in messages.LOBBY_REQUESTS}


def _engine_calls(names: tuple[str, ...], position: int) -> set[str]:
    """The string constants passed at ``position`` to ``self.<name>(...)`` or ``e.<name>(...)`` in the rules engine."""
    found = set()
    for node in ast.walk(_source_tree(engine)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names:
            arg = node.args[position] if len(node.args) > position else None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.add(arg.value)
    return found


def _audiences() -> dict[str, set[str]]:
    """Each event kind's audience, read from the engine's ``Emit(...)`` calls: everyone, team or seat."""
    by_class = {cls.__name__: cls.kind for cls in EVENT_CLASSES}
    audiences: dict[str, set[str]] = {}
    for node in ast.walk(_source_tree(engine)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Emit":
            made = node.args[0]
            assert isinstance(made, ast.Call) and isinstance(made.func, ast.Attribute), ast.dump(node)
            keywords = {k.arg for k in node.keywords}
            audience = "seat" if "seat" in keywords else "team" if "team" in keywords else "everyone"
            audiences.setdefault(by_class[made.func.attr], set()).add(audience)
    return audiences


# --- what a real lobby sends -----------------------------------------------------------------------


class _Conn(_Peer):
    hello = False
    address = "test"


def _lobby_messages() -> list[dict[str, Any]]:
    """Every reply and push of a short session through a real Lobby: seats, bots, start, an action, a rejoin."""
    room_lobby = lobby.Lobby(seed=7)
    ann, bob, eve, twin = _Peer("ann"), _Peer("bob"), _Peer("eve"), _Peer("bob")
    room_lobby.watchers.add(eve)
    ids = count(1)
    replies = []

    def ask(peer: _Peer, kind: str, now: float = 0.0, **fields: Any) -> dict[str, Any]:
        request = wire.request_from_wire({"kind": kind, "id": next(ids), **fields})
        reply = wire.to_wire(room_lobby.handle(peer, request, now))
        replies.append(reply)
        return reply

    assert ask(ann, protocol.CREATE_TABLE, players=4)["kind"] == protocol.OK
    secret = ask(bob, protocol.JOIN, table=1)["secret"]
    ask(bob, protocol.RENAME, name="bobby")
    ask(ann, protocol.ADD_BOT, level="random")
    ask(ann, protocol.REMOVE_BOT, seat=2)
    ask(ann, protocol.ADD_BOT)
    ask(ann, protocol.ADD_BOT)
    ask(eve, protocol.LIST_TABLES)
    ask(eve, protocol.PING)
    assert ask(ann, protocol.START, now=1.0)["kind"] == protocol.OK
    assert ask(bob, "swap", now=1.1, give="QH", slot=0, take="KS")["kind"] == protocol.REFUSED
    assert ask(bob, "swap", now=1.1, give="ZZ", slot=0, take="KS")["kind"] == protocol.ERROR
    ask(bob, "ready", now=1.2)
    assert ask(bob, protocol.RESYNC, now=1.25)["kind"] == protocol.OK
    assert ask(twin, protocol.REJOIN, now=1.3, table=1, secret=secret)["reason"] == protocol.SEAT_IN_USE
    assert ask(twin, protocol.REJOIN, now=1.3, table=1, secret=secret, takeover=True)["kind"] == protocol.OK
    ask(ann, protocol.LEAVE, now=1.4)

    # A Quarto table: its seating, its bot, its updates with their whole view, an accepted and a refused action.
    cy = _Peer("cy")
    created = ask(cy, protocol.CREATE_TABLE, now=2.0, game=protocol.QUARTO)
    assert created["kind"] == protocol.OK
    ask(cy, protocol.ADD_BOT, now=2.0, level="perfect")
    ask(cy, protocol.START, now=2.1)
    room = room_lobby.rooms[created["table"]]
    assert room.table is not None
    turn = room.table.game.turn if room.table.game is not None else 0
    if turn == 0:
        assert ask(cy, "give", now=2.2, piece=3)["kind"] == protocol.OK
    assert ask(cy, "give", now=2.2, piece=3)["kind"] == protocol.REFUSED
    assert ask(cy, "swap", now=2.3, give="QH", slot=0, take="KS")["reason"] == "unknown_action"
    room.tick(10.0)
    ask(cy, protocol.RESYNC, now=10.1)

    hello_server = server.Server(lobby.Lobby())
    conn = _Conn("dee")
    hello = wire.request_from_wire({"kind": protocol.HELLO, "id": 1, "version": protocol.PROTOCOL_VERSION, "name": "dee"})
    replies.append(wire.to_wire(hello_server._hello(conn, hello)))
    return replies + [m for peer in (ann, bob, eve, twin, cy) for m in peer.sent]


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value).union(*(_keys(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_keys(v) for v in value))
    return set()


# --- the names that must be documented -------------------------------------------------------------


def _required() -> dict[str, set[str]]:
    sent = _lobby_messages()
    return {
        "request kinds": set(REQUEST_FIELDS) | set(protocol.LOBBY_KINDS),
        "request fields": {name for spec in REQUEST_FIELDS.values() for name in spec},
        "action kinds": set(protocol.ACTION_KINDS) | set(wire.ACTION_KINDS),
        "action fields": {name for cls in actions.PLAYER_ACTIONS for name in _fields(cls)},
        "server kinds": set(protocol.SERVER_KINDS) | {wire.VIEW_KIND},
        "event kinds": {cls.kind for cls in EVENT_CLASSES} | set(wire.EVENT_KINDS),
        "event fields": {name for cls in EVENT_CLASSES for name in _fields(cls)},
        "rule reasons": {reason.value for reason in actions.Reason},
        "view fields": {
            name
            for cls in (views.SeatView, views.SeatState, views.VoteState, views.RoundSummary, views.Clock, views.OwnTimers)
            for name in _fields(cls)
        },
        "phases": {phase.value for phase in views.Phase},
        "protocol constants (kinds, lobby reasons, codes)": _protocol_words(),
        "error codes (framing and fields)": _error_codes(),
        "bye reasons": _bye_reasons(),
        "vote outcomes": _engine_calls(("_end_vote", "VoteEnded"), 1),
        "round outcomes": _engine_calls(("_end_round", "RoundEnded"), 1) | _engine_calls(("_end_round",), 0),
        "keys of the lobby's messages": _keys(sent),
        "kinds of the lobby's messages": {m["kind"] for m in sent} | {e["kind"] for m in sent for e in m.get("events", [])},
        "timing fields": {f.name for f in dataclasses.fields(timing.Timing)},
        "timing profiles": set(timing.PROFILES),
        "bot levels": set(bots.LEVELS),
        "games": set(protocol.GAMES),
        "Quarto action kinds": set(quarto.ACTION_KINDS) | set(wire.QUARTO_ACTION_KINDS),
        "Quarto action fields": {name for cls in quarto.PLAYER_ACTIONS for name in _fields(cls)},
        "Quarto event kinds": {cls.kind for cls in QUARTO_EVENT_CLASSES} | set(wire.QUARTO_EVENT_KINDS),
        "Quarto event fields": {name for cls in QUARTO_EVENT_CLASSES for name in _fields(cls)},
        "Quarto reasons": {reason.value for reason in quarto.Reason},
        "Quarto view fields": {name for cls in (quarto.QuartoView, quarto.SeatState) for name in _fields(cls)},
        "Quarto phases and steps": {phase.value for phase in quarto.Phase} | {step.value for step in quarto.Step},
        "Quarto bot levels": set(quarto.LEVELS) | {quarto.DEFAULT_LEVEL},
        "Quarto attribute names": {name for attribute in quarto.ATTRIBUTES for name in attribute[2:]},
        "signs": set(signs.SIGNS),
        "ranks and suits": set(RANKS) | set(SUITS),
    }


REQUIRED = _required()


def test_the_enumeration_finds_what_it_should():
    """Guards the enumeration itself: a broken walk would make every other test pass vacuously."""
    assert {"hello", "join", "rejoin", "ping"} <= REQUIRED["request kinds"]
    assert {"give", "slot", "take", "yes", "team", "sign"} <= REQUIRED["action fields"]
    assert {"swapped", "pulse", "round_ended", "host_changed"} <= REQUIRED["event kinds"]
    assert {"taken", "cooldown", "not_host"} <= REQUIRED["rule reasons"]
    assert {"hello_first", "bad_secret", "rate_limited", "ok", "bye"} <= REQUIRED["protocol constants (kinds, lobby reasons, codes)"]
    assert {"remaining_ms", "next_pulse_ms", "fours", "winners"} <= REQUIRED["view fields"]
    assert {"agreed", "refused", "timeout", "voter_left", "round_over"} <= REQUIRED["vote outcomes"]
    assert {"call", "counter", "draw"} <= REQUIRED["round outcomes"]
    assert {"ok", "refused", "error", "update", "table", "lobby", "bye"} <= REQUIRED["kinds of the lobby's messages"]
    assert {"secret", "wait_ms", "seq", "snapshot", "timing_name", "profiles"} <= REQUIRED["keys of the lobby's messages"]
    assert len(EVENT_CLASSES) == len(wire.EVENT_KINDS)
    assert {"place", "give", "next_game"} == REQUIRED["Quarto action kinds"]
    assert {"piece_given", "piece_placed", "quarto_game_ended"} <= REQUIRED["Quarto event kinds"]
    assert len(QUARTO_EVENT_CLASSES) == len(wire.QUARTO_EVENT_KINDS) >= 9
    assert {"not_your_turn", "wrong_step", "square_taken"} <= REQUIRED["Quarto reasons"]
    assert {"board", "pool", "in_hand", "step", "ready"} <= REQUIRED["Quarto view fields"]
    assert {"piece_given", "quarto_game_started"} <= REQUIRED["kinds of the lobby's messages"]
    assert {"games", "game", "in_hand"} <= REQUIRED["keys of the lobby's messages"]


@pytest.mark.parametrize("family", sorted(REQUIRED))
def test_every_name_is_documented_in_backticks(family):
    spans = _spans(_doc())
    missing = sorted(name for name in REQUIRED[family] if name not in spans)
    assert not missing, f"docs/protocol.md does not name these {family} in backticks: {missing}"


@pytest.mark.parametrize("cls", EVENT_CLASSES, ids=lambda cls: cls.kind)
def test_every_event_has_a_row_with_its_fields_and_its_audience(cls):
    rows = _rows(_doc(), cls.kind)
    fields = _fields(cls)
    complete = [row for row in rows if all(f"`{name}`" in row for name in fields)]
    assert complete, f"no table row for event `{cls.kind}` naming all its fields {fields}"
    words = {"everyone": "everyone", "team": "**team**", "seat": "**seat**"}
    for audience in _audiences().get(cls.kind, set()):
        assert any(words[audience] in row for row in complete), f"`{cls.kind}` is sent to {audience}: say so in its row"


@pytest.mark.parametrize("cls", QUARTO_EVENT_CLASSES, ids=lambda cls: cls.kind)
def test_every_quarto_event_has_a_row_with_its_fields_sent_to_everyone(cls):
    rows = _rows(_doc(), cls.kind)
    complete = [row for row in rows if all(f"`{name}`" in row for name in _fields(cls))]
    assert complete, f"no table row for Quarto event `{cls.kind}` naming all its fields {_fields(cls)}"
    assert any("everyone" in row for row in complete), f"`{cls.kind}` is sent to everyone: say so in its row"


@pytest.mark.parametrize("cls", quarto.PLAYER_ACTIONS, ids=lambda cls: cls.kind)
def test_every_quarto_action_has_a_row_with_its_fields_and_refusals(cls):
    rows = [row for row in _rows(_doc(), cls.kind) if all(f"`{name}`" in row for name in _fields(cls))]
    assert rows, f"no table row for Quarto action `{cls.kind}` naming its fields {_fields(cls)}"
    assert any("`match_over`" in row and "`wrong_phase`" in row for row in rows), f"`{cls.kind}`: list its refusals"


@pytest.mark.parametrize("cls", [quarto.QuartoView], ids=lambda cls: cls.__name__)
def test_every_quarto_view_field_has_a_row_in_the_quarto_section(cls):
    doc = _doc()
    section = doc[doc.index("## 17. Quarto tables") :]
    missing = [name for name in _fields(cls) if not _rows(section, name)]
    assert not missing, f"{cls.__name__} fields with no table row in section 17: {missing}"


def test_every_emitted_event_is_a_declared_event():
    assert set(_audiences()) <= {cls.kind for cls in EVENT_CLASSES}


@pytest.mark.parametrize("cls", actions.PLAYER_ACTIONS, ids=lambda cls: cls.kind)
def test_every_action_has_a_row_with_its_fields(cls):
    rows = _rows(_doc(), cls.kind)
    assert any(all(f"`{name}`" in row for name in _fields(cls)) for row in rows), (
        f"no table row for action `{cls.kind}` naming its fields {_fields(cls)}"
    )


@pytest.mark.parametrize("kind", sorted(REQUEST_FIELDS))
def test_every_lobby_request_has_a_section_naming_its_fields(kind):
    doc = _doc()
    match = re.search(rf"^### `{kind}`.*?$(.*?)(?=^#{{1,3}} )", doc, flags=re.S | re.M)
    if kind == protocol.HELLO:  # the handshake has its own section
        match = re.search(r"^## 4\. The handshake$(.*?)(?=^## )", doc, flags=re.S | re.M)
    assert match, f"no section for request `{kind}`"
    for name in REQUEST_FIELDS[kind]:
        assert f"`{name}`" in match.group(1), f"the section of `{kind}` does not name its field `{name}`"


@pytest.mark.parametrize(
    "cls", [views.SeatView, views.SeatState, views.VoteState, views.Clock, views.OwnTimers], ids=lambda cls: cls.__name__
)
def test_every_view_field_has_a_row(cls):
    doc = _doc()
    missing = [name for name in _fields(cls) if not _rows(doc, name)]
    assert not missing, f"{cls.__name__} fields with no table row: {missing}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


#: Limits a client must know, by module; every int constant of framing and protocol is one.
LIMITS = {
    **{(framing, name): value for name, value in vars(framing).items() if name.isupper() and type(value) is int},
    **{(protocol, name): value for name, value in vars(protocol).items() if name.isupper() and type(value) is int},
    **{
        (server, name): getattr(server, name)
        for name in (
            "MAX_CONNECTIONS",
            "MAX_CONNECTIONS_PER_ADDRESS",
            "LOBBY_IDLE_LIMIT",
            "REQUEST_BURST",
            "REQUEST_RATE",
            "FLOOD_DISCONNECT",
            "HELLO_TIMEOUT",
            "FLUSH_GRACE",
        )
    },
    (outbound, "MAX_OUTBOUND_BYTES"): outbound.MAX_OUTBOUND_BYTES,
    **{
        (lobby, name): getattr(lobby, name)
        for name in (
            "MAX_TABLES",
            "MAX_TABLES_PER_ADDRESS",
            "ABANDON_AFTER",
            "UNSTARTED_ABANDON_AFTER",
            "GUESSES_PER_ADDRESS",
            "GUESSES_PER_TABLE",
            "GUESS_DELAY_CAP",
            "GUESS_DELAY_CAP_TABLE",
        )
    },
}


@pytest.mark.parametrize("key", sorted(LIMITS, key=lambda k: k[1]), ids=lambda key: key[1])
def test_every_limit_is_documented_with_its_value(key):
    module, name = key
    value = _number(LIMITS[key])
    lines = [line for line in _doc().splitlines() if f"`{name}`" in line]
    assert lines, f"{module.__name__}.{name} is not documented"
    pattern = re.compile(rf"(?<![\d.]){re.escape(value)}(?![\d.])")
    assert any(pattern.search(line) for line in lines), f"{module.__name__}.{name} = {value}: no line gives its value"


@pytest.mark.parametrize("field", dataclasses.fields(timing.Timing), ids=lambda f: f.name)
def test_every_timing_field_has_a_row_with_its_standard_value(field):
    value = _number(getattr(timing.STANDARD, field.name))
    assert any(f"| {value} |" in row for row in _rows(_doc(), field.name)), (
        f"timing `{field.name}` (standard {value}) has no row giving its value"
    )
