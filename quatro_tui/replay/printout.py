"""``quatro replay --print``: a seat's replay as text, one frame a line, for a script or a quick look.

A header line (``#``), then per frame its match time and the ``update`` as the seat was sent it, in JSON; after a
frame, the notes that show from it on, each line starting ``#   ``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from quatro_shared.wire import to_wire

from quatro_tui.replay.player import clock_text
from quatro_tui.replay.tape import Tape


def lines(tape: Tape) -> Iterator[str]:
    yield (
        f"# table {tape.table}, match {tape.match}, {tape.seat_words(tape.seat)}, {tape.game}: {len(tape.steps)} frames"
    )
    notes = dict(tape.notes)
    for i, step in enumerate(tape.steps):
        events = [to_wire(event) for event in step.events]
        yield f"{clock_text(step.at_ms)} {json.dumps(events, separators=(',', ':'), ensure_ascii=False)}"
        for line in notes.get(i, ()):
            yield f"#   {line}"
