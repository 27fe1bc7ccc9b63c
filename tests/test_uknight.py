"""Uknight: the spec's start positions, rules, worked examples, notation and display."""

import random
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.hexgrid import (
    HexHexBoard,
    cells_between,
    distance,
    is_knight_move,
    line_direction,
)
from games.uknight import Uknight, UknightPieces
from pbm.game import MoveError, OptionError
from pbm.testing import check_game, random_game
from pbm.testing import play as checked_replay
from tests.conftest import body_of
from tests.spec_pictures import UK2, UK5, UK_START_BASE5, UK_START_BASE6

game = Uknight()
WHITE, BLACK = 0, 1


def start(size=6):
    return game.initial_state(game.parse_options({"size": str(size)}, 2), 2, seed=1)


def setup(size=5, phase=1, turns=10, to_move=WHITE, passes=0, **pieces):
    """A position set up directly, as in the spec's examples: w=, W=, b=, B= list the
    white stones, white doubles, black stones and black doubles."""
    state = start(size)
    state.update(
        pieces={name: symbol for symbol, names in pieces.items() for name in names.split()},
        phase=phase,
        turns=turns,
        to_move=to_move,
        passes=passes,
    )
    return state


def play(state, *moves):
    for move in moves:
        seat = game.to_move(state)
        canonical = "pass" if move == "pass" else game.parse_move(state, seat, move)
        state = game.apply_move(state, seat, canonical)
    return state


def on_board(state, symbol):
    return sorted(name for name, piece in state["pieces"].items() if piece == symbol)


def refusal(state, text, seat=None):
    with pytest.raises(MoveError) as error:
        game.parse_move(state, game.to_move(state) if seat is None else seat, text)
    return str(error.value)


# -- options -----------------------------------------------------------------------------


def test_options_default_to_base_6():
    assert game.parse_options({}, 2) == {"size": 6}
    assert [game.parse_options({"size": str(n)}, 2) for n in (5, 6, 7)] == [
        {"size": 5},
        {"size": 6},
        {"size": 7},
    ]


@pytest.mark.parametrize(
    "raw,message",
    [
        ({"size": "8"}, 'Invalid Uknight parameter "-size=8": size must be 5, 6 or 7'),
        ({"size": "4"}, 'Invalid Uknight parameter "-size=4": size must be 5, 6 or 7'),
        ({"size": "six"}, 'Invalid Uknight parameter "-size=six": size must be 5, 6 or 7'),
        ({"size": True}, 'Invalid Uknight parameter "-size": size must be 5, 6 or 7'),
        (
            {"base": "5"},
            'Invalid Uknight parameter "-base=5": unknown option; the only '
            "option is -size=N (5, 6 or 7, default 6)",
        ),
    ],
)
def test_bad_options_are_refused(raw, message):
    with pytest.raises(OptionError) as error:
        game.parse_options(raw, 2)
    assert str(error.value) == message


# -- start position (docs/spec/games/uknight.md §3) ----------------------------------------

START = {
    5: ("B1 F2 I6 H9 D8 A4", "A2 D1 H4 I8 F9 B6"),
    6: ("B1 G2 K7 J11 E10 A5", "A2 E1 J5 K10 G11 B7"),
    7: ("B1 H2 M8 L13 F12 A6", "A2 F1 L6 M12 H13 B8"),
}


@pytest.mark.parametrize("size", [5, 6, 7])
def test_start_positions_match_the_spec(size):
    state = start(size)
    white, black = START[size]
    assert on_board(state, "w") == sorted(white.split())
    assert on_board(state, "b") == sorted(black.split())
    assert on_board(state, "W") == on_board(state, "B") == []
    assert game.to_move(state) == WHITE and state["phase"] == 1


@pytest.mark.parametrize("size", [5, 6, 7])
def test_start_position_properties(size):
    board = HexHexBoard(size)
    piece_map = UknightPieces(start(size))
    white, black = piece_map.stones(WHITE), piece_map.stones(BLACK)
    stones = white | black
    assert len(white) == len(black) == 6
    assert all(distance(a, b) != 1 for a in stones for b in stones)
    assert not any(is_knight_move(a, b) for a in stones for b in stones)
    centre = (size - 1, -(size - 1))

    def turned(cell):  # 60 degrees about the centre, in cube coordinates
        x, z = cell[0] - centre[0], cell[1] - centre[1]
        y = -x - z
        return centre[0] - z, centre[1] - y

    def mirrored(cell):  # across the vertical centre line: letter and number swap
        return -cell[1], -cell[0]

    assert {turned(c) for c in white} == white and {turned(c) for c in black} == black
    assert {mirrored(c) for c in white} == black
    assert all(turned(c) in board and mirrored(c) in board for c in board.cells)


