"""The guided first match: each step's check holds on the client state of the move done and not on another; the
lesson's table deals its scenes in order (R4 kept) and its bots play their part; the coach names the keys of the
screen's bindings, as remapped."""

from __future__ import annotations

import random
from dataclasses import replace

from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.cards import has_three_of_a_rank, is_four_of_a_kind
from quatro_shared.games.quatro.views import Phase

from quatro_server.games.quarto import engine as quarto_engine
from quatro_server.games.quarto.lesson import QuartoLesson
from quatro_server.games.quatro import engine
from quatro_server.games.quatro import lesson as lessons
from quatro_server.journal import Opening
from quatro_server.timing import LESSON, LESSON_PROFILE, load_timing
from quatro_tui import lessons as client_lessons
from quatro_tui.games.quarto.lesson import gave_a_piece, gave_safe_piece, placed_a_piece
from quatro_tui.games.quarto.table import QuartoTable
from quatro_tui.games.quatro.lesson import LESSON as QUATRO_LESSON
from quatro_tui.games.quatro.lesson import (
    called_right,
    countered_right,
    decoy_seen,
    holds_four,
    showed_sign,
    took_channel,
)
from quatro_tui.games.quatro.table import QuatroTable
from quatro_tui.lessons.steps import advance
from test_bots import SIGN, seat_view

OPENED = e.RoundOpened(1)


def game_of(view, *events) -> QuatroTable:
    game = QuatroTable()
    game.apply(view, [OPENED, *events], 0.0)
    return game


def ended(outcome: str, by: int, right: bool) -> e.RoundEnded:
    scorers = (0,) if right == (by % 2 == 0) else (1,)
    return e.RoundEnded(1, outcome, by, 1 if outcome == "counter" else None, right, scorers, (1, 0), (), (), (), ())


# --- Quatro's checks ---------------------------------------------------------------------------------------------


def test_swap_toward_four_passes_on_four_of_a_kind_in_hand_only():
    assert holds_four(game_of(seat_view(hand=("KS", "KH", "KD", "KC"))))
    assert not holds_four(game_of(seat_view(hand=("KS", "KH", "KD", "JC"))))
    assert not holds_four(game_of(seat_view(hand=("KS", "KH", "KD", "KC"), phase=Phase.BREAK)))


def test_take_the_channel_passes_once_the_player_holds_it():
    assert took_channel(game_of(seat_view(channel_held=True)))
    assert took_channel(game_of(seat_view(), e.ChannelTaken(0)))
    assert not took_channel(game_of(seat_view(), e.ChannelTaken(1)))  # another's take is not the player's


def test_show_the_sign_passes_on_the_players_own_pulse_of_the_team_sign():
    assert showed_sign(game_of(seat_view(), e.Pulse(0, SIGN)))
    assert not showed_sign(game_of(seat_view(), e.Pulse(0, "owl")))  # a decoy is not the sign
    assert not showed_sign(game_of(seat_view(), e.Pulse(2, SIGN)))  # the partner's pulse is not the player's
    assert not showed_sign(game_of(seat_view(channel_held=True, channel_sign=SIGN)))  # chosen, not shown yet


def test_the_call_passes_on_the_players_own_right_call():
    assert called_right(game_of(seat_view(phase=Phase.BREAK), ended("call", 0, True)))
    assert not called_right(game_of(seat_view(phase=Phase.BREAK), ended("call", 0, False)))
    assert not called_right(game_of(seat_view(phase=Phase.BREAK), ended("call", 2, True)))  # the partner's call
    assert not called_right(game_of(seat_view()))  # the round goes on


def test_the_counter_passes_on_the_players_own_right_counter():
    assert countered_right(game_of(seat_view(phase=Phase.BREAK), ended("counter", 0, True)))
    assert not countered_right(game_of(seat_view(phase=Phase.BREAK), ended("counter", 0, False)))
    assert not countered_right(game_of(seat_view(phase=Phase.BREAK), ended("call", 0, True)))


def test_the_decoy_passes_after_its_pulses_without_a_counter_or_on_a_counter_that_failed():
    decoy = [e.ChannelTaken(3), e.Pulse(3, "die"), e.Pulse(3, "die")]
    assert decoy_seen(game_of(seat_view(), *decoy))
    assert not decoy_seen(game_of(seat_view(), *decoy[:2]))  # one pulse: not yet
    assert not decoy_seen(game_of(seat_view(), e.Swapped(3, 0, "AC", "KD"), *decoy))  # it collected: no decoy
    assert not decoy_seen(game_of(seat_view(), e.Pulse(2, "die"), e.Pulse(2, "die")))  # the partner is no opponent
    assert decoy_seen(game_of(seat_view(phase=Phase.BREAK), decoy[1], ended("counter", 0, False)))
    assert not decoy_seen(game_of(seat_view(phase=Phase.BREAK), *decoy, ended("counter", 0, True)))


