"""The client's wording and local clocks: refusals explained, outcomes told, countdowns that move, pulses that fade."""

from __future__ import annotations

from dataclasses import replace

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro import wording
from quatro_shared.games.quatro.actions import Call, Swap, TakeChannel
from quatro_shared.games.quatro.views import Phase
from quatro_shared.messages import Refused

from helpers.snapshot_games import NOW, round_game
from quatro_tui import words
from quatro_tui.games.quatro import words as quatro_words
from quatro_tui.games.quatro.table import QuatroTable


def test_r10_a_lost_race_is_explained_with_the_card():
    reply = Refused(3, "taken", "too slow: that card was taken", None)
    assert quatro_words.refusal(Swap("KS", 1, "QH"), reply, False) == "too slow — Q♥ was taken"
    assert quatro_words.refusal(Swap("KS", 1, "QH"), reply, True) == "too slow — QH was taken"


def test_r9_r12_cooldowns_say_how_long():
    reply = Refused(3, "cooldown", "not yet", 1200)
    assert quatro_words.refusal(Swap("KS", 1, "QH"), reply, False) == "swap cooling down — 1.2s left"
    assert quatro_words.refusal(TakeChannel(), reply, False) == "channel cooling down — 1.2s left"


def test_rule_refusals_read_as_the_servers_message_says_them():
    reply = Refused(3, "round_over", "the round is over", None)
    assert quatro_words.refusal(Call(), reply, False) == "the round is over" == wording.REFUSAL_WORDS["round_over"]
    server_says = wording.refusal("taken", None, action="swap", card="QH")  # what the lobby sends
    assert quatro_words.refusal(Swap("KS", 1, "QH"), Refused(3, "taken", server_says, None), True) == server_says
    assert wording.refusal("vote_cooldown", 12.0) == "too soon after the last vote — 12s left"


def test_other_refusals_use_the_servers_words():
    assert words.refusal(Call(), Refused(3, "seat_taken", "seat 3 is taken", None)) == "seat 3 is taken"
    assert words.refusal(Call(), Refused(3, "seat_taken", "", None)) == "seat taken"


def test_outcomes_name_the_caller_and_the_scorers():
    name = {0: "you", 1: "bob"}.get
    assert quatro_words.outcome("call", 0, None, True, (0,), name) == "you called Quatro! — right: team A scores."
    assert quatro_words.outcome("counter", 1, 0, False, (0,), name) == "bob countered team A — wrong: team A scores."
    assert quatro_words.outcome("call", 1, None, False, (0, 2, 3), name) == (
        "bob called Quatro! — wrong: teams A, C and D score."
    )
    assert quatro_words.outcome("draw", None, None, None, (), name).startswith("Nobody spoke")


def test_countdowns_read_well():
    assert words.seconds(151.3) == "2:32"
    assert words.seconds(42.2) == "43s"
    assert words.seconds(9.44) == "9.4s"
    assert words.seconds(-1) == "0.0s"


def test_feed_lines_speak_of_oneself_as_you():
    name = lambda seat: "you" if seat == 0 else f"p{seat}"  # noqa: E731
    assert quatro_words.event(e.Swapped(0, 1, "QH", "KS"), name, 0, False) == "you put down Q♥, took K♠."
    assert quatro_words.event(e.VoteStarted(0, (1, 2)), name, 0, False) == "you ask for a reshuffle."
    assert quatro_words.event(e.VoteStarted(1, (0,)), name, 0, False) == "p1 asks for a reshuffle: y / n?"
    assert quatro_words.event(e.Pulse(1, "owl"), name, 0, False) is None  # pulses are drawn on the seat instead


def test_countdowns_move_locally_between_updates():
    now = [NOW]
    game = round_game(4)
    game.clock = lambda: now[0]
    assert game.left(game.view.phase_ms) == 151.3
    now[0] += 1.5
    assert abs(game.left(game.view.phase_ms) - 149.8) < 1e-9
    now[0] += 1000
    assert game.left(game.view.phase_ms) == 0


def test_r11_a_held_channels_beat_counts_down_again_from_the_interval_after_each_beat():
    """A beat with no emoji chosen brings no update: the countdown to the next beat starts again by itself."""
    now = [NOW]
    game = round_game(4)
    game.clock = lambda: now[0]
    interval = game.view.pulse_interval_ms / 1000
    assert game.beat_left(1200) == 1.2 and game.beat_left(None) is None
    now[0] += 1.0
    assert abs(game.beat_left(1200) - 0.2) < 1e-9
    now[0] += 0.5  # the beat fell 0.3 s ago
    assert abs(game.beat_left(1200) - (interval - 0.3)) < 1e-9
    now[0] += interval  # and the one after it
    assert abs(game.beat_left(1200) - (interval - 0.3)) < 1e-9
    assert game.left(1200) == 0  # a plain countdown stays at 0


def test_r11_a_pulse_shows_for_pulse_shown_seconds_then_fades():
    now = [NOW]
    game = round_game(4)
    game.clock = lambda: now[0]
    assert game.pulse_on_show(2) == "fox"  # the partner's, fell 0.3 s before the view arrived
    now[0] += 0.6
    assert game.pulse_on_show(2) == "fox"
    now[0] += 0.2  # 1.1 s after it fell: pulse_shown is 1.0 s
    assert game.pulse_on_show(2) is None
    assert game.pulse_on_show(1) is None  # never pulsed