def test_start_boards_render_as_in_the_spec():
    assert game.picture(start(6)) == UK_START_BASE6.rstrip("\n")
    assert game.picture(start(5)) == UK_START_BASE5.rstrip("\n")
    assert game.render_board(start(6), None) == "\n".join(
        [
            "Phase 1, axes 0 of 6 (White 0, Black 0)",
            UK_START_BASE6.rstrip("\n"),
            "w b  White, Black stone",
            "W B  White, Black double (a stone with an axe)",
            "[ ]  the last move",
        ]
    )


def test_whites_first_placements_on_base_6():
    state = start(6)
    first = "A3 B3 C4 C7 C8 D1 D4 D6 D7 E2 E3 F4 F8 G9 G10 H5 H6 H8 H11 I4 I5 I8 J9 K9"
    assert sorted(game.legal_moves(state, WHITE)) == sorted(first.split())
    for move in first.split():
        assert play(state, move)["pieces"][move] == "w", f"{move} gives no axe"


# -- UK-1: knight cells and notation ---------------------------------------------------------


@pytest.mark.parametrize("size", [5, 6, 7])
def test_uk1_knight_cells(size):
    board = HexHexBoard(size)

    def knights(name):
        return board.names(board.knights[board.parse(name)])

    assert knights("A1") == ["B4", "C4", "D2", "D3"]
    assert knights("B1") == ["A3", "C4", "D4", "E2", "E3"]
    if size == 5:
        assert knights("E5") == "B3 B4 C2 C6 D2 D7 F3 F8 G4 G8 H6 H7".split()
        assert board.parse("I5") in board.corners
        assert board.parse("F2") in board
        assert "line F holds F2 to F9" in refusal(start(5), "F1")


# -- UK-2: automatic axe --------------------------------------------------------------------


def test_uk2_a_placement_a_knights_move_from_three_stones_gets_an_axe():
    state = setup(w="B3 C2 G4", b="I9")
    assert game.picture(state) == UK2.rstrip("\n")
    after = play(state, "E5")
    assert after["pieces"]["E5"] == "W"
    assert "Last move: White E5 (placed E5, which became a double)" in game.render_board(after, 0)
    assert "[W]" in game.picture(after)


def test_uk2_two_stones_give_no_axe():
    after = play(setup(w="B3 C2", b="I9"), "E5")
    assert after["pieces"]["E5"] == "w"
    assert "Last move: White E5 (placed E5)" in game.render_board(after, 0)


def test_a_double_counts_as_one_stone_towards_an_axe():
    assert play(setup(w="B3 C2", W="G4", b="I9"), "E5")["pieces"]["E5"] == "W"


# -- UK-5: removal --------------------------------------------------------------------------


def test_uk5_removal_of_the_corner_stone_wins():
    state = setup(w="A1 I9", b="D2 D3 C4 B4")
    assert game.picture(state) == UK5.rstrip("\n")
    assert UknightPieces(state).qualifying(WHITE) == [(0, 0)]
    assert "rem" in game.legal_moves(state, WHITE)
    after = play(state, "rem")
    assert on_board(after, "w") == ["I9"]
    outcome = game.outcome(after)
    assert outcome.winners == (WHITE,)
    assert outcome.reason == "White's stones form a single group"
    assert game.to_move(after) is None
    assert "Last move: White rem (removed A1)" in game.render_board(after, None)


def test_uk5_a_stone_with_a_friendly_neighbour_does_not_qualify():
    state = setup(w="A1 B2 I9", b="D2 D3 C4 B4")
    assert "rem" not in game.legal_moves(state, WHITE)
    assert "no White stone qualifies for removal" in refusal(state, "rem")


# -- UK-6: the pie rule ---------------------------------------------------------------------


def test_uk6_the_first_turn_must_be_a_placement():
    state = start(5)
    assert not game.can_pass(state, WHITE)
    assert "the first turn must be a placement" in refusal(state, "rem")
    assert "the first turn must be a placement" in refusal(state, "rem,E3")
    assert game.parse_move(state, WHITE, "e3") == "E3"
    after = play(state, "E3")
    assert game.can_pass(after, BLACK)
    assert game.swap_after == 1


@pytest.fixture
def board_101(harness):
    harness.signup("alice", "bob")
    harness.challenge("uknight challenge alice bob -size=5")
    return harness


def test_uk6_swap_hands_white_and_its_stone_to_player_2(board_101):
    harness = board_101
    assert "The first turn must be a placement" in harness.refused("uknight pass 101 alice secret")
    assert "the first turn must be a placement" in harness.refused(
        "uknight move 101 alice secret rem"
    )
    assert "You can only swap after move number 1" in harness.refused(
        "uknight swap 101 alice secret"
    )
    harness.ok("uknight move 101 alice secret e3")
    harness.new_mails()
    harness.ok("uknight swap 101 bob secret #2")
    [mail, *_] = harness.new_mails()
    body = body_of(mail)
    assert "bob has swapped sides." in body
    assert "   1 White (alice): E3\n   2 Black (bob): swap" in body
    assert "It is alice's turn." in body
    assert "Last move: White E3 (placed E3)" in body
    assert "The board has just been swapped" in harness.refused("uknight swap 101 alice secret")
    harness.ok("uknight move 101 alice secret C3")  # a knight's move from Black's D1
    assert "You can only swap after move number 1" in harness.refused("uknight swap 101 bob secret")


