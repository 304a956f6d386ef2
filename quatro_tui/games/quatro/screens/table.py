"""The table during a round: partner across the top, opponents around, the center above one's own hand.

Keys mirror the layout: ``q w e r`` pick a center slot (drawn above), ``a s d f`` a card of the hand (drawn
below); one of each makes a swap. The arrows and ``enter`` do the same, and so does clicking a card then a slot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer

from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro.cards import is_four_of_a_kind
from quatro_shared.games.quatro.seating import team_count
from quatro_shared.games.quatro.signs import SIGNS
from quatro_shared.games.quatro.views import Phase
from quatro_shared.messages import Ok

from quatro_tui.games.quatro.screens.dialogs import ConfirmCall, CounterTeam, EmojiPicker
from quatro_tui.games.quatro.table import QuatroTable, quatro_table
from quatro_tui.games.quatro.widgets import CardRow, SeatBox, SelfPanel, VotePrompt
from quatro_tui.guard import KeyGuard
from quatro_tui.widgets import Feed, StatusBar

if TYPE_CHECKING:
    from textual import getters

    from quatro_tui.app import QuatroApp

CENTER_KEYS = "qwer"
HAND_KEYS = "asdf"
#: Emoji keys 2–9 choose decoys; 1 always shows the team's own sign (the one that matters most, R11).
DECOY_KEYS = "23456789"


def placement(players: int, me: int) -> tuple[list[int], list[int], list[int]]:
    """Seats around oneself (at the bottom): the left column top to bottom, the top row left to right, the right column.

    Play goes round the table clockwise; the partner (R1) is always in the middle of the top row.
    """
    around = [(me + offset) % players for offset in range(1, players)]
    if players == 4:
        left, top, right = around[:1], around[1:2], around[2:]
    elif players == 6:
        left, top, right = around[:1], around[1:4], around[4:]
    else:
        left, top, right = around[:2], around[2:5], around[5:]
    return list(reversed(left)), top, right


def decoys(sign: str | None) -> list[str]:
    """The signs keys 2–9 choose: the first eight of the 24 that are not the team's sign."""
    return [s for s in SIGNS if s != sign][: len(DECOY_KEYS)]