def test_checks_read_the_latest_round_only():
    """A right call of an earlier round does not pass the call of this one."""
    game = game_of(seat_view(phase=Phase.BREAK), ended("call", 0, True))
    game.apply(seat_view(), [e.RoundOpened(2)], 0.0)
    assert not called_right(game)


def test_the_steps_pass_in_order_each_on_its_own_move():
    lesson = QUATRO_LESSON
    game = game_of(seat_view(channel_held=True), e.Pulse(0, SIGN))  # the channel and the sign, but no four
    assert advance(lesson, 0, game) == 0  # a step is never skipped
    game = game_of(seat_view(hand=("KS", "KH", "KD", "KC"), channel_held=True), e.ChannelTaken(0), e.Pulse(0, SIGN))
    assert advance(lesson, 0, game) == 3


# --- Quarto's checks ---------------------------------------------------------------------------------------------


def quarto_table() -> quarto_engine.QuartoTable:
    table = QuartoLesson().new_table(Opening(2, frozenset({1}), 0, (0, 1)), LESSON, random.Random(1))
    assert isinstance(table, quarto_engine.QuartoTable)
    table.start(0.0)
    return table


def quarto_game(table: quarto_engine.QuartoTable) -> QuartoTable:
    game = QuartoTable(kind=q.NAME)
    game.took(quarto_engine.view(table, 0, 0.0), 0.0)
    return game


def act(table: quarto_engine.QuartoTable, seat: int, action: q.Action) -> None:
    assert table.act(seat, action, 0.0).refusal is None, action


def test_quarto_place_and_give_pass_on_the_players_own_moves():
    table = quarto_table()
    act(table, 1, q.Give(0))  # the lesson's bot starts (Q2): the learner places first
    assert not placed_a_piece(quarto_game(table)) and not gave_a_piece(quarto_game(table))
    act(table, 0, q.Place(0))
    assert placed_a_piece(quarto_game(table)) and not gave_a_piece(quarto_game(table))
    act(table, 0, q.Give(15))
    assert gave_a_piece(quarto_game(table))


def test_giving_a_piece_that_hands_them_a_win_does_not_pass_and_a_safe_one_does():
    def position() -> quarto_engine.QuartoTable:
        # a1 b1 c1 hold tall pieces (bit 0 set); the learner is to give with d1 empty.
        table = quarto_table()
        act(table, 1, q.Give(0b0001))
        act(table, 0, q.Place(0))
        act(table, 0, q.Give(0b0011))
        act(table, 1, q.Place(1))
        act(table, 1, q.Give(0b0101))
        act(table, 0, q.Place(2))
        return table

    wrong = position()
    act(wrong, 0, q.Give(0b1001))  # tall: d1 wins with it
    assert not gave_safe_piece(quarto_game(wrong))
    right = position()
    act(right, 0, q.Give(0b1110))  # short, and shares nothing else with all three
    assert q.winning_squares(quarto_engine.view(right, 0, 0.0).board, 0b1110) == ()
    assert gave_safe_piece(quarto_game(right))


# --- the server's scripted table -----------------------------------------------------------------------------


def test_each_scene_is_a_legal_deal_that_each_seat_knows_by_its_hand():
    for scene in lessons.SCENES:
        assert sorted(scene.deck()) == sorted(engine.Table(4).deck)
        assert not any(has_three_of_a_rank(hand) for hand in scene.hands)  # R4
        for seat in range(4):
            assert lessons.scene_of(scene.hands[seat], seat) is scene


def test_the_lesson_table_deals_the_next_scene_once_the_learners_team_scored():
    table = lessons.QuatroLesson().new_table(
        Opening(4, frozenset({1, 2, 3}), 0, (0, 1, 2, 3)), LESSON, random.Random(1)
    )
    assert isinstance(table, engine.Table)
    table.start(0.0)
    table.act(0, a.PickSign("fox"), 0.0)
    table.act(0, a.Ready(), 0.0)
    assert table.hand(0) == lessons.SCENES[0].hands[0]
    assert table.signs[1] == lessons.THEIR_SIGNS[0]  # drawn for the bots' team (R7), the lesson's
    table.scores[0] = 2
    table.act(0, a.AskReshuffle(), 0.1)  # no other human: passes at once, and deals again (R15, R16)
    assert table.hand(1) == lessons.SCENES[2].hands[1]