def test_uk6_black_may_answer_with_a_normal_turn(board_101):
    harness = board_101
    harness.ok("uknight move 101 alice secret E3")
    harness.ok("uknight move 101 bob secret C3")
    text = harness.ok("uknight show 101", sender=None).printed[0].body
    assert "   1 E3         2 C3" in text
    assert "It is alice's turn." in text


# -- placement and the two phases (docs/spec/games/uknight.md §4.2) -------------------------


def test_a_placement_needs_a_vacant_cell_a_knights_move_from_an_own_stone():
    state = setup(w="B1", b="E3")
    assert "E3 is not vacant: it holds a Black stone" in refusal(state, "E3")
    message = refusal(state, "E5")
    assert "E5 is not a knight's move from any White stone" in message
    assert "from E5 that means B3 B4 C2 C6 D2 D7 F3 F8 G4 G8 H6 H7" in message
    assert play(state, "E2")["pieces"]["E2"] == "w"


@pytest.mark.parametrize("size,threshold", [(5, 4), (6, 6), (7, 8)])
def test_the_placement_that_reaches_the_threshold_starts_phase_2(size, threshold):
    # Axes of both colours count: White holds threshold - 2 doubles and Black one.
    doubles = " ".join(f"A{number}" for number in range(1, threshold - 1))
    state = setup(size=size, w="B3 C2 G4", W=doubles, B="I9")
    assert game.status_line(state) == (
        f"Phase 1, axes {threshold - 1} of {threshold} (White {threshold - 2}, Black 1)"
    )
    after = play(state, "E5")
    assert after["pieces"]["E5"] == "W" and after["phase"] == 2
    assert f"{threshold} axes are on the board: phase 2 begins" in game.render_board(after, 1)
    assert game.status_line(after) == (
        f"Phase 2 (began with {threshold} axes on the board), axes {threshold} "
        f"(White {threshold - 1}, Black 1)"
    )


def test_a_placement_without_an_axe_keeps_phase_1():
    state = setup(w="B3 C2", W="A1 A2", B="F9", b="I9")
    after = play(state, "E5")
    assert UknightPieces(after).axes() == 3 and after["phase"] == 1


def test_phase_2_forbids_placement_and_never_ends():
    state = setup(phase=2, W="A1", w="B2 E5", b="D4 I9")
    assert "placing is over in phase 2" in refusal(state, "E3")
    after = play(state, "A1-C3")  # the throw leaves no axe on the board
    assert UknightPieces(after).axes() == 0 and after["phase"] == 2


# -- knight moves (docs/spec/games/uknight.md §4.3) -----------------------------------------


def test_knight_moves_only_in_phase_2():
    message = refusal(setup(w="B1", b="I9"), "B1-E3")
    assert "B1-E3 is a knight move, and stones move only in phase 2" in message
    after = play(setup(phase=2, w="B1", b="I9"), "b1-e3")
    assert on_board(after, "w") == ["E3"] and after["last"]["text"] == "B1-E3"


def test_a_double_keeps_its_axe_when_it_moves():
    assert play(setup(phase=2, W="B1", b="I9"), "B1-E3")["pieces"]["E3"] == "W"


def test_a_moved_stone_counts_friends_after_the_move():
    # E5's knight cells: B3, C2, G4 hold White, and the mover comes from H7, also one.
    counted = setup(phase=2, w="B3 C2 G4 H7", b="I9")
    assert play(counted, "H7-E5")["pieces"]["E5"] == "W"
    # With only B3 and C2 besides the mover, the empty start cell does not make three.
    two = play(setup(phase=2, w="B3 C2 H7", b="I9"), "H7-E5")
    assert two["pieces"]["E5"] == "w"
    assert "moved H7-E5)" in game.render_board(two, None)


def test_a_knight_move_never_captures():
    state = setup(phase=2, w="B1", b="E3 I9")
    assert "E3 is not vacant: it holds a Black stone, and a knight move never captures" in (
        refusal(state, "B1-E3")
    )
    assert "B1-E3" not in game.legal_moves(state, WHITE)
    assert game.parse_move(state, WHITE, "B1xE2") == "B1-E2"


# -- throwing an axe (docs/spec/games/uknight.md §4.4)
# ------------------------------------------------------------- A1 B2 C3 D4 E5 F6 ... is the
# vertical centre line of base 5, direction "up" from A1.


