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

from quatro_shared import framing, games, messages, protocol, wire
from quatro_shared.games.quarto import contract as quarto
from quatro_shared.games.quatro import actions, events, signs, views
from quatro_shared.games.quatro import wire as quatro_wire
from quatro_shared.games.quatro.cards import RANKS, SUITS

from helpers.lobby_peer import RecordingPeer as _Peer
from helpers.vocabulary import exported_subclasses
from quatro_server import server, timing
from quatro_server.games.quatro import bots, engine
from quatro_server.net import outbound
from quatro_server.tables import lobby

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
#: Quarto's events (``quatro_shared.games.quarto.contract``), every one sent to both seats (Quarto hides nothing).
QUARTO_EVENT_CLASSES = [
    obj
    for obj in vars(quarto).values()
    if isinstance(obj, type)
    and issubclass(obj, quarto.Event)
    and obj is not quarto.Event
    and obj.__module__ == quarto.__name__
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


class _Finished:
    """A finished four-seat table, as a game's ``record`` reads it."""

    players, scores, winners = 4, (5, 2), (0,)


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
    assert ask(ann, protocol.CHAT, now=0.5, text="ready?")["kind"] == protocol.OK
    assert ask(ann, protocol.START, now=1.0)["kind"] == protocol.OK
    assert ask(bob, "swap", now=1.1, give="QH", slot=0, take="KS")["kind"] == protocol.REFUSED
    assert ask(bob, "swap", now=1.1, give="ZZ", slot=0, take="KS")["kind"] == protocol.ERROR
    ask(bob, "ready", now=1.2)
    assert ask(bob, protocol.RESYNC, now=1.25)["kind"] == protocol.OK
    assert ask(twin, protocol.REJOIN, now=1.3, table=1, secret=secret)["reason"] == protocol.SEAT_IN_USE
    assert ask(twin, protocol.REJOIN, now=1.3, table=1, secret=secret, takeover=True)["kind"] == protocol.OK
    # The sign window runs out: the round opens; a swap (its update without a clock, the swapper's with ``own``) and
    # a channel taken (an update with a clock and cooldowns).
    quatro = room_lobby.rooms[1]
    quatro.tick(40.0)
    assert quatro.table is not None and quatro.table.phase is views.Phase.ROUND
    hand, center = quatro.table.hand(0), quatro.table.center
    assert ask(ann, "swap", now=40.1, give=hand[0], slot=0, take=center[0])["kind"] == protocol.OK
    assert ask(ann, "take_channel", now=40.2)["kind"] == protocol.OK
    ask(ann, protocol.LEAVE, now=41.0)

    # A Quarto table: its seating, its bot, its updates with their whole view, an accepted and a refused action.
    cy = _Peer("cy")
    created = ask(cy, protocol.CREATE_TABLE, now=2.0, game=quarto.NAME)
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
    # A watcher of the Quatro table: its table push, its snapshot from no seat, its updates, and back to the lobby.
    wes = _Peer("wes")
    assert ask(wes, protocol.WATCH, now=40.3, table=1)["kind"] == protocol.OK
    ask(bob, "take_channel", now=40.4)
    assert ask(wes, protocol.RESYNC, now=40.5)["kind"] == protocol.OK
    ask(wes, protocol.LEAVE, now=40.6)
    assert ask(cy, protocol.WATCHERS, now=40.7, open=False)["kind"] == protocol.OK
    # The records (section 20): a board, a card.
    room_lobby.records.match_ended(
        "quatro",
        room_lobby.rooms[1].game.record(_Finished(), []),  # type: ignore[arg-type]
        [lobby.Player(f"bot:{level}", f"{level} bot") for level in ("expert", "easy", "hard", "normal")],
        0.0,
    )
    ask(eve, protocol.LEADERBOARD, now=11.0)
    ask(eve, protocol.PLAYER_CARD, now=11.0, person="bot:expert")
    # A proof that this server holds table 1's seat secrets (section 21, version 8).
    ask(eve, protocol.PROVE, now=11.0, table=1, nonce="00" * protocol.MIN_NONCE_BYTES, of="secret")

    conn = _Conn("dee")
    hello = wire.request_from_wire(
        {"kind": protocol.HELLO, "id": 1, "version": protocol.PROTOCOL_VERSION, "name": "dee"}
    )
    replies.append(wire.to_wire(lobby.Lobby().handle(conn, hello, 0.0, greeted=False)))
    return replies + [m for peer in (ann, bob, eve, twin, cy, wes) for m in peer.sent]


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
        "action kinds": set(actions.ACTION_KINDS) | set(quatro_wire.ACTION_KINDS),
        "action fields": {name for cls in actions.PLAYER_ACTIONS for name in _fields(cls)},
        "server kinds": set(protocol.SERVER_KINDS) | {wire.VIEW_KIND},
        "event kinds": {cls.kind for cls in EVENT_CLASSES} | set(quatro_wire.EVENT_KINDS),
        "event fields": {name for cls in EVENT_CLASSES for name in _fields(cls)},
        "rule reasons": {reason.value for reason in actions.Reason},
        "view fields": {
            name
            for cls in (
                views.SeatView,
                views.SeatState,
                views.VoteState,
                views.RoundSummary,
                views.Clock,
                views.OwnTimers,
            )
            for name in _fields(cls)
        },
        "phases": {phase.value for phase in views.Phase},
        "protocol constants (kinds, lobby reasons, codes)": _protocol_words(),
        "error codes (framing and fields)": _error_codes(),
        "bye reasons": _bye_reasons(),
        "vote outcomes": _engine_calls(("_end_vote", "VoteEnded"), 1),
        "round outcomes": _engine_calls(("_end_round", "RoundEnded"), 1) | _engine_calls(("_end_round",), 0),
        "keys of the lobby's messages": _keys(sent),
        "kinds of the lobby's messages": {m["kind"] for m in sent}
        | {e["kind"] for m in sent for e in m.get("events", [])},
        "timing fields": set(timing.STANDARD.values()),
        "timing profiles": set(timing.PROFILES),
        "bot levels": set(bots.LEVELS),
        "games": set(games.names()),
        "Quarto action kinds": set(quarto.ACTION_KINDS) | set(wire.codec(quarto.CONTRACT).actions),
        "Quarto action fields": {name for cls in quarto.PLAYER_ACTIONS for name in _fields(cls)},
        "Quarto event kinds": {cls.kind for cls in QUARTO_EVENT_CLASSES} | set(wire.codec(quarto.CONTRACT).events),
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
    assert {"hello_first", "bad_secret", "rate_limited", "ok", "bye"} <= REQUIRED[
        "protocol constants (kinds, lobby reasons, codes)"
    ]
    assert {"remaining_ms", "next_pulse_ms", "fours", "winners"} <= REQUIRED["view fields"]
    assert {"agreed", "refused", "timeout", "voter_left", "round_over"} <= REQUIRED["vote outcomes"]
    assert {"call", "counter", "draw"} <= REQUIRED["round outcomes"]
    assert {"ok", "refused", "error", "update", "table", "lobby", "bye"} <= REQUIRED["kinds of the lobby's messages"]
    assert {"secret", "wait_ms", "seq", "snapshot", "timing_name", "profiles"} <= REQUIRED[
        "keys of the lobby's messages"
    ]
    assert len(EVENT_CLASSES) == len(quatro_wire.EVENT_KINDS)
    assert {"place", "give", "next_game"} == REQUIRED["Quarto action kinds"]
    assert {"piece_given", "piece_placed", "quarto_game_ended"} <= REQUIRED["Quarto event kinds"]
    assert len(QUARTO_EVENT_CLASSES) == len(wire.codec(quarto.CONTRACT).events) >= 9
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
    "cls",
    [views.SeatView, views.SeatState, views.VoteState, views.Clock, views.OwnTimers],
    ids=lambda cls: cls.__name__,
)
def test_every_view_field_has_a_row(cls):
    doc = _doc()
    missing = [name for name in _fields(cls) if not _rows(doc, name)]
    assert not missing, f"{cls.__name__} fields with no table row: {missing}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