def test_a_scenes_actor_collects_four_then_shows_its_sign_paced_in_beats():
    scene = lessons.SCENES[1]  # the partner's four
    bot = lessons.QuatroLessonBot()
    view = seat_view(seat=2, hand=scene.hands[2], center=scene.center, pulse_interval_ms=1000)
    assert bot.decide(view, 0.0) == []
    assert bot.decide(view, 0.5) == []  # a beat first
    swap = bot.decide(view, 1.0)
    assert len(swap) == 1 and isinstance(swap[0], a.Swap)
    four = replace(view, hand=("QS", "QH", "QD", "QC"))
    assert is_four_of_a_kind(four.hand)
    assert bot.decide(four, 3.0) == [a.TakeChannel(), a.ChooseEmoji(SIGN)]


def test_the_partner_calls_a_moment_after_the_learners_sign_and_not_on_a_decoy():
    scene = lessons.SCENES[0]
    bot = lessons.QuatroLessonBot()
    view = seat_view(seat=2, hand=scene.hands[2], center=scene.center, pulse_interval_ms=1000)
    bot.decide(view, 0.0)
    bot.observe([e.Pulse(0, "owl")])
    assert bot.decide(view, 2.0) == []
    bot.observe([e.Pulse(0, SIGN)])
    assert bot.decide(view, 2.1) == []
    assert bot.decide(view, 2.7) == [a.Call()]


def test_the_lesson_profile_is_loaded_by_name_and_slow_enough_to_read():
    assert load_timing(LESSON_PROFILE) is LESSON
    assert LESSON_PROFILE == client_lessons.LESSON_PROFILE and lessons.LESSON_LEVEL == client_lessons.LESSON_LEVEL
    assert LESSON.pulse_interval >= 3 and LESSON.sign_window >= 60 and LESSON.target_score > len(lessons.SCENES)


# --- the offer on a first quatro play ----------------------------------------------------------------------------


def test_the_offer_is_remembered_per_name_across_runs(tmp_path):
    from quatro_tui.settings import Settings

    path = tmp_path / "client.toml"
    settings = Settings.load(path)
    assert settings.offer_lesson("ann") and settings.offer_lesson("bob")
    settings.lesson_answered("ann")
    settings.save(path)
    again = Settings.load(path)
    assert not again.offer_lesson("ann")
    assert again.offer_lesson("bob")  # another person under the same account is asked for themselves


def test_the_offer_takes_one_key_and_only_its_own_key_takes_it(capsys):
    from quatro_tui.cli import LEARN_KEY, offer_lesson

    assert offer_lesson("Quatro", key=lambda: LEARN_KEY) is True
    assert f"Press {LEARN_KEY} to learn" in capsys.readouterr().out
    assert offer_lesson("Quatro", key=lambda: "n") is False
    assert offer_lesson("Quatro", key=lambda: "\x1b") is False
    assert offer_lesson("Quatro", key=lambda: "") is False  # the end of input declines


def test_the_offer_is_made_only_to_a_person_at_a_terminal():
    from quatro_tui.cli import lesson_offer_wanted

    assert lesson_offer_wanted({}, interactive=True)
    assert not lesson_offer_wanted({}, interactive=False)
    assert not lesson_offer_wanted({"QUATRO_LEARN_OFFER": "0"}, interactive=True)


def test_a_first_play_that_takes_the_offer_runs_the_lesson_and_is_never_asked_again(monkeypatch, tmp_path):
    from quatro_tui import cli
    from quatro_tui.lessons.coach import LessonApp
    from quatro_tui.settings import Settings

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setattr(cli, "lesson_offer_wanted", lambda: True)
    asked: list[str] = []

    def offer(title: str) -> bool:
        asked.append(title)
        return True

    monkeypatch.setattr(cli, "offer_lesson", offer)
    app = cli.make_app(["play", "--name", "ann"])
    try:
        assert isinstance(app, LessonApp) and asked == ["Quatro"]
        assert app.server is not None and app.server.lesson
    finally:
        assert not isinstance(app, int) and app.server is not None
        app.server.stop()
    assert not Settings.load().offer_lesson("ann")
    second = cli.make_app(["play", "--name", "ann"])
    try:
        assert not isinstance(second, LessonApp) and asked == ["Quatro"]  # answered once: never again
    finally:
        assert not isinstance(second, int) and second.server is not None
        second.server.stop()


def test_quatro_help_lists_learn():
    from quatro_tui.cli import parser

    assert "learn" in parser().format_help()


def test_the_reveal_says_why_a_round_went_wrong_from_the_learners_side():
    from quatro_tui.games.quatro.lesson import QUATRO_STEPS, quatro_between

    def said(end: e.RoundEnded) -> str:
        return quatro_between(
            game_of(seat_view(phase=Phase.BREAK), end), lambda binding: f"<{binding}>", QUATRO_STEPS[0]
        )

    assert "you did not hold four yet" in said(ended("call", 2, False))  # the partner called on an early sign
    assert "your partner did not hold four" in said(ended("call", 0, False))
    assert "Wrong counter" in said(ended("counter", 0, False))
    assert "your team scores" in said(ended("call", 2, True))
    assert "<next-round>" in said(ended("call", 2, True))