def test_the_axe_passes_own_pieces_and_stops_on_a_vacant_cell():
    state = setup(W="A1", w="B2", b="D4 E5")
    after = play(state, "A1-C3")
    assert after["pieces"] == {"A1": "w", "B2": "w", "C3": "w", "D4": "b", "E5": "b"}
    assert "threw the axe from A1 to C3" in game.render_board(after, None)
    assert "the axe cannot stop on your own stone on B2" in refusal(state, "A1-B2")


def test_the_axe_takes_the_first_opponent_piece_and_never_goes_past_it():
    state = setup(W="A1", w="B2", b="D4 E5")
    after = play(state, "A1xD4")
    assert after["pieces"] == {"A1": "w", "B2": "w", "D4": "w", "E5": "b"}
    assert "threw the axe from A1 and took Black's stone on D4" in game.render_board(after, 0)
    message = refusal(state, "A1xE5")
    assert "the path is blocked" in message and "a Black stone on D4" in message
    throws = {move for move in game.legal_moves(state, WHITE) if move.startswith("A1")}
    assert {"A1-C3", "A1xD4"} <= throws and "A1-E5" not in throws and "A1-B2" not in throws


def test_throws_go_along_all_six_directions():
    state = setup(W="E5", b="I9")
    targets = {re.split("[-x]", move)[1] for move in game.legal_moves(state, WHITE)[12:]}
    assert "E5xI9" in game.legal_moves(state, WHITE)
    board = HexHexBoard(5)
    assert targets == set(
        board.names(cell for ray in board.rays[board.parse("E5")] for cell in ray)
    )


def test_in_phase_1_an_axe_cannot_take_a_double_which_blocks_it():
    state = setup(W="A1", w="B2", B="D4", b="E5")
    message = refusal(state, "A1xD4")
    assert "in phase 1 an axe cannot take a double (a Black double on D4)" in message
    assert "the path is blocked" in refusal(state, "A1-E5")
    assert [m for m in game.legal_moves(state, WHITE) if m.startswith("A1") and "D4" in m] == []
    assert game.parse_move(state, WHITE, "A1-C3") == "A1-C3"


def test_in_phase_2_an_axe_takes_a_double_double_for_double():
    state = setup(phase=2, W="A1", w="B2", B="D4", b="E5 I9")
    after = play(state, "A1-D4")
    assert after["pieces"]["D4"] == "W" and after["pieces"]["A1"] == "w"
    assert after["last"]["text"] == "A1xD4"
    assert "took Black's double on D4" in game.render_board(after, 1)


def test_a_throw_gives_no_axe_by_the_three_stone_test():
    # E5 is a knight's move from B3, C2 and G4, yet the stone the axe leaves there is plain.
    state = setup(W="E1", w="B3 C2 G4", b="I9")
    assert play(state, "E1-E5")["pieces"]["E5"] == "w"


def test_only_a_double_throws():
    assert "the White stone on B2 has no axe: only a double (W) can throw" in refusal(
        setup(w="B2", b="I9"), "B2-E5"
    )


# -- removal in a turn (docs/spec/games/uknight.md §4.1) ------------------------------------


def test_every_qualifying_stone_goes_at_once_doubles_included():
    # A1's knight cells B4 C4 D2 D3 and I9's F7 F8 G6 H6 all hold Black pieces.
    state = setup(W="A1", w="I9 E5", b="B4 C4 D2 D3 F7 F8 G6 H6")
    after = play(state, "rem")
    assert on_board(after, "w") == ["E5"] and on_board(after, "W") == []
    assert "Last move: White rem (removed A1 and I9)" in game.render_board(after, None)
    assert game.outcome(after).winners == (WHITE,)


def test_a_knight_cell_that_is_vacant_or_own_keeps_the_stone():
    assert UknightPieces(setup(w="A1 I9", b="B4 C4 D2")).qualifying(WHITE) == []
    assert UknightPieces(setup(w="A1 D3 I9", b="B4 C4 D2")).qualifying(WHITE) == []


def test_removal_comes_before_the_action_and_the_action_sees_its_result():
    # A1 qualifies. Its knight cells are all taken, so removing it changes no placement
    # and no knight move; it does free A1 for an axe.
    state = setup(w="A1", W="E5", b="B4 C4 D2 D3 I9")
    assert "a removal can only come before the action" in refusal(state, "C2,rem")
    assert "the axe cannot stop on your own stone on A1" in refusal(state, "E5-A1")
    after = play(state, "rem,E5-A1")
    assert after["pieces"]["A1"] == "w" and after["pieces"]["E5"] == "w"
    assert after["last"]["removed"] == ["A1"]
    legal = game.legal_moves(state, WHITE)
    assert {"rem", "rem,C2", "rem,E5-A1", "C2", "E5-B2"} <= set(legal)
    assert "E5-A1" not in legal
    assert play(state, "rem,C2")["pieces"] == {
        "E5": "W",
        "C2": "w",
        "B4": "b",
        "C4": "b",
        "D2": "b",
        "D3": "b",
        "I9": "b",
    }