def test_a_game_without_seating_still_names_seats():
    game = QuatroTable()
    view = replace(round_game(4).view, phase=Phase.ROUND)
    game.apply(view, [], 0.0)
    assert game.name(0) == "you" and game.name(3) == "seat 4"


def test_the_client_never_imports_the_server():
    """The architecture's one direction: the client and the server share ``shared/`` and nothing else."""
    import subprocess
    import sys

    code = (
        "import sys, quatro_tui.app, quatro_tui.cli, quatro_tui.games.quatro.screens.table, quatro_tui.screens.lobby;"
        "bad = sorted(m for m in sys.modules if m.startswith('quatro_server'));"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_ascii_mode_spells_out_its_punctuation_too():
    assert words.plain("too slow — QH was taken…", True) == "too slow - QH was taken..."
    assert words.plain("too slow — Q♥ was taken", False) == "too slow — Q♥ was taken"


def test_a_reason_ends_in_one_mark_whether_or_not_it_brought_its_own():
    """A lost link's reason may be a question ("Is the server running?"): no full stop is added after it."""
    refused = words.unreachable(ConnectionRefusedError(), "127.0.0.1", 4000)
    assert words.ended(refused) == refused and refused.endswith("running?")
    assert words.ended("the server closed the connection") == "the server closed the connection."
    assert words.ended("the seat is gone.") == "the seat is gone."
    assert words.sentence("the server is shutting down") == "The server is shutting down."  # a goodbye's words


def test_a_host_back_from_a_drop_is_not_told_it_hosts_now_and_a_new_host_is():
    from dataclasses import replace

    from quatro_shared.games.quatro import events as e

    from quatro_tui.games.quatro.table import QuatroTable
    from test_bots import seat_view

    hosting = replace(seat_view(), host=0)
    game = QuatroTable()
    game.apply(hosting, [], 0.0)
    game.apply(hosting, [e.HostChanged(None), e.HostChanged(0)], 1.0)  # dropped alone with bots, came back
    assert not any("host" in line for line in game.feed), list(game.feed)
    other = QuatroTable()
    other.apply(replace(seat_view(), host=1), [], 0.0)
    other.apply(hosting, [e.HostChanged(0)], 1.0)  # the host left: this player hosts now
    assert "You host now." in other.feed


def test_counts_agree_with_their_nouns():
    from quatro_shared.wording import counted

    assert [counted(n, "table") for n in (0, 1, 2)] == ["0 tables", "1 table", "2 tables"]
    assert counted(1, "match", "matches") == "1 match" and counted(3, "match", "matches") == "3 matches"


def test_the_four_of_a_kind_line_leaves_the_feed_once_the_hand_is_no_longer_four_of_a_kind():
    """The lesson's feed kept round 1's "You hold four of a kind" into round 2, an instruction no longer true. It
    shows while the hand is four of a kind, and goes at a swap that breaks it or at the next round."""
    game = round_game(4)
    view = game.view
    ranks = sorted({card[:-1] for card in view.center})
    rank = view.hand[0][:-1]
    four = tuple(f"{rank}{suit}" for suit in "HSDC")
    line = "You hold four of a kind: show your sign (1)."
    assert game.apply(replace(view, hand=four), [], NOW)  # the bell rings
    assert list(game.feed)[-1] == line
    game.say("bob took the channel.")
    game.apply(replace(view, hand=four), [], NOW)
    assert line in game.feed  # still true: still there, once
    assert list(game.feed).count(line) == 1
    broken = (four[0], four[1], four[2], f"{ranks[0]}H")
    game.apply(replace(view, hand=broken), [], NOW)
    assert line not in game.feed and "bob took the channel." in game.feed  # the rest of the feed stays
    game.apply(replace(view, hand=four), [], NOW)
    assert line in game.feed
    game.apply(replace(view, phase=Phase.SIGNING, round=view.round + 1, hand=()), [], NOW)
    assert line not in game.feed


def test_a_reply_that_is_not_the_answer_says_why_in_the_servers_words_or_that_none_came():
    """Never "the connection was lost" for a refusal or an error (a replay once read so while the link was fine)."""
    refused = m.Refused(3, p.NO_SUCH_TABLE, "no table 9")
    assert words.why_not(refused) == "no table 9"
    assert words.why_not(m.Error(3, p.BAD_REQUEST, "offset: a whole number")) == "offset: a whole number"
    assert words.why_not(None) == words.NO_ANSWER and "lost" in words.NO_ANSWER
    assert words.why_not(m.Ok(3, m.Done())) == "the server answered something this client did not ask for"


def test_an_unproven_move_is_told_in_the_players_words_whatever_the_cores_message():
    """The core's own refusal (protocol 8): the directory sent the request to a server that could not prove it holds
    the table, and nothing secret went there. The lobby's note, the feed and the command line's exit say so."""
    reply = m.refused(4, p.UNPROVEN_MOVE, "the lobby's directory sent table 7 to 10.6.6.6:6666, ...")
    why = words.why_not(reply)
    assert "could not prove it holds this table" in why and "nothing secret" in why
    assert "or the password or seat secret is wrong" in why  # which the client cannot tell from a forger
    assert words.refusal(m.Join(7, "pw"), reply) == words.sentence(why)
    assert words.ended(why).endswith(".")