class TableScreen(KeyGuard, Screen[None]):
    """The round itself. Every key that acts on the round waits out the guard (a late key from signing)."""

    GUARDED = frozenset(
        {"pick_hand", "pick_slot", "pick_cursor", "channel", "emoji", "picker", "call", "counter", "reshuffle", "vote"}
    )

    if TYPE_CHECKING:
        app = getters.app(QuatroApp)  # self.app as this client's app, for the type checker

    MOUSE_HELP = "click a card of your hand, then a center slot, to swap them"

    BINDINGS = [
        *[
            Binding(key, f"pick_hand({i})", f"hand card {i + 1}", show=False, id=f"hand-{i + 1}")
            for i, key in enumerate(HAND_KEYS)
        ],
        *[
            Binding(key, f"pick_slot({i})", f"center slot {i + 1}", show=False, id=f"slot-{i + 1}")
            for i, key in enumerate(CENTER_KEYS)
        ],
        Binding("escape", "clear", "clear the selection", show=False, id="clear"),
        Binding("left", "cursor(-1, 0)", "cursor left", show=False, id="cursor-left"),
        Binding("right", "cursor(1, 0)", "cursor right", show=False, id="cursor-right"),
        Binding("up", "cursor(0, -1)", "cursor to the center", show=False, id="cursor-up"),
        Binding("down", "cursor(0, 1)", "cursor to the hand", show=False, id="cursor-down"),
        Binding("enter", "pick_cursor", "pick the card at the cursor", show=False, id="pick"),
        Binding("c", "channel", "channel", tooltip="take or release your channel", id="channel"),
        Binding(
            "1",
            "emoji('sign')",
            "sign",
            tooltip="show your team's sign on your channel (taking it if need be)",
            id="emoji-sign",
        ),
        *[
            Binding(key, f"emoji({i})", f"show decoy {i + 1}", show=False, id=f"emoji-{key}")
            for i, key in enumerate(DECOY_KEYS)
        ],
        Binding(
            "0", "emoji('none')", "show nothing", show=False, tooltip="show nothing on your channel", id="emoji-none"
        ),
        Binding(
            "p",
            "picker",
            "emoji picker",
            show=False,
            tooltip="pick any of the 24 for your channel (taking it if need be)",
            id="picker",
        ),
        Binding("space", "call", "Quatro!", tooltip="call: your partner holds four of a kind", id="call"),
        Binding("x", "counter", "Counter!", tooltip="counter: an opposing team holds four of a kind", id="counter"),
        Binding(
            "v", "reshuffle", "reshuffle", tooltip="ask for a reshuffle (every other human must agree)", id="reshuffle"
        ),
        Binding("y", "vote(True)", "vote yes", show=False, id="vote-yes"),
        Binding("n", "vote(False)", "vote no", show=False, id="vote-no"),
    ]

    selected_hand: reactive[int | None] = reactive(None)
    selected_slot: reactive[int | None] = reactive(None)
    #: The keyboard cursor: (row, index), row 0 the center, row 1 the hand.
    cursor: reactive[tuple[int, int] | None] = reactive(None)

    @property
    def game(self) -> QuatroTable:
        return quatro_table(self.app.game)

    def compose(self) -> ComposeResult:
        game = self.game
        view = game.view
        me = view.seat if view is not None else 0
        left, top, right = placement(game.players, me)
        yield StatusBar()
        with Vertical(id="table"):
            with Horizontal(id="top"):
                for seat in top:
                    yield SeatBox(seat)
            with Horizontal(id="middle"):
                with Vertical(id="left", classes="side"):
                    for seat in left:
                        yield SeatBox(seat)
                with Vertical(id="board"):
                    yield CardRow("center", CENTER_KEYS, id="center")
                    yield CardRow("hand", HAND_KEYS, id="hand")
                with Vertical(id="right", classes="side"):
                    for seat in right:
                        yield SeatBox(seat)
        yield VotePrompt()
        with Horizontal(id="bottom"):
            yield SelfPanel()
            yield Feed()
        yield Footer()

    def on_screen_resume(self) -> None:
        self.app.game_changed()

    # --- selecting and swapping ---------------------------------------------------------------------

    def watch_selected_hand(self, value: int | None) -> None:
        self.query_one("#hand", CardRow).selected = value

    def watch_selected_slot(self, value: int | None) -> None:
        self.query_one("#center", CardRow).selected = value

    def watch_cursor(self, value: tuple[int, int] | None) -> None:
        self.query_one("#center", CardRow).cursor = value[1] if value and value[0] == 0 else None
        self.query_one("#hand", CardRow).cursor = value[1] if value and value[0] == 1 else None

    def action_pick_hand(self, index: int) -> None:
        self.selected_hand = None if self.selected_hand == index else index
        self._swap_if_ready()

    def action_pick_slot(self, index: int) -> None:
        self.selected_slot = None if self.selected_slot == index else index
        self._swap_if_ready()

    def action_clear(self) -> None:
        self.selected_hand = self.selected_slot = None
        self.cursor = None

    def action_cursor(self, dx: int, dy: int) -> None:
        row, index = self.cursor or (1, 0)
        if self.cursor is not None:
            row = min(1, max(0, row + dy))
            index = (index + dx) % 4
        self.cursor = (row, index)

    def action_pick_cursor(self) -> None:
        if self.cursor is None:
            self.cursor = (1, 0)
            return
        row, index = self.cursor
        if row == 0:
            self.action_pick_slot(index)
        else:
            self.action_pick_hand(index)

    def on_card_row_clicked(self, message: CardRow.Clicked) -> None:
        if message.row == "hand":
            self.action_pick_hand(message.index)
        else:
            self.action_pick_slot(message.index)

    def _swap_if_ready(self) -> None:
        view = self.game.view
        hand, slot = self.selected_hand, self.selected_slot
        if hand is None or slot is None or view is None:
            return
        self.selected_hand = self.selected_slot = None
        if view.phase is not Phase.ROUND or hand >= len(view.hand) or slot >= len(view.center):
            return
        # The card expected in the slot travels with the swap: if someone took it first, the server refuses (R10).
        self.app.send(a.Swap(give=view.hand[hand], slot=slot, take=view.center[slot]))

    # --- the channel --------------------------------------------------------------------------------

    def action_channel(self) -> None:
        view = self.game.view
        if view is not None:
            self.app.send(a.ReleaseChannel() if view.channel_held else a.TakeChannel())

    def action_emoji(self, which: str | int) -> None:
        view = self.game.view
        if view is None:
            return
        if which == "sign":
            sign = view.sign
        elif which == "none":
            sign = None
        else:
            sign = decoys(view.sign)[int(which)]
        self.choose(sign)

    def choose(self, sign: str | None) -> None:
        view = self.game.view
        if view is None:
            return
        if view.channel_held:
            self.app.send(a.ChooseEmoji(sign))
        elif sign is not None:
            # Choosing an emoji without the channel takes it first: when four of a kind comes, showing the sign
            # is one key, not two (R11 still holds: nothing is shown before control is taken).
            self.app.run_worker(self._take_and_choose(sign), group="requests", exit_on_error=False)

    async def _take_and_choose(self, sign: str) -> None:
        if isinstance(await self.app.request(a.TakeChannel()), Ok):
            await self.app.request(a.ChooseEmoji(sign))

    def action_picker(self) -> None:
        self.app.push_screen(EmojiPicker(), self.choose_picked)

    def choose_picked(self, sign: str | None) -> None:
        if sign:
            self.choose(sign)

    # --- calls, counters, votes ------------------------------------------------------------------------

    def action_call(self) -> None:
        view = self.game.view
        if view is None:
            return
        if is_four_of_a_kind(view.hand):
            self.app.push_screen(ConfirmCall(), lambda yes: self.app.send(a.Call()) if yes else None)
        else:
            self.app.send(a.Call())

    def action_counter(self) -> None:
        view = self.game.view
        if view is None:
            return
        others = [t for t in range(team_count(view.players)) if t != view.team]
        if len(others) == 1:
            self.app.send(a.Counter(others[0]))
            return
        self.app.push_screen(
            CounterTeam(others), lambda team: self.app.send(a.Counter(team)) if team is not None else None
        )

    def action_reshuffle(self) -> None:
        self.app.send(a.AskReshuffle())

    def action_vote(self, yes: bool) -> None:
        view = self.game.view
        if view is None or view.vote is None:
            self.game.say("No reshuffle vote is running.")
            self.app.game_changed()
            return
        self.app.send(a.Vote(yes))