def test_a_removed_double_cannot_throw_afterwards():
    state = setup(W="A1", w="E5", b="B4 C4 D2 D3 I9")
    assert "rem takes your stone on A1 off the board before the action" in refusal(
        state, "rem,A1-B2"
    )


# -- the end of the game (docs/spec/games/uknight.md §6) ------------------------------------


def test_the_mover_wins_when_both_players_become_united():
    state = setup(W="A1", w="B2", b="C3 I9")
    after = play(state, "A1xC3")
    assert game.outcome(after).winners == (WHITE,)


def test_uniting_the_opponent_loses():
    state = setup(W="A1", w="E5", b="C3 I9")
    after = play(state, "A1xC3")
    outcome = game.outcome(after)
    assert outcome.winners == (BLACK,)
    assert outcome.reason == "Black's stones form a single group after White's turn"


def test_a_player_without_stones_is_not_united():
    state = setup(W="A1", w="E5", b="C3")
    after = play(state, "A1xC3")
    assert UknightPieces(after).stones(BLACK) == set()
    assert game.outcome(after) is None and game.to_move(after) == BLACK
    assert game.forced_move(after) == "pass"
    united = play(setup(W="A1", w="B2", b="C3"), "A1xC3")
    assert game.outcome(united).winners == (WHITE,)


def test_two_full_passes_in_a_row_draw():
    state = setup(w="B1 I9", b="A2 E5")
    once = play(state, "pass")
    assert game.outcome(once) is None and once["passes"] == 1
    assert "Last move: White passed (a full pass)" in game.render_board(once, None)
    reset = play(once, "D3", "pass")
    assert game.outcome(reset) is None
    drawn = play(once, "pass")
    assert game.outcome(drawn).winners == () and game.outcome(drawn).reason == (
        "two full passes in a row"
    )
    assert game.to_move(drawn) is None and game.legal_moves(drawn, WHITE) == []


def test_a_removal_alone_is_no_full_pass():
    state = setup(w="A1 E5 G7", b="B4 C4 D2 D3 I9", passes=1, to_move=WHITE)
    after = play(state, "rem")
    assert after["passes"] == 0 and game.outcome(after) is None


def test_the_server_passes_only_for_a_player_with_nothing_to_do():
    assert game.forced_move(setup(w="B1", b="I9")) is None
    # Every knight cell of White's only stone is taken and it has no axe: nothing to do.
    assert game.forced_move(setup(w="A1 B1", b="B4 C4 D2 D3 A3 D4 E2 E3 I9")) == "pass"


# -- notation (docs/spec/games/uknight.md §8) -----------------------------------------------


@pytest.mark.parametrize(
    "text,canonical",
    [
        ("rem, c2", "rem,C2"),
        ("REM;C2", "rem,C2"),
        ("remove+c2", "rem,C2"),
        ("remC2", "rem,C2"),
        ("rem,pass", "rem"),
        ("Remove", "rem"),
        (" c 2 ", "C2"),
    ],
)
def test_move_text_variants(text, canonical):
    assert game.parse_move(setup(w="A1 E5", b="B4 C4 D2 D3 I9"), WHITE, text) == canonical


@pytest.mark.parametrize(
    "text,canonical",
    [("a1-c3", "A1-C3"), ("A1xC3", "A1-C3"), ("a1 - d4", "A1xD4"), ("A1*D4", "A1xD4")],
)
def test_dash_and_x_are_interchangeable_in_a_throw(text, canonical):
    assert game.parse_move(setup(W="A1", w="B2", b="D4 E5"), WHITE, text) == canonical


@pytest.mark.parametrize(
    "state,text,message",
    [
        (setup(w="B1", b="I9"), "Z3", '"Z3" is not a cell of this base-5 board'),
        (setup(w="B1", b="I9"), "B1-K2", '"K2" is not a cell of this base-5 board'),
        (setup(phase=2, w="B1", b="I9"), "E3", "placing is over in phase 2"),
        (setup(w="B1", b="I9"), "B1-E2", "stones move only in phase 2"),
        (setup(w="B1", b="E2 I9"), "E2", "E2 is not vacant"),
        (setup(w="B1", b="I9"), "E5", "E5 is not a knight's move from any White stone"),
        (setup(phase=2, w="B1", b="I9"), "C1-E2", "there is no White stone on C1"),
        (setup(phase=2, w="B1", b="I9"), "I9-F7", "I9 holds a Black stone, not a White stone"),
        (setup(w="B1", b="I9"), "B1-B4", "has no axe: only a double (W) can throw"),
        (setup(W="A1", b="I9"), "A1-C2", "C2 is neither a knight's move from A1 nor on a line"),
        (setup(W="A1", b="C3 I9"), "A1-E5", "the path is blocked"),
        (setup(W="A1", B="C3", b="I9"), "A1xC3", "in phase 1 an axe cannot take a double"),
        (setup(w="B1", b="I9"), "rem", "no White stone qualifies for removal"),
        (setup(w="B1", b="I9"), "E2,rem", "a removal can only come before the action"),
        (setup(w="B1", b="I9"), "rem,rem", "write rem once"),
        (setup(w="B1", b="I9"), "E2,E3", "a turn holds at most a removal and one action"),
        (setup(w="B1", b="I9"), "B1-E2-E3", "write a cell to place a stone (E5)"),
        (start(5), "rem", "the first turn must be a placement"),
        (start(5), "B1-E3", "the first turn must be a placement"),
    ],
)
def test_refusals_explain_the_reason(state, text, message):
    assert message in refusal(state, text)


