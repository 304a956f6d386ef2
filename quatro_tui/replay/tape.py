"""A replay as the player steps through it: the frames a seat was sent, read as the live client reads updates.

A ``Tape`` is built from the ``replay`` reply's frames (``quatro_shared.messages.ReplayFrames``) by the one client
core (``quatro_shared.client.ClientCore``): each frame goes through ``receive_data`` as the bytes of an ``update``
push, and the core's ``Updated`` (the seat's view after it, and its events) is one step. So the screens are fed
exactly what they would have been fed live.

Where the frames come from:

- a server, over the protocol (``fetch``: ``replay``, chunk after chunk);
- a journal on this machine (``load``): ``quatro-server replay FILE|ID --seat N`` is run, which builds the frames
  with the very code the server answers ``replay`` with, and prints the whole reply; the client never imports the
  server.
"""

from __future__ import annotations

import socket
import ssl
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.client import Answered, ClientCore, Updated
from quatro_shared.framing import encode
from quatro_shared.tables import TablePhase
from quatro_shared.tls import Endpoint, tls_trouble
from quatro_shared.wire import WireError, reply_from_wire

#: Seconds to wait for a server's reply, or for the journal to be read.
TIMEOUT = 60.0


class ReplayError(Exception):
    """Why there is no replay to show (said to the player as it is)."""


@dataclass(frozen=True, slots=True)
class Step:
    """One frame: its match time, the seat's view after it and its events (as the client core read them)."""

    at_ms: int
    view: Any
    events: tuple[Any, ...]
    game: str


@dataclass(slots=True)
class Tape:
    """A seat's replay of one match."""

    table: int
    match: int
    seat: int
    game: str
    players: int
    names: tuple[str, ...]
    bot_seats: tuple[int, ...]
    timing: dict[str, float]
    steps: list[Step] = field(default_factory=list)
    #: ``(frame, lines)``: shown from that frame on (empty: nothing from there on).
    notes: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)

    @classmethod
    def from_chunks(cls, chunks: list[m.ReplayFrames]) -> Tape:
        """The tape of a replay received whole, chunk after chunk. Raises ``ReplayError`` if a frame cannot be read."""
        first = chunks[0]
        tape = cls(
            first.table,
            first.match,
            first.seat,
            first.game,
            first.players,
            first.names,
            first.bot_seats,
            dict(first.timing),
            notes=[(note.frame, note.lines) for note in first.notes],
        )
        core = ClientCore("replay")
        for part in chunks:
            for frame, at_ms in zip(part.frames, part.times, strict=True):
                for event in core.receive_data(encode(frame), at_ms / 1000):
                    if not isinstance(event, Updated):
                        raise ReplayError(f"frame {len(tape.steps)} of the replay cannot be read")
                    tape.steps.append(Step(at_ms, event.view, tuple(event.update.events), event.game))
        return tape

    def note_at(self, index: int) -> tuple[str, ...]:
        """What shows beside frame ``index``: the last note at or before it."""
        shown: tuple[str, ...] = ()
        for frame, lines in self.notes:
            if frame > index:
                break
            shown = lines
        return shown

    def seat_words(self, seat: int) -> str:
        """A seat as a person picks or reads it: "seat 3 (ann)", counted from 1 as the waiting room counts seats."""
        name = self.names[seat] if seat < len(self.names) else ""
        return f"seat {seat + 1} ({name or 'nobody'})"

    def seating(self) -> m.Seating:
        """The ``table`` push of the replayed table: names and bots, as the screens read them."""
        seats = tuple(
            m.SeatInfo(
                seat=i, name=name or None, bot="bot" if i in self.bot_seats else None, taken=bool(name), connected=True
            )
            for i, name in enumerate(self.names)
        )
        return m.Seating(self.table, self.players, TablePhase.PLAYING, None, dict(self.timing), "", seats, self.game)


def _reply(data: bytes) -> m.ReplayFrames:
    try:
        reply = reply_from_wire(msgpack.unpackb(data, raw=False), m.ReplayFrames)
    except (WireError, ValueError, msgpack.UnpackException) as exc:
        raise ReplayError(f"the replay could not be read ({exc})") from exc
    assert isinstance(reply, m.Ok) and isinstance(reply.payload, m.ReplayFrames)
    return reply.payload


def load(
    target: str, seat: int, *, match: int | None = None, table: int | None = None, data_dir: Path | None = None
) -> Tape:
    """A replay from a journal on this machine: ``target`` a journal file (``table`` naming the table) or a table id
    of ``data_dir``'s journal. Raises ``ReplayError`` with what went wrong."""
    command = [sys.executable, "-m", "quatro_server", "replay", target, "--seat", str(seat)]
    if table is not None:
        command += ["--table", str(table)]
    if match is not None:
        command += ["--match", str(match)]
    if data_dir is not None:
        command += ["--data-dir", str(data_dir)]
    try:
        done = subprocess.run(command, capture_output=True, timeout=TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ReplayError(f"the journal could not be read ({exc})") from exc
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().removeprefix("quatro-server replay: ")
        raise ReplayError(said or f"the journal could not be read (status {done.returncode})")
    return Tape.from_chunks([_reply(done.stdout)])


class _Link:
    """A blocking connection through the client core, for the command line (before any screen shows)."""

    def __init__(
        self, host: str, port: int, name: str, tls: ssl.SSLContext | None = None, tls_ca: str | None = None
    ) -> None:
        try:
            sock = socket.create_connection((host, port), timeout=TIMEOUT)
            self.sock = sock if tls is None else tls.wrap_socket(sock, server_hostname=host)
        except OSError as exc:
            trouble = tls_trouble(exc, Endpoint(host, port, True, tls_ca)) if tls is not None else None
            raise ReplayError(trouble or f"cannot reach {host}:{port} ({exc.strerror or exc})") from exc
        self.core = ClientCore(name)
        reply = self.ask(m.Hello(p.PROTOCOL_VERSION, name))
        if not isinstance(reply, m.Ok):
            raise ReplayError(getattr(reply, "message", "the server refused hello"))

    def ask(self, body: m.RequestBody) -> m.Reply:
        request_id, data = self.core.send(body, 0.0)
        self.sock.sendall(data)
        while True:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ReplayError("the server closed the connection")
            for event in self.core.receive_data(chunk, 0.0):
                if isinstance(event, Answered) and event.id == request_id:
                    return event.reply

    def close(self) -> None:
        self.sock.close()


def fetch(
    host: str,
    port: int,
    name: str,
    table: int,
    seat: int,
    *,
    match: int | None = None,
    password: str | None = None,
    secret: str | None = None,
    tls: ssl.SSLContext | None = None,
    tls_ca: str | None = None,
) -> Tape:
    """A replay from a server, over the protocol (over TLS with ``tls``, ``quatro_shared.tls``). Raises
    ``ReplayError`` (a refusal's own words)."""
    link = _Link(host, port, name, tls, tls_ca)
    try:
        received: list[m.ReplayFrames] = []
        while True:
            start = sum(len(part.frames) for part in received)
            reply = link.ask(m.Replay(table, seat, match=match, start=start or None, password=password, secret=secret))
            if not isinstance(reply, m.Ok) or not isinstance(reply.payload, m.ReplayFrames):
                raise ReplayError(getattr(reply, "message", "the server refused the replay"))
            received.append(reply.payload)
            if not reply.payload.frames or start + len(reply.payload.frames) >= reply.payload.total:
                break
        return Tape.from_chunks(received)
    finally:
        link.close()