# --- what the coach says after a move off the script ------------------------------------------------------------


def keys_as_ids(binding: str) -> str:
    return f"<{binding}>"


def test_after_a_wrong_swap_the_coach_names_the_rank_within_reach_and_the_keys():
    from quatro_tui.games.quatro.lesson import QUATRO_STEPS

    # The first scene, after giving a king for the 10: one 10 in hand, three kings in the center.
    view = seat_view(hand=("10S", "KH", "AS", "JS"), center=("KD", "KC", "QS", "KS"))
    said = QUATRO_STEPS[0].say(game_of(view), keys_as_ids)
    assert "You hold one K;" in said and "10" not in said.split(";")[0], said
    assert "<hand-" in said and "<slot-" in said, said  # the keys, still named
    # No card of any rank of the hand in the center: still the keys, never a bare "collect".
    stuck = seat_view(hand=("10S", "KH", "AS", "JS"), center=("QD", "QC", "QS", "QH"))
    assert "<hand-1>" in QUATRO_STEPS[0].say(game_of(stuck), keys_as_ids)


def test_the_decoy_never_shows_an_emoji_the_learners_team_showed():
    from quatro_server.games.quatro.lesson import DECOY_SIGNS, SCENES, QuatroLessonBot

    decoy = SCENES[-1]
    for learners in DECOY_SIGNS:
        bot = QuatroLessonBot()
        bot.observe([e.Pulse(0, learners)])  # the learner showed its sign in the first scene
        view = seat_view(seat=decoy.actor, hand=decoy.hands[decoy.actor], center=decoy.center, sign="octopus")
        bot.decide(view, 0.0)
        actions = bot.decide(view, 100.0)
        shown = [move.sign for move in actions if isinstance(move, a.ChooseEmoji)]
        assert shown and shown[0] != learners and shown[0] != "octopus", shown


def test_the_lesson_done_says_why_the_decoy_round_went_as_it_did():
    from quatro_tui.games.quatro.lesson import quatro_last_words

    wrong = game_of(seat_view(phase=Phase.BREAK), e.Pulse(3, "die"), ended("counter", 0, False))
    assert "Wrong counter" in quatro_last_words(wrong) and "decoy" in quatro_last_words(wrong)
    let_go = game_of(seat_view(), e.Pulse(3, "die"), e.Pulse(3, "die"))
    assert "You let the decoy go" in quatro_last_words(let_go)


def test_quartos_threat_names_every_attribute_the_line_shares():
    from quatro_tui.games.quarto.lesson import QUARTO_STEPS

    table = quarto_table()
    act(table, 1, q.Give(0b0001))
    act(table, 0, q.Place(0))
    act(table, 0, q.Give(0b0011))
    act(table, 1, q.Place(1))
    act(table, 1, q.Give(0b0101))
    act(table, 0, q.Place(2))  # a1 b1 c1: all tall and all hollow, d1 empty
    said = QUARTO_STEPS[2].say(quarto_game(table), keys_as_ids)
    assert "tall or hollow too hands them a win" in said and "neither" in said, said


def test_a_lesson_taken_from_quatro_plays_offer_is_followed_by_the_match_once_done(monkeypatch, tmp_path):
    from quatro_tui import cli
    from quatro_tui.lessons.coach import LessonApp

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setattr(cli, "lesson_offer_wanted", lambda: True)
    monkeypatch.setattr(cli, "offer_lesson", lambda title: True)
    ran: list[object] = []

    def run(app) -> int:
        ran.append(app)
        if isinstance(app, LessonApp):
            assert app.then_play
            app.done = len(app.lesson.steps)
        if app.server is not None:
            app.server.stop()
        return 0

    monkeypatch.setattr(cli, "run_app", run)
    assert cli.main(["play", "--name", "ann"]) == 0
    assert [type(app).__name__ for app in ran] == ["LessonApp", "QuatroApp"], ran


def test_the_lesson_done_names_plain_quatro_play_or_the_match_that_follows(monkeypatch):
    from quatro_tui.app import Play
    from quatro_tui.games import client_game
    from quatro_tui.lessons.coach import LessonApp

    class Screen:  # keys_on reads bindings; the finished text needs only the quit key
        pass

    lesson = client_game("quatro").lesson
    assert lesson is not None
    app = LessonApp(Play(4, "lesson", "lesson", "ann", 0, "quatro"), lesson)
    app.done = len(lesson.steps)
    from quatro_tui.lessons import coach

    monkeypatch.setattr(coach, "keys_on", lambda screen, binding, ascii_only=False: f"<{binding}>")
    said = app.coach_text(Screen())
    assert "quatro play[/b] starts a real match" in said and "--game" not in said, said
    app.then_play = True
    assert "your match against bots starts" in app.coach_text(Screen())
