"""What concerns oneself: the team sign (always visible to oneself), the channel, and both cooldowns."""

from __future__ import annotations

from rich.text import Text

from quatro_tui import words
from quatro_tui.games.quatro import words as quatro_words
from quatro_tui.games.quatro.widgets.base import QuatroWidget


class SelfPanel(QuatroWidget):
    TICK = 0.1

    def draw(self) -> Text:
        game = self.game
        view = game.view
        if view is None:
            return Text("")
        ascii_only = game.ascii_only
        lines = []
        me = Text()
        me.append(f"You: {words.team_letter(view.team)} {game.raw_name(view.seat)[:12]}", style="bold")
        me.append("  sign ")
        me.append(quatro_words.sign(view.sign, ascii_only, named=True), style="bold")
        lines.append(me)
        swap = Text("swap ")
        swap_left = game.left(view.swap_wait_ms) or 0
        if swap_left > 0:
            swap.append(f"wait {words.seconds(swap_left)}", style="bold")
        else:
            swap.append("ready", style="dim")
        lines.append(swap)
        channel = Text("channel ")
        channel_left = game.left(view.channel_wait_ms) or 0
        if view.channel_held:
            channel.append("HELD " if ascii_only else "◉ HELD ", style="bold")
            channel.append("showing ")
            channel.append(
                quatro_words.sign(view.channel_sign, ascii_only) if view.channel_sign else "nothing", style="bold"
            )
        else:
            channel.append("free", style="dim")
        if channel_left > 0:
            channel.append(f"  wait {words.seconds(channel_left)}", style="bold")
        lines.append(channel)
        pulse = game.pulse_on_show(view.seat)
        mine = view.seats[view.seat]
        pulse_line = Text()
        if pulse is not None:
            pulse_line.append(f" {quatro_words.sign(pulse, ascii_only)} ", style="bold reverse")
            pulse_line.append(" your pulse")
        elif view.channel_held and mine.next_pulse_ms is not None:
            pulse_line.append(f"next pulse in {words.seconds(game.beat_left(mine.next_pulse_ms) or 0)}", style="dim")
            if game.stopped:
                pulse_line.append(" stopped", style="bold")
        lines.append(pulse_line)
        return Text("\n").join(lines)