#: Limits a client must know, by module; every int constant of framing and every number of protocol is one.
LIMITS = {
    **{(framing, name): value for name, value in vars(framing).items() if name.isupper() and type(value) is int},
    **{
        (protocol, name): value
        for name, value in vars(protocol).items()
        if name.isupper() and type(value) in (int, float)
    },
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
            "LOBBY_PUSH_EVERY",
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


@pytest.mark.parametrize("field", list(timing.STANDARD.values()))
def test_every_timing_field_has_a_row_with_its_standard_value(field):
    """The fields of the profile and the durations the games declare (``timing.declare``), all in the push."""
    value = _number(timing.STANDARD.values()[field])
    assert any(f"| {value} |" in row for row in _rows(_doc(), field)), (
        f"timing `{field}` (standard {value}) has no row giving its value"
    )


# --- the examples, decoded and held against real messages ------------------------------------------


class _Partial(dict):  # type: ignore[type-arg]
    """A map (or, as ``_PartialList``, an array) of an example that elides some of its members with ``…``."""


class _PartialList(list):  # type: ignore[type-arg]
    pass


class _Unreadable(ValueError):
    pass


_ELLIPSES = ("…", "...")


class _ExampleReader:
    """JSON as the document writes its examples: ``…`` (or ``...``) may stand for elided members of a map or an
    array, or for a whole value (``{…}``); commas around an elision are optional. Anything else is refused."""

    def __init__(self, text: str, at: int) -> None:
        self.text, self.at = text, at

    def _space(self) -> None:
        while self.at < len(self.text) and self.text[self.at].isspace():
            self.at += 1

    def _ellipsis(self) -> bool:
        self._space()
        for mark in _ELLIPSES:
            if self.text.startswith(mark, self.at):
                self.at += len(mark)
                return True
        return False

    def _peek(self) -> str:
        self._space()
        if self.at >= len(self.text):
            raise _Unreadable("the example ends early")
        return self.text[self.at]

    def value(self) -> Any:
        c = self._peek()
        if c == "{":
            return self._map()
        if c == "[":
            return self._array()
        if c == '"':
            return self._string()
        match = re.compile(r"-?\d+(?:\.\d+)?|true|false|null").match(self.text, self.at)
        if not match:
            raise _Unreadable(f"not a value at {self.text[self.at : self.at + 20]!r}")
        self.at = match.end()
        return {"true": True, "false": False, "null": None}.get(match.group(), match.group())

    def _string(self) -> str:
        match = re.compile(r'"((?:[^"\\]|\\.)*)"').match(self.text, self.at)
        if not match:
            raise _Unreadable("an unterminated string")
        self.at = match.end()
        return match.group(1)

    def _map(self) -> dict[str, Any]:
        self.at += 1
        members: dict[str, Any] = {}
        partial = False
        while True:
            if self._ellipsis():
                partial = True
            elif self._peek() == "}":
                self.at += 1
                return _Partial(members) if partial else members
            else:
                key = self._string() if self._peek() == '"' else None
                if key is None or self._peek() != ":":
                    raise _Unreadable(f"not a member at {self.text[self.at : self.at + 20]!r}")
                self.at += 1
                members[key] = None if self._ellipsis() else self.value()  # "key": … elides the value alone
            if self._peek() == ",":
                self.at += 1

    def _array(self) -> list[Any]:
        self.at += 1
        items: list[Any] = []
        partial = False
        while True:
            if self._ellipsis():
                partial = True
            elif self._peek() == "]":
                self.at += 1
                return _PartialList(items) if partial else items
            else:
                items.append(self.value())
            if self._peek() == ",":
                self.at += 1


def _without_comments(block: str) -> str:
    """A code block without its ``//`` comments (outside strings)."""
    lines = []
    for line in block.splitlines():
        quoted, cut = False, len(line)
        for i, c in enumerate(line):
            if c == '"' and (i == 0 or line[i - 1] != "\\"):
                quoted = not quoted
            elif not quoted and line.startswith("//", i):
                cut = i
                break
        lines.append(line[:cut])
    return "\n".join(lines)


def _examples(doc: str) -> list[tuple[str, Any]]:
    """Every message example of the document's code blocks: (its section's number, the map read), or (section, the
    text) for one that cannot be read."""
    found: list[tuple[str, Any]] = []
    section = ""
    for part in re.split(r"^(```.*?^```)", doc, flags=re.S | re.M):
        if not part.startswith("```"):
            headings = re.findall(r"^## (\d+)\.", part, flags=re.M)
            section = headings[-1] if headings else section
            continue
        text = _without_comments(part.split("\n", 1)[1].rsplit("```", 1)[0])
        at = 0
        while (start := text.find("{", at)) >= 0:
            reader = _ExampleReader(text, start)
            try:
                found.append((section, reader.value()))
                at = reader.at
            except _Unreadable:
                depth, at = 0, start  # skip the whole example
                for at in range(start, len(text)):
                    depth += {"{": 1, "}": -1}.get(text[at], 0)
                    if depth == 0:
                        break
                found.append((section, text[start : at + 1]))
                at += 1
    return found


def _labelled_maps(value: Any, label: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every map within ``value`` with its label: its ``kind`` (a Quarto update's ``update/quarto``), else the
    label of the map holding it and its key there (``ok.tables``, ``table.seats``, ``view.seats``)."""
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(value, dict):
        kind = value.get("kind")
        if isinstance(kind, str):
            label = f"{kind}/{value['game']}" if kind == protocol.UPDATE and "game" in value else kind
        found.append((label, value))
        for key, inner in value.items():
            found.extend(_labelled_maps(inner, f"{label}.{key}"))
    elif isinstance(value, list):
        for inner in value:
            found.extend(_labelled_maps(inner, label))
    return found


def _real_key_sets() -> dict[str, list[frozenset[str]]]:
    """The key sets of every map of the messages a real lobby sends, by label."""
    sets: dict[str, list[frozenset[str]]] = {}
    for message in _lobby_messages():
        for label, found in _labelled_maps(message):
            keys = frozenset(found)
            if keys not in sets.setdefault(label, []):
                sets[label].append(keys)
    return sets


EXAMPLES = _examples(_doc())
#: Keys a map of that label carries only when they are not at their default (an update's ``clock`` and ``own``).
_OPTIONAL_KEYS = {
    "update.clock": frozenset({"vote_ms", "vote_wait_ms"}),
    "update.own": frozenset(_fields(views.OwnTimers)),
    "lobby": frozenset({"draining"}),  # version 5: only while the server drains
}


def test_the_examples_are_read():
    """Guards the reader: the sections a client author copies from hold only examples it can read."""
    unread = [
        (section, text[:60]) for section, text in EXAMPLES if isinstance(text, str) and section in {"4", "5", "8", "15"}
    ]
    assert not unread, unread
    read = [example for _, example in EXAMPLES if isinstance(example, dict)]
    assert len(read) > 60, len(read)


def test_every_example_has_the_keys_of_a_real_message():
    """Each example map holds exactly the keys the server sends in a map of its kind (a map eliding members with
    ``…``: only such keys): a field added to the wire and left out of an example, or a removed one still shown,
    fails here. Checked against a real session through a real ``Lobby`` (``_lobby_messages``)."""
    real = _real_key_sets()
    wrong, checked = [], set()
    for section, example in EXAMPLES:
        if isinstance(example, str):
            continue
        for label, found in _labelled_maps(example):
            if label not in real:
                continue
            keys = frozenset(found)
            optional = _OPTIONAL_KEYS.get(label, frozenset())
            if isinstance(found, _Partial):
                fits = keys <= frozenset().union(optional, *real[label])
            else:
                fits = keys - optional in {k - optional for k in real[label]} and keys <= frozenset().union(
                    optional, *real[label]
                )
            if not fits:
                closest = min(real[label], key=lambda k: len(k ^ keys))
                wrong.append((section, label, sorted(closest - keys), sorted(keys - closest)))
            checked.add(label)
    assert not wrong, f"examples unlike the server's messages (section, map, keys missing, keys extra): {wrong}"
    assert {
        "ok",
        "ok.tables",
        "table",
        "table.timing",
        "table.seats",
        "lobby.tables",
        "update",
        "view",
        "view.seats",
        "update.clock",
        "update.own",
        "refused",
        "error",
        "swapped",
        "update/quarto",
    } <= checked, sorted(checked)


def test_the_view_key_count_is_the_views():
    """Section 1 counts the widest real message's keys: a view's fields and its ``kind``."""
    keys = len(dataclasses.fields(views.SeatView)) + 1
    said = re.findall(r"a view, has (\d+) keys", _doc())
    assert said == [str(keys)], (said, keys)


def test_no_constant_has_two_rows():
    """A limit is said once: two rows for one constant drift apart."""
    rows = re.findall(r"^\| `([A-Z][A-Z0-9_]*)`", _doc(), flags=re.M)
    twice = sorted({name for name in rows if rows.count(name) > 1})
    assert not twice, twice


def test_a_move_onto_ones_own_seat_answers_ok_with_it_and_pushes_nothing():
    """As section 6 says of ``move``: the seat already held is no change."""
    room_lobby = lobby.Lobby(seed=3)
    ann, bob = _Peer("ann"), _Peer("bob")
    ask = lambda peer, kind, **fields: wire.to_wire(  # noqa: E731
        room_lobby.handle(peer, wire.request_from_wire({"kind": kind, "id": 1, **fields}), 0.0)
    )
    assert ask(ann, protocol.CREATE_TABLE, players=4)["kind"] == protocol.OK
    assert ask(bob, protocol.JOIN, table=1)["seat"] == 1
    before = len(ann.sent), len(bob.sent)
    assert ask(bob, protocol.MOVE, seat=1) == {"kind": protocol.OK, "id": 1, "seat": 1}
    assert (len(ann.sent), len(bob.sent)) == before
    said = re.sub(r"\s+", " ", _doc())
    assert "A `move` onto the seat the sender already holds answers `ok` with that `seat` and pushes nothing." in said


def test_where_a_client_meets_the_tables_per_address_limit_the_operators_exemption_is_named():
    """``create_table``'s section says how long a table counts against its address and names the option that
    exempts one (a load generator meets the limit first); the option is the server's own."""
    from quatro_server import cli

    doc = _doc()
    section = doc[doc.index("### `create_table`") : doc.index("### `join`")]
    assert "--trusted-address IP`" in section and "`ABANDON_AFTER`" in section, section
    assert "--trusted-address" in Path(cli.__file__).read_text(encoding="utf-8")


# --- what each state of a connection takes ---------------------------------------------------------------


def _section(doc: str, heading: str) -> str:
    start = doc.index(f"### {heading}\n")
    return doc[start : doc.index("\n#", start + 1)]


def _table(text: str) -> list[list[str]]:
    """The cells of each row of the first markdown table in ``text``, its head and rule left out."""
    rows = [line for line in text.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


def test_the_doc_s_acceptance_table_is_the_lobby_s_and_each_refusal_has_its_one_message():
    """The table of what each state of a connection takes, and the message of each of its refusals, say exactly
    what ``quatro_server.tables.accepts`` does."""
    from quatro_server.tables import accepts

    section = _section(_doc(), "What a connection may ask, state by state")
    acceptance, wordings = section.split("Each of these answers has one `message`")
    said = {
        "every game action" if row[0] == "every game action" else row[0].strip("`"): row[1:]
        for row in _table(acceptance)
    }

    def cell(verdict: accepts.Verdict) -> str:
        if verdict is accepts.TAKE:
            return "taken"
        if verdict is accepts.HOST:
            return "host only"
        assert isinstance(verdict, accepts.Refusal)
        return f"`{verdict.reason}`"

    rows = {
        "every game action" if kind == accepts.ACTION else kind for kind in accepts.ACCEPTS[accepts.PeerState.LOBBY]
    }
    assert set(said) == rows
    assert rows - {"every game action"} == set(protocol.LOBBY_KINDS)  # every lobby request has its row
    for kind in accepts.ACCEPTS[accepts.PeerState.LOBBY]:
        name = "every game action" if kind == accepts.ACTION else kind
        assert said[name] == [cell(accepts.ACCEPTS[state][kind]) for state in accepts.PeerState], name
    refusals = {v for row in accepts.ACCEPTS.values() for v in row.values() if isinstance(v, accepts.Refusal)}
    refusals.add(accepts.NOT_HOST)
    assert len({r.reason for r in refusals}) == len(refusals)  # one message per reason
    assert {(row[0].strip("`"), row[1].strip("`"), row[2]) for row in _table(wordings)} == {
        (r.reason, "error" if r.error else "refused", r.message) for r in refusals
    }


# --- the other docs' code examples -------------------------------------------------------------------------


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize("doc", sorted(p.name for p in (Path(__file__).resolve().parent.parent / "docs").glob("*.md")))
def test_every_import_in_a_doc_s_python_example_names_what_exists(doc):
    """An example that imports a module or a name the code does not have (``from shared import …``: the contract
    installs as ``quatro_shared``) teaches the reader something untrue."""
    import importlib
    import importlib.util

    text = (Path(__file__).resolve().parent.parent / "docs" / doc).read_text()
    for block in _python_blocks(text):
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("quatro"):
                module = importlib.import_module(node.module)
                for alias in node.names:
                    assert hasattr(module, alias.name) or importlib.util.find_spec(f"{node.module}.{alias.name}"), (
                        doc,
                        node.module,
                        alias.name,
                    )
            elif isinstance(node, ast.ImportFrom) and node.module:
                assert node.module.split(".")[0] not in {"shared", "server", "tui"}, (doc, node.module)


def test_example_centers_hold_cards_of_a_four_player_deck() -> None:
    """Every ``center`` an example shows is four distinct cards a 4-player deck holds (the examples are 4 seats)."""
    from quatro_shared.games.quatro.cards import deck_for

    deck = set(deck_for(4))
    centers = re.findall(r'"center": \[([^\]]*)\]', _doc())
    assert centers
    for center in centers:
        cards = re.findall(r'"([^"]+)"', center)
        if not cards:
            continue  # an empty center: a view before the deal
        assert len(cards) == len(set(cards)) == 4, center
        assert set(cards) <= deck, f"{center}: not all cards of a 4-player deck"


def test_watch_example_continues_the_watchers_sequence() -> None:
    """The watch example's snapshot carries the audience's seq, not 0: the wire numbers it as the watchers' last frame."""
    section = _doc().split("## 18.", 1)[1].split("## 19.", 1)[0]
    seqs = [int(n) for n in re.findall(r'"kind": "update", "table": \d+, "seq": (\d+), "snapshot": true', section)]
    assert seqs and all(n > 0 for n in seqs)


# --- the lists and the contents, derived from the code ------------------------------------------------------


def _paragraph(doc: str, opening: str) -> str:
    """The paragraph of section 3 that opens with ``opening``, up to its blank line."""
    section = doc[doc.index("## 3. ") : doc.index("## 4. ")]
    start = section.index(opening)
    end = section.find("\n\n", start)
    return section[start : end if end >= 0 else len(section)]


def _named(text: str) -> set[str]:
    """The words a list names in backticks (links' anchors left out)."""
    return set(re.findall(r"`([a-z_]+)`", re.sub(r"\]\([^)]*\)", "]", text)))


def test_section_3_lists_every_request_kind_and_nothing_else():
    """The lobby requests (``LOBBY_KINDS``), then every game's actions (``games.request_kinds()``): a request added to
    the code and left out of the list, or one listed the code does not take, fails here."""
    text = _paragraph(_doc(), "Client → server request kinds:")
    lobby_part, actions_part = text.split("the game actions", 1)
    assert _named(lobby_part) == set(protocol.LOBBY_KINDS), (
        sorted(set(protocol.LOBBY_KINDS) - _named(lobby_part)),
        sorted(_named(lobby_part) - set(protocol.LOBBY_KINDS)),
    )
    game_actions = set(games.request_kinds()) - set(protocol.LOBBY_KINDS)
    assert _named(actions_part) == game_actions, (
        sorted(game_actions - _named(actions_part)),
        sorted(_named(actions_part) - game_actions),
    )


def test_section_3_lists_every_server_kind_and_push_and_nothing_else():
    """Every kind the server sends (``SERVER_KINDS``) and every push (``messages.PUSHES``, the ``chat`` push
    included, and each game's ``update``), as replies and pushes."""
    from quatro_shared import games

    text = _paragraph(_doc(), "Server → client kinds:")
    replies, pushes = text.split("(replies)", 1)
    push_kinds = {cls.kind for cls in messages.PUSHES} | {game.update.kind for game in games.CONTRACTS.values()}
    reply_kinds = set(protocol.SERVER_KINDS) - push_kinds
    assert _named(replies) == reply_kinds, (
        sorted(reply_kinds - _named(replies)),
        sorted(_named(replies) - reply_kinds),
    )
    assert _named(pushes) == push_kinds, (sorted(push_kinds - _named(pushes)), sorted(_named(pushes) - push_kinds))
    assert push_kinds - {protocol.CHAT} <= set(protocol.SERVER_KINDS)


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but hyphens and underscores dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_contents_list_every_section_in_order():
    """The contents are the document's ``##`` headings, each once, in their order, each linked to its anchor."""
    doc = _doc()
    headings = re.findall(r"^## (.+)$", _prose(doc), flags=re.M)
    contents = doc[doc.index("Contents:") : doc.index("\n---\n")]
    listed = re.findall(r"^\d+\. \[(.+)\]\(#([^)]+)\)$", contents, flags=re.M)
    assert [title for title, _ in listed] == [re.sub(r"^\d+\. ", "", h) for h in headings], (listed, headings)
    assert [anchor for _, anchor in listed] == [_anchor(h) for h in headings]


def test_hello_s_person_key_is_bounded_by_its_own_constant():
    """``hello``'s ``person`` takes 1 to ``MAX_PERSON_KEY_LEN`` characters, and the handshake's row says that constant."""

    def hello(person: str) -> Any:
        return wire.request_from_wire(
            {"kind": protocol.HELLO, "id": 1, "version": protocol.PROTOCOL_VERSION, "name": "ann", "person": person}
        )

    assert hello("k" * protocol.MAX_PERSON_KEY_LEN).body.person == "k" * protocol.MAX_PERSON_KEY_LEN
    with pytest.raises(protocol.RequestError) as refused:
        hello("k" * (protocol.MAX_PERSON_KEY_LEN + 1))
    assert refused.value.code == protocol.BAD_REQUEST
    handshake = _doc().split("## 4. The handshake", 1)[1].split("## 5.", 1)[0]
    row = next(line for line in handshake.splitlines() if line.startswith("| `person` |"))
    assert f"`MAX_PERSON_KEY_LEN` ({protocol.MAX_PERSON_KEY_LEN})" in row, row


def _section_14_row(table_heading: str, first: str) -> str:
    doc = _doc()
    table = doc[doc.index(table_heading) :]
    table = table[: table.index("\n### ", 1)]
    return next(line for line in table.splitlines() if line.startswith(f"| `{first}` |"))


def test_a_negative_offset_or_start_is_an_error_where_the_wire_says_so():
    """``past_matches``'s ``offset`` and ``replay``'s ``start`` below 0 are answered ``error`` ``bad_request``
    (``tests/test_replay_seat.py`` over TCP), ``leaderboard``'s ``offset`` ``refused`` (``test_hostile_input``)."""
    refused = _section_14_row("### `refused` reasons from the lobby and the server", protocol.BAD_REQUEST)
    assert "past_matches" not in refused and "replay" not in refused, refused
    error = _section_14_row("### `error` codes", protocol.BAD_REQUEST)
    assert "`past_matches`" in error and "`replay`" in error, error
    assert "leaderboard" in _section_14_row("### `refused` reasons of the records", protocol.BAD_REQUEST)


def test_every_place_that_lists_not_over_says_a_replay_of_a_match_being_played_is_refused_it():
    """A replay of a match still being played, a table's first match included, is refused ``not_over``
    (``tests/test_replay_seat.py``), as a ``rematch`` while a match is under way."""
    doc = _doc()
    replay = doc[doc.index("### `replay`\n") : doc.index("## 7. ")]
    row = _section_14_row("### `refused` reasons from the lobby and the server", protocol.NOT_OVER)
    replays = doc[doc.index("## 19. ") : doc.index("## 20. ")]
    for text in (replay, row, replays):
        assert "a table's first match" in re.sub(r"\s+", " ", text), text[:200]
    assert "`rematch`" in row


_CARD_LIKE = re.compile(r'"((?:10|[2-9AKQJ])[SHDC])"')


def test_every_example_card_is_a_card_of_its_table_s_deck():
    """Every card an example shows (a string shaped like one, in any code block) is a card of the deck of its table:
    a Quatro table's of the example's ``players`` (4 where the block names no Quatro table's: section 17's ``swap``
    sent to a Quarto table shows a 4-player table's cards), from ``deck_for``. A card that no deal of its table holds,
    or no card at all (``2D``), fails here."""
    from quatro_shared.games.quatro.cards import deck_for

    doc = _doc()
    wrong = []
    section = ""
    for part in re.split(r"^(```.*?^```)", doc, flags=re.S | re.M):
        if not part.startswith("```"):
            headings = re.findall(r"^## (\d+)\.", part, flags=re.M)
            section = headings[-1] if headings else section
            continue
        players = {int(n) for n in re.findall(r'"players": (\d+)', part)} & {4, 6, 8} or {4}
        deck = set().union(*(deck_for(n) for n in players))
        wrong += [(section, card) for card in _CARD_LIKE.findall(part) if card not in deck]
    assert not wrong, f"example cards no deal of their table holds (section, card): {wrong}"


def _section_14_first_cells() -> set[str]:
    doc = _doc()
    section = doc[doc.index("## 14. ") : doc.index("## 15. ")]
    cells: set[str] = set()
    for line in section.splitlines():
        first = re.match(r"^\| (`[^|]*`) \|", line)
        if first:
            cells |= set(re.findall(r"`([a-z_]+)`", first.group(1)))
    return cells


def test_section_14_lists_every_reason_and_code_of_the_code_and_nothing_else():
    """Every reason or code constant of ``quatro_shared.protocol`` (its snake_case words that are no kind and no game)
    has a row in section 14's tables, and those rows name only the code's reasons: the protocol's, the rules'
    (``actions.Reason``) and the framing's and fields' error codes."""
    kinds = set(protocol.LOBBY_KINDS) | set(protocol.SERVER_KINDS) | set(games.names())
    reasons = _protocol_words() - kinds
    cells = _section_14_first_cells()
    assert not reasons - cells, f"reasons of shared/protocol.py with no row in section 14: {sorted(reasons - cells)}"
    known = reasons | {reason.value for reason in actions.Reason} | _error_codes()
    assert not cells - known, f"section 14 names reasons the code does not have: {sorted(cells - known)}"
