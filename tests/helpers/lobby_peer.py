"""A connection as the lobby sees it, for tests that drive a ``Lobby`` without a socket."""

from __future__ import annotations

from typing import Any

from quatro_shared.framing import FrameDecoder


def decoded(message: dict[str, Any] | bytes) -> dict[str, Any]:
    """A message as the peer reads it: a frame the room encoded once (an update, the seating) is decoded."""
    if isinstance(message, bytes):
        (frame,) = FrameDecoder().feed(message)
        return frame
    return message


class RecordingPeer:
    """Keeps every message it is sent, decoded."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.room: Any = None
        self.seat: int | None = None
        self.person: str | None = None
        self.origin: str | None = None  # in this process: trusted, unlimited
        self.sent: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any] | bytes) -> None:
        self.sent.append(decoded(message))

    def close(self, reason: str) -> None:
        pass
