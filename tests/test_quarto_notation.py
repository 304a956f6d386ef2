"""Quarto's material (Q1) and notation (Q7): pieces, squares and turns, both ways, with clear errors."""

from __future__ import annotations

import pytest

from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quarto.contract import NotationError, Turn


def test_q1_sixteen_pieces_every_combination_of_four_attributes_once():
    names = {q.format_piece(p) for p in range(q.PIECES)}
    assert len(names) == 16
    for p in range(q.PIECES):
        text = q.format_piece(p)
        assert len(text) == 4
        assert [text[k] in pair[:2] for k, pair in enumerate(q.ATTRIBUTES)] == [True] * 4
    assert {q.describe_piece(p) for p in range(q.PIECES)} == {
        f"{h} {c} {s} {f}"
        for h in ("tall", "short")
        for c in ("dark", "light")
        for s in ("round", "square")
        for f in ("solid", "hollow")
    }


def test_q1_a_four_by_four_board_with_ten_lines():
    assert q.SQUARES == 16
    assert len(q.LINES) == 10 and all(len(line) == 4 for line in q.LINES)
    assert (0, 5, 10, 15) in q.LINES and (12, 9, 6, 3) in q.LINES


def test_q7_pieces_are_written_by_four_letters_both_ways():
    assert q.format_piece(0b0111) == "TDRH"
    assert q.format_piece(0b1111) == "TDRF"
    assert q.format_piece(0) == "SLQH"
    assert q.parse_piece("TDRH") == 7
    assert q.parse_piece(" sLqF ") == 0b1000
    for p in range(q.PIECES):
        assert q.parse_piece(q.format_piece(p)) == p


def test_q7_squares_are_a1_to_d4_columns_then_rows():
    assert q.format_square(0) == "a1"
    assert q.format_square(3) == "d1"
    assert q.format_square(12) == "a4"
    assert q.format_square(15) == "d4"
    assert q.parse_square("b3") == 9
    assert q.parse_square("D4") == 15
    for s in range(q.SQUARES):
        assert q.parse_square(q.format_square(s)) == s


def test_q7_a_turn_is_place_square_then_give_piece():
    assert q.format_turn(Turn(q.parse_square("b3"), q.parse_piece("SLQF"))) == "b3 SLQF"
    assert q.parse_turn("b3 SLQF") == Turn(9, 0b1000)
    assert q.parse_turn("b3, SLQF") == Turn(9, 0b1000)
    assert q.parse_turn("SLQF") == Turn(None, 0b1000)  # the starter's opening give (Q2)
    assert q.parse_turn("b3") == Turn(9, None)  # a game's last placement
    assert str(Turn(None, 7)) == "TDRH"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("TDR", "four letters"),
        ("TXRH", "letter 2 of a piece is D (dark) or L (light)"),
        ("TDRHX", "four letters"),
        ("", "four letters"),
    ],
)
def test_q7_a_bad_piece_is_refused_with_a_clear_error(text, words):
    with pytest.raises(NotationError, match=words.replace("(", r"\(").replace(")", r"\)")):
        q.parse_piece(text)


@pytest.mark.parametrize("text", ["e1", "a5", "a0", "b", "b33", "3b", ""])
def test_q7_a_bad_square_is_refused_with_a_clear_error(text):
    with pytest.raises(NotationError, match="column a-d and a row 1-4"):
        q.parse_square(text)


@pytest.mark.parametrize("text", ["b3 SLQF TDRH", "", "b3 SLQ", "e3 SLQF"])
def test_q7_a_bad_turn_is_refused(text):
    with pytest.raises(NotationError):
        q.parse_turn(text)


@pytest.mark.parametrize("value", [-1, 16, True, "3", None])
def test_q7_formatting_refuses_what_is_not_a_piece_or_square(value):
    with pytest.raises(NotationError):
        q.format_piece(value)
    with pytest.raises(NotationError):
        q.format_square(value)


def test_notation_errors_are_value_errors():
    assert issubclass(NotationError, ValueError)
