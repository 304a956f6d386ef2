"""Hidden information, checked from the receiving end (H1, H3): does a frame carry what its seat may not see?

A frame is judged against what its seat may know at that moment: its own hand, the center, its team's sign,
its own channel emoji, and what the frame itself makes public (a public swap, a deal, a pulse). Anything else
that looks like a card or a sign, before the reveal, is a leak; so is a private event addressed to another
seat or team, a seat secret in any frame but the owner's own ``create_table``/``join`` reply, and a card, a
sign or a private key in a seating, lobby or reply frame. A watcher's frames (protocol section 18) are judged as the
public audience's, seat ``NO_SEAT`` of no team: no hand, no team's sign and no seat's emoji choice before the reveal,
no cooldowns and no seat's own part of a view (``watcher_frame_leaks``). The caller may pass the engine's truth (the tests
record it) or rely on the seat's view as its client knows it (``quatro-server soak``, which sees only the wire:
a snapshot's view, or the state built from the updates since with ``quatro_shared.games.quatro.apply``; protocol 2 sends a
full view only in a snapshot).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from quatro_shared import protocol as p
from quatro_shared.framing import maps
from quatro_shared.games.quatro.cards import is_card
from quatro_shared.games.quatro.signs import is_sign
from quatro_shared.tables import NO_SEAT

#: Keys that name something private; never in a seating, lobby or reply frame (but the seat's own secret).
PRIVATE_KEYS = frozenset({"hand", "hands", "sign", "signs", "secret", "channel_sign", "center"})
#: Exactly the keys of an update: a snapshot carries the seat's view, any other update may carry the table's
#: countdowns (``clock``) and the seat's own cooldowns (``own``); nothing else.
UPDATE_KEYS = frozenset({"kind", "table", "seq", "snapshot", "at", "events"})
SNAPSHOT_KEYS = UPDATE_KEYS | {"view"}
DELTA_KEYS = UPDATE_KEYS | {"clock", "own"}


def _map(value: object) -> Mapping[str, object]:
    """A map of a frame, or an empty one where the frame holds something else there. A malformed part never makes a
    card or a sign public; every value it holds is still seen by the scan of the whole frame (``values``)."""
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[object]:
    """A list of a frame, or an empty one where the frame holds something else there (as ``_map``)."""
    return value if isinstance(value, list) else []


def values(obj: object) -> Iterator[object]:
    """Every scalar value inside a decoded frame (keys excluded)."""
    if isinstance(obj, dict):
        for value in obj.values():
            yield from values(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from values(value)
    else:
        yield obj


def keys(obj: object) -> Iterator[str]:
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield key
            yield from keys(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from keys(value)


def before_reveal(frame: Mapping[str, object]) -> dict[str, object]:
    """An update without its reveal (``round_ended`` events, the view's summary): what must hold no secret. A part
    that is not what an update holds there (events not a list, a view not a map) is kept whole, to be scanned."""
    events = frame["events"]
    if isinstance(events, list):
        events = [ev for ev in events if _map(ev).get("kind") != "round_ended"]
    if "view" not in frame:
        return {**frame, "events": events}
    view = frame["view"]
    if isinstance(view, dict):
        view = {k: v for k, v in view.items() if k != "summary"}
    return {**frame, "view": view, "events": events}


def update_leaks(
    frame: Mapping[str, object],
    seat: int,
    team: int,
    *,
    own_hand: Iterable[str] | None = None,
    center: Iterable[str] | None = None,
    own_sign: str | None = None,
    own_emoji: str | None = None,
    truth: bool = False,
    known: Mapping[str, object] | None = None,
) -> list[str]:
    """What an ``update`` for ``seat`` (of ``team``) carries that the seat may not see; empty when nothing.

    With ``truth`` the hand, center, sign and emoji are the engine's (a test's record); otherwise they are taken
    from the frame's own view (a snapshot) or from ``known``, the seat's view in wire form as its client built it
    with this update applied; either still catches any card or sign that the rest of the frame shows beyond it.
    """
    leaks: list[str] = []
    snapshot = frame.get("snapshot")
    if not (UPDATE_KEYS <= set(frame) <= (SNAPSHOT_KEYS if snapshot else DELTA_KEYS)) or (
        snapshot and "view" not in frame
    ):
        leaks.append(f"update keys {sorted(frame)}")
        return leaks
    given = frame.get("view", known)
    if not frame["events"] and not snapshot:
        leaks.append("an empty update (it tells when something private happened)")
    view = _map(given)
    if given is None:
        if not truth:
            leaks.append("an update that is not a snapshot before any snapshot")
            return leaks
    elif view.get("seat") != seat or view.get("team") != team:
        leaks.append(f"a view of seat {view.get('seat')} sent to seat {seat}")
    public_cards: set[object]
    shown_signs: set[object]
    if truth:
        public_cards = set(center or ()) | set(own_hand or ())
        shown_signs = {own_sign, own_emoji}
    else:
        public_cards = set(_list(view.get("center"))) | set(_list(view.get("hand")))
        shown_signs = {view.get("sign"), view.get("channel_sign")}
    leaks += misaddressed(maps(frame["events"]), seat, team)
    hidden = before_reveal(frame)
    for ev in maps(hidden["events"]):
        kind = ev.get("kind")
        if kind == "swapped":
            public_cards |= {ev.get("put_down"), ev.get("taken")}
        elif kind == "dealt":
            public_cards |= set(_list(ev.get("center")))
        elif kind == "hand_dealt" and ev.get("seat") == seat:
            public_cards |= set(_list(ev.get("hand")))
        elif kind == "pulse":
            shown_signs.add(ev.get("sign"))
        elif kind in ("emoji_chosen",) and ev.get("seat") == seat:
            shown_signs.add(ev.get("sign"))
        elif kind == "sign_chosen" and ev.get("team") == team:
            shown_signs.add(ev.get("sign"))
    if "view" in hidden:
        shown_signs |= {s.get("last_pulse") for s in maps(_map(hidden["view"]).get("seats"))}
    for value in values(hidden):
        if is_card(value) and value not in public_cards:
            leaks.append(f"card {value}")
        if is_sign(value) and value not in shown_signs:
            leaks.append(f"sign {value}")
    return leaks


def misaddressed(events: Iterable[Mapping[str, object]], seat: int, team: int) -> list[str]:
    """The events that are another seat's or team's alone (H1): a hand dealt, a team's sign, a seat's chosen emoji.
    Every other event is the table's: its cards and signs are public (a swap, a deal's center, a pulse, a reveal)."""
    leaks = []
    for ev in events:
        kind = ev.get("kind")
        if kind == "hand_dealt" and ev.get("seat") != seat:
            leaks.append(f"hand_dealt of seat {ev.get('seat')}")
        elif kind == "sign_chosen" and ev.get("team") != team:
            leaks.append(f"sign_chosen of team {ev.get('team')}")
        elif kind == "emoji_chosen" and ev.get("seat") != seat:
            leaks.append(f"emoji_chosen of seat {ev.get('seat')}")
    return leaks


#: The keys of a ``recent`` push (protocol 7).
RECENT_KEYS = frozenset({"kind", "table", "game", "events"})


def recent_leaks(frame: Mapping[str, object], seat: int | None, team: int | None) -> list[str]:
    """What a ``recent`` push (a rejoiner's events of its match, protocol 7) carries that its seat may not see: it
    goes to a seated connection only, holds its declared keys, and no event of another seat or team (H1). Its cards
    and signs are those of the table's own events, public when they happened."""
    if seat is None or team is None:
        return ["a recent frame to a connection with no seat"]
    leaks = [f"recent keys {sorted(frame)}"] if set(frame) != RECENT_KEYS else []
    events = frame.get("events")
    if not isinstance(events, list) or not all(isinstance(ev, dict) for ev in events):
        return [*leaks, "recent events that are not a list of events"]
    return leaks + misaddressed(maps(events), seat, team)


def frame_leaks(
    frame: Mapping[str, object],
    seat: int | None,
    team: int | None,
    *,
    own_secret: str | None = None,
    secrets: Iterable[str] = (),
    known: Mapping[str, object] | None = None,
) -> list[str]:
    """What any frame received by one connection carries that it may not see (``seat``/``team``: where it sits,
        None in the lobby). ``secrets``: every seat secret known to the caller (they must appear nowhere but in
        their owner's own create/join reply, which holds ``own_secret``). ``known``: the seat's view as its client
    built it, with this frame applied (for an update that is not a snapshot)."""
    leaks: list[str] = []
    others = set(secrets) - {own_secret}
    found = [v for v in values(frame) if isinstance(v, str) and v in others]
    if found:
        leaks.append("another seat's secret")
    kind = frame.get("kind")
    if kind == p.UPDATE:
        if seat is None or team is None:
            return [*leaks, "an update to a connection with no seat"]
        return leaks + update_leaks(frame, seat, team, known=known)
    if kind == p.RECENT:
        return leaks + recent_leaks(frame, seat, team)
    private = PRIVATE_KEYS & set(keys(frame))
    if kind == p.OK and frame.get("secret") is not None and frame.get("secret") == own_secret:
        private -= {"secret"}
    if private:
        leaks.append(f"private keys {sorted(private)} in a {kind} frame")
    checked: Mapping[str, object] = frame
    if kind == p.TABLE:  # names are the players' own words (a player may call itself "QH"); the rest is checked
        seats = frame.get("seats", [])
        if isinstance(seats, list):  # anything else is checked whole
            seats = [{k: v for k, v in s.items() if k != "name"} if isinstance(s, dict) else s for s in seats]
        checked = {**frame, "seats": seats}
    if kind == p.OK and "name" in frame:
        checked = {k: v for k, v in frame.items() if k != "name"}
    for value in values(checked):
        if is_card(value) or is_sign(value):
            leaks.append(f"{value!r} in a {kind} frame")
    return leaks


def watcher_frame_leaks(
    frame: Mapping[str, object], *, known: Mapping[str, object] | None = None, secrets: Iterable[str] = ()
) -> list[str]:
    """What a frame received by a watcher of a table (protocol section 18) carries that the public table may not see;
    ``known``: the watcher's view as its client built it, with this frame applied (for an update that is not a
    snapshot). Its updates are judged as seat ``NO_SEAT``'s, of no team (the public audience): a hand, a team's sign or
    a seat's chosen emoji, any card or sign beyond the public ones before the reveal, a seat's cooldowns, or a view
    that holds a seat's own part is a leak. Its other frames are judged as a lobby connection's."""
    if frame.get("kind") != p.UPDATE:
        return frame_leaks(frame, None, None, secrets=secrets)
    leaks: list[str] = []
    if any(isinstance(v, str) and v in set(secrets) for v in values(frame)):
        leaks.append("a seat's secret")
    if "own" in frame:
        leaks.append("a seat's cooldowns in a watcher's update")
    view = _map(frame.get("view", known))
    if (
        view.get("hand")
        or view.get("sign") is not None
        or view.get("channel_sign") is not None
        or view.get("channel_held")
    ):
        leaks.append("a seat's own part in a watcher's view")
    return leaks + update_leaks(frame, NO_SEAT, NO_SEAT, known=known)