def test_moves_out_of_turn_or_after_the_end_are_refused():
    state = setup(w="B1", b="I9")
    assert "it is White's turn" in refusal(state, "E2", seat=BLACK)
    over = play(setup(w="A1 I9", b="D2 D3 C4 B4"), "rem")
    assert "the game is over" in refusal(over, "E2", seat=BLACK)


# -- display (docs/spec/games/uknight.md §9) ------------------------------------------------


def test_board_shows_phase_and_axes_above_and_the_last_turn_below():
    state = setup(phase=2, W="A1", w="I9 E5", b="B4 C4 D2 D3 F7 F8 G6 H6 C3", B="G9")
    after = play(state, "rem,E5-G8")
    text = game.render_board(after, None)
    lines = text.split("\n")
    assert lines[0] == "Phase 2 (began with 4 axes on the board), axes 1 (White 0, Black 1)"
    assert lines[-1] == "Last move: White rem,E5-G8 (removed A1 and I9; then moved E5-G8)"
    assert "[w]" in text and "[.]" in text and text.count("[") == 3  # G8, E5 and the legend's "[ ]"
    assert game.outcome(after).winners == (WHITE,)


def test_a_long_report_is_wrapped_to_the_line_width():
    board = HexHexBoard(5)
    state = setup(w="B2", b="I9")
    state["last"] = {
        "seat": WHITE,
        "text": "rem,B2",
        "removed": board.names(board.cells[:40]),
        "kind": "place",
        "cells": ["B2"],
        "axe": True,
        "taken": None,
        "phase_begins": False,
    }
    lines = game.report_lines(state)
    assert len(lines) > 1 and all(len(line) <= 76 for line in lines)
    assert " ".join(lines).endswith("; then placed B2, which became a double)")


def test_a_full_base_7_board_fits_76_columns():
    board = HexHexBoard(7)
    state = setup(size=7, w="A1", b="M13")
    state["pieces"] = {name: "WBwb"[i % 4] for i, name in enumerate(board.names(board.cells))}
    text = game.render_board(state, 0)
    assert max(len(line) for line in text.split("\n")) <= 76
    assert text.count("W") >= 31


def test_help_text_gives_rules_options_notation_and_examples():
    text = game.help_text()
    for fragment in (
        "-size=N",
        "default 6",
        "rem,E5",
        "C3xF6",
        "H7-E5",
        "swap",
        "pass",
        "uknight challenge alice bob",
        "uknight move 101 alice secret",
    ):
        assert fragment in text
    assert max(len(line) for line in text.split("\n")) <= 76


# -- conformance and properties -------------------------------------------------------------


def sample_games():
    samples = [
        ({"size": "5"}, 2, ["E3", "C3", "pass", "pass"]),
        ({}, 2, ["e3"]),
        ({"size": "7"}, 2, []),
    ]
    for size, seed in ((5, 3), (6, 4), (7, 5)):
        moves, _ = random_game(game, game.parse_options({"size": str(size)}, 2), 2, seed, 120)
        samples.append(({"size": str(size)}, 2, moves))
    return samples


def test_conformance():
    check_game(
        game,
        sample_games(),
        bad_options=({"size": "9"}, {"size": True}, {"mode": "x"}),
    )


def playout(size, seed, max_plies=400):
    """Random legal turns, passing when the server would; yields (state, seat, move)."""
    rng = random.Random(seed)
    state = game.initial_state(game.parse_options({"size": str(size)}, 2), 2, seed)
    for _ in range(max_plies):
        seat = game.to_move(state)
        if seat is None:
            return
        legal = game.legal_moves(state, seat)
        move = rng.choice(legal) if legal else game.forced_move(state)
        yield state, seat, move
        state = game.apply_move(state, seat, move)


sizes = st.sampled_from([5, 6, 7])
seeds = st.integers(0, 10**6)


