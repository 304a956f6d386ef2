"""The table before its match: who sits where, the address others join with, and the host's controls."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from quatro_shared import messages as m

from quatro_tui import words
from quatro_tui.screens.lobby import LobbyScreen
from quatro_tui.widgets import Feed, StatusBar
from quatro_tui.widgets.base import GameWidget

if TYPE_CHECKING:
    from textual import getters

    from quatro_tui.app import QuatroApp


class SeatList(GameWidget):
    def draw(self) -> Text:
        game = self.game
        seating = game.seating
        text = Text()
        if seating is None:
            return text.append(words.plain("Waiting for the table…", game.ascii_only), style="dim")
        timing = words.plain(seating.timing_name, game.ascii_only)
        client = self.app.client_game()
        what = client.table_words(seating.players)
        text.append(f"Table {seating.table}: {what}, timing {timing}\n\n", style="bold")
        for seat in seating.seats:
            i = seat.seat
            who = game.raw_name(i) if seat.taken else "(free)"
            if i == game.my_seat:
                who += " (you)"
            if seating.host == i:
                who += " (host)"
            kind = f"bot {seat.bot}" if seat.bot else ("" if not seat.taken else ("on" if seat.connected else "AWAY"))
            team = "" if not client.teams else f"team {words.team_letter(client.team_of(i, game.players))}  "
            text.append(
                f"  seat {i + 1}  {team}{who:<30} {kind}\n",
                style="bold" if i == game.my_seat else ("dim" if not seat.taken else ""),
            )
        addresses = getattr(self.app, "join_addresses", [])
        if addresses:
            text.append("\nOthers join with:\n", style="bold")
            for address in addresses:
                text.append(f"  quatro join {address} --table {seating.table}\n", style="bold")
        if game.my_seat is not None and any(not s.taken for s in seating.seats):
            text.append("\n")
            text.append("1", style="bold underline")
            text.append(f"-{seating.players}", style="bold underline")
            if not client.teams:
                text.append(" sit in a free seat   ")
            else:
                text.append(" sit in a free seat (partners: seats ")
                half = seating.players // 2
                text.append(" ".join(f"{i + 1}+{i + 1 + half}" for i in range(half)))
                text.append(")   ")
            text.append("t", style="bold underline")
            text.append(" chat\n")
        watched = f"{seating.watchers} watching" if seating.watching else "closed to watchers"
        if game.is_host():
            text.append("\nYou host: ")
            text.append("b", style="bold underline")
            text.append(" add a bot (its level)  ")
            text.append("r", style="bold underline")
            text.append(" remove a bot  ")
            text.append("s", style="bold underline")
            text.append(" start (every seat filled)\n          ")
            text.append("v", style="bold underline")
            text.append(" close to watchers" if seating.watching else " open to watchers")
            text.append(f"   ({watched})", style="dim")
        else:
            text.append(f"\nWaiting for the host to start the match.   ({watched})", style="dim")
        return text


class BotLevel(ModalScreen[str | None]):
    """The host adds a bot: at which level (the server's default highlighted). Its number or enter chooses."""

    BINDINGS = [
        *[Binding(str(n), f"level({n - 1})", show=False, id=f"bot-level-{n}") for n in range(1, 5)],
        Binding("escape", "cancel", "no bot", id="bot-level-cancel"),
    ]

    def __init__(self, levels: tuple[tuple[str, str], ...], default: str) -> None:
        super().__init__()
        #: The levels offered, weakest first, each with what its bots are like; ``default`` is highlighted.
        self.levels, self.default = levels, default

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("[b]Add a bot at which level?[/b]  (its number, or arrows and enter; escape: no bot)")
            yield OptionList(
                *[Option(f"{n}  {level:<8} {what}", id=level) for n, (level, what) in enumerate(self.levels, 1)],
                id="bot-levels",
            )

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = [level for level, _ in self.levels].index(self.default)
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_level(self, index: int) -> None:
        if index < len(self.levels):
            self.dismiss(self.levels[index][0])

    def action_cancel(self) -> None:
        self.dismiss(None)


#: The host's actions: only the host sees (and has) their keys.
HOST_ACTIONS = frozenset({"add_bot", "remove_bot", "start", "watchers"})


class RoomScreen(Screen[None]):
    if TYPE_CHECKING:
        app = getters.app(QuatroApp)  # self.app as this client's app, for the type checker

    BINDINGS = [
        Binding("b", "add_bot", "add a bot", id="add-bot"),
        Binding("r", "remove_bot", "remove a bot", id="remove-bot"),
        Binding("s", "start", "start", id="start"),
        *[Binding(str(n), f"move({n - 1})", f"sit in seat {n}", show=False, id=f"move-{n}") for n in range(1, 9)],
        Binding("t", "chat", "chat", id="room-chat"),
        Binding("l", "leave", "leave", id="leave"),
        Binding(
            "v",
            "watchers",
            "watchers",
            show=False,
            tooltip="open or close the table to watchers (host)",
            id="room-watchers",
        ),
    ]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in HOST_ACTIONS and not self.app.game.is_host():
            return False
        return True

    def action_move(self, seat: int) -> None:
        game = self.app.game
        if game.seating is not None and seat < game.seating.players and seat != game.my_seat:
            self.app.run_worker(self._move(seat), exit_on_error=False)

    async def _move(self, seat: int) -> None:
        reply = await self.app.request(m.Move(seat))
        if isinstance(reply, m.Ok) and isinstance(reply.payload, m.Moved):
            self.app.game.my_seat = reply.payload.seat
            self.app.game_changed()

    def action_chat(self) -> None:
        from quatro_tui.screens.chat import ChatBox

        self.app.push_screen(ChatBox())

    def compose(self) -> ComposeResult:
        yield StatusBar()
        yield SeatList(classes="pad")
        yield Feed(classes="pad")
        yield Footer()

    def on_screen_resume(self) -> None:
        self.app.game_changed()

    def action_add_bot(self) -> None:
        def chosen(level: str | None) -> None:
            if level is not None:
                self.app.send(m.AddBot(level=level))

        game = self.app.client_game()
        self.app.push_screen(BotLevel(game.bot_levels, game.contract.default_level), chosen)

    def action_remove_bot(self) -> None:
        seating = self.app.game.seating
        if seating is None:
            return
        bots = [s.seat for s in seating.seats if s.bot]
        if bots:
            self.app.send(m.RemoveBot(bots[-1]))

    def action_start(self) -> None:
        self.app.send(m.Start())

    def action_watchers(self) -> None:
        """The host opens the table to watchers, or closes it (its watchers are sent back to the lobby)."""
        seating = self.app.game.seating
        if seating is not None:
            self.app.send(m.Watchers(not seating.watching))

    def action_leave(self) -> None:
        self.app.run_worker(self._leave(), exit_on_error=False)

    async def _leave(self) -> None:
        reply = await self.app.request(m.Leave())
        if isinstance(reply, m.Ok):
            self.app.game.seating = None
            self.app.game.my_seat = None
            self.app.switch_screen(LobbyScreen())