@settings(max_examples=12, deadline=None)
@given(sizes, seeds)
def test_random_legal_games_replay_identically(size, seed):
    moves = []
    final = None
    for state, seat, move in playout(size, seed):
        moves.append(move)
        final = game.apply_move(state, seat, move)
    assert checked_replay(game, game.parse_options({"size": str(size)}, 2), 2, seed, moves) == final


@settings(max_examples=12, deadline=None)
@given(sizes, seeds)
def test_the_phase_never_goes_back_to_1(size, seed):
    phases = [state["phase"] for state, _seat, _move in playout(size, seed)]
    assert phases == sorted(phases)
    assert set(phases) <= {1, 2}


def flood_fill_groups(cells):
    """Brute force: grow each group by scanning every cell for one at distance 1."""
    left, groups = set(cells), []
    while left:
        group = {left.pop()}
        grown = True
        while grown:
            near = {c for c in left if any(distance(c, g) == 1 for g in group)}
            grown = bool(near)
            group |= near
            left -= near
        groups.append(frozenset(group))
    return groups


@settings(max_examples=60, deadline=None)
@given(sizes, st.data())
def test_group_detection_agrees_with_a_brute_force_flood_fill(size, data):
    board = HexHexBoard(size)
    whites = data.draw(st.sets(st.sampled_from(board.cells), max_size=40))
    blacks = data.draw(st.sets(st.sampled_from(board.cells), max_size=20)) - whites
    state = setup(size=size)
    state["pieces"] = {board.name(c): "w" for c in whites} | {board.name(c): "B" for c in blacks}
    piece_map = UknightPieces(state)
    assert set(board.groups(piece_map.stones(WHITE))) == set(flood_fill_groups(whites))
    for seat, cells in ((WHITE, whites), (BLACK, blacks)):
        assert piece_map.united(seat) == (len(flood_fill_groups(cells)) == 1)


def reference_turns(state, seat):
    """Every legal turn, straight from docs/spec/games/uknight.md §4 with the geometry primitives
    and no tables."""
    board = HexHexBoard(state["options"]["size"])
    cells, name = board.cells, board.name
    pieces = {board.parse(n): s for n, s in state["pieces"].items()}
    mine = "wb"[seat]

    def own(cell, where):
        return cell in where and where[cell].lower() == mine

    def enemy(cell, where):
        return cell in where and where[cell].lower() != mine

    def actions(where):
        found = set()
        stones = [c for c in cells if own(c, where)]
        for target in cells:
            if target in where:
                continue
            for stone in stones:
                if is_knight_move(stone, target):
                    placing = state["phase"] == 1
                    found.add(name(target) if placing else f"{name(stone)}-{name(target)}")
        for stone in stones:
            if not where[stone].isupper():
                continue
            for target in cells:
                if target == stone or line_direction(stone, target) is None:
                    continue
                if any(enemy(c, where) for c in cells_between(stone, target)):
                    continue
                if target not in where:
                    found.add(f"{name(stone)}-{name(target)}")
                elif enemy(target, where) and (state["phase"] == 2 or where[target].islower()):
                    found.add(f"{name(stone)}x{name(target)}")
        return found

    if state["turns"] == 0:
        return {move for move in actions(pieces) if "-" not in move and "x" not in move}
    turns = actions(pieces)
    qualifying = {
        c
        for c in cells
        if own(c, pieces)
        and not any(own(n, pieces) for n in cells if distance(c, n) == 1)
        and all(enemy(t, pieces) for t in cells if is_knight_move(c, t))
    }
    if qualifying:
        rest = {c: s for c, s in pieces.items() if c not in qualifying}
        turns |= {"rem"} | {f"rem,{action}" for action in actions(rest)}
    return turns


def reference_result(state, seat, move):
    """The pieces, phase and winners after a turn, straight from docs/spec/games/uknight.md §4 and
    §6."""
    board = HexHexBoard(state["options"]["size"])
    pieces = {board.parse(n): s for n, s in state["pieces"].items()}
    mine, other = "wb"[seat], "bw"[seat]

    def own(cell):
        return cell in pieces and pieces[cell].lower() == mine

    def friends(cell):
        return sum(is_knight_move(cell, stone) for stone in pieces if own(stone))

    phase = state["phase"]
    parts = [] if move == "pass" else move.split(",")
    if parts and parts[0] == "rem":
        gone = [
            c
            for c in pieces
            if own(c)
            and not any(own(n) and distance(c, n) == 1 for n in pieces)
            and all(t in pieces and not own(t) for t in board.cells if is_knight_move(c, t))
        ]
        for cell in gone:
            del pieces[cell]
        parts = parts[1:]
    if parts:
        cells = [board.parse(text) for text in re.split("[-x]", parts[0])]
        if len(cells) == 1:
            pieces[cells[0]] = mine.upper() if friends(cells[0]) >= 3 else mine
            if sum(s.isupper() for s in pieces.values()) >= {5: 4, 6: 6, 7: 8}[board.size]:
                phase = 2
        elif is_knight_move(*cells):
            symbol = pieces.pop(cells[0])
            pieces[cells[1]] = mine.upper() if symbol.isupper() or friends(cells[1]) >= 3 else mine
        else:
            taken = pieces.get(cells[1], "")
            pieces[cells[0]] = mine
            pieces[cells[1]] = mine.upper() if taken.isupper() else mine

    def united(colour):
        stones = [c for c, s in pieces.items() if s.lower() == colour]
        return bool(stones) and len(flood_fill_groups(stones)) == 1

    winners = None
    if united(mine):
        winners = [seat]
    elif united(other):
        winners = [1 - seat]
    elif move == "pass" and state["passes"] == 1:
        winners = []
    return {board.name(c): s for c, s in pieces.items()}, phase, winners


def check_against_the_reference(state, seat, move):
    after = game.apply_move(state, seat, move)
    pieces, phase, winners = reference_result(state, seat, move)
    assert after["pieces"] == pieces, move
    assert after["phase"] == phase, move
    outcome = game.outcome(after)
    assert (None if outcome is None else list(outcome.winners)) == winners, move


SCENES = [
    start(5),
    setup(w="B3 C2 G4", b="I9"),
    setup(w="A1 I9", b="D2 D3 C4 B4"),
    setup(W="A1", w="I9 E5", b="B4 C4 D2 D3 F7 F8 G6 H6"),
    setup(W="A1", w="E5", b="B4 C4 D2 D3 I9"),
    setup(W="A1 E5", w="B2", B="D4", b="G7 I9"),
    setup(phase=2, W="A1 E5", w="B2", B="D4", b="G7 I9"),
    setup(phase=2, w="B3 C2 G4 H7", W="E1", b="I9 E8", B="E3"),
    setup(phase=2, W="A1", w="B1 B2", b="B4 C4 D2 D3 A3 D4 E2 E3 I9", B="E5"),
    setup(W="A1", w="E5", b="C3"),
]


@pytest.mark.parametrize("scene", range(len(SCENES)))
def test_every_legal_turn_of_the_scenes_follows_the_rules(scene):
    state = SCENES[scene]
    seat = game.to_move(state)
    legal = game.legal_moves(state, seat)
    assert set(legal) == reference_turns(state, seat) and len(legal) == len(set(legal))
    for move in legal + (["pass"] if game.can_pass(state, seat) else []):
        check_against_the_reference(state, seat, move)


@settings(max_examples=6, deadline=None)
@given(sizes, seeds)
def test_random_games_follow_the_rules(size, seed):
    for index, (state, seat, move) in enumerate(playout(size, seed, max_plies=150)):
        if index % 6 == 0:
            reference = reference_turns(state, seat)
            assert set(game.legal_moves(state, seat)) == reference
            assert (game.forced_move(state) == "pass") == (not reference)
        check_against_the_reference(state, seat, move)


def candidate_texts(state, seat):
    board = HexHexBoard(state["options"]["size"])
    names = board.names(board.cells)
    own = [n for n, s in state["pieces"].items() if s.lower() == "wb"[seat]]
    actions = names + [f"{a}-{b}" for a in own for b in names]
    return ["rem"] + actions + [f"rem,{action}" for action in actions]


@settings(max_examples=4, deadline=None)
@given(sizes, seeds)
def test_parse_move_accepts_exactly_the_listed_moves(size, seed):
    for index, (state, seat, _move) in enumerate(playout(size, seed, max_plies=200)):
        if index % 50 != 7:
            continue
        legal = set(game.legal_moves(state, seat))
        accepted = set()
        for text in candidate_texts(state, seat):
            try:
                accepted.add(game.parse_move(state, seat, text))
            except MoveError as error:
                assert str(error).startswith(f'Invalid move "{text}": ')
        assert accepted == legal


def test_listing_the_legal_moves_takes_under_5_ms():
    """Best of three per position, so that a busy machine's pauses do not count."""
    slowest = 0.0
    for size in (5, 6, 7):
        for seed in range(4):
            for state, seat, _move in playout(size, seed, max_plies=300):
                times = []
                for _ in range(3):
                    began = time.perf_counter()
                    game.legal_moves(state, seat)
                    times.append(time.perf_counter() - began)
                slowest = max(slowest, min(times))
    assert slowest < 0.005


def test_blanks_inside_a_mailed_move_are_ignored(harness):
    harness.signup("alice", "bob")
    harness.challenge("uknight challenge alice bob -size=5")
    first = next(
        iter(game.legal_moves(game.initial_state(game.parse_options({"size": "5"}, 2), 2, 0), 0))
    )
    spaced = " ".join(first)
    harness.ok(f"uknight move 101 alice secret {spaced}")
    shown = harness.ok("uknight show 101", sender=None).printed[0].body
    assert f"1 {first}" in shown
