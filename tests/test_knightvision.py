"""KnightVision: every worked example of the spec, the hex knight's move and lines of
docs/spec/games/hexgrid.md on the game's boards, the rules of placement, throws, passes and the win,
the notation, the board picture, random games, and play through the core."""

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.hexgrid import RhombusBoard
from games.knightvision import KnightVision, KnightVisionPieces
from pbm.game import MoveError, OptionError
from pbm.testing import check_game, random_game
from tests.conftest import body_of
from tests.spec_pictures import EMPTY_9X9, KNIGHT_PICTURE_9X9, KV1, KV2, KV5

game = KnightVision()
WHITE, BLACK = 0, 1


def start(size=9):
    return game.initial_state(game.parse_options({"size": str(size)}, 2), 2, seed=1)


def play(state, *moves):
    for move in moves:
        seat = game.to_move(state)
        state = game.apply_move(state, seat, game.parse_move(state, seat, move))
    return state


def setup(size=9, white="", black="", white_stacks="", black_stacks="", to_move=WHITE):
    """A position after both free placements, with the pieces named, set up directly."""
    board = RhombusBoard(size)
    rows = [["."] * size for _ in range(size)]
    for names, symbol in ((white, "w"), (black, "b"), (white_stacks, "W"), (black_stacks, "B")):
        for name in names.split():
            q, r = board.parse(name)
            rows[r][q] = symbol
    return dict(start(size), rows=["".join(row) for row in rows], to_move=to_move, free=[])


def refusal(state, text):
    with pytest.raises(MoveError) as error:
        game.parse_move(state, game.to_move(state), text)
    return str(error.value)


def marked(picture: str, symbol: str) -> set[str]:
    """The cells drawn with symbol in a spec picture without marks."""
    found = set()
    for line in picture.strip("\n").split("\n")[1:-1]:
        tokens = line.split()
        found |= {
            f"{chr(ord('a') + column)}{tokens[0]}"
            for column, drawn in enumerate(tokens[1:-1])
            if drawn == symbol
        }
    return found


def placements(moves) -> set[str]:
    return {move for move in moves if move[-1].isdigit() and "-" not in move and "x" not in move}


def throws(moves) -> set[str]:
    return {move for move in moves if "-" in move or "x" in move}


# -- pictures copied verbatim from the specs -------------------------------------------

LAST_ROWS_11X11 = """\
           9   . . . . . . . . . . .   9
           10   . . . . . . . . . . .   10
            11   . . . . . . . . . . .   11
                   a b c d e f g h i j k
"""


# -- options ---------------------------------------------------------------------------


def test_options_default_to_an_11x11_board():
    assert game.parse_options({}, 2) == {"size": 11}
    assert start(11)["rows"] == ["." * 11] * 11


@pytest.mark.parametrize("size", range(9, 15))
def test_every_size_from_9_to_14_is_offered(size):
    assert game.parse_options({"size": str(size)}, 2) == {"size": size}
    assert len(start(size)["rows"]) == size


@pytest.mark.parametrize(
    "raw,message",
    [
        ({"size": "20"}, 'Invalid KnightVision parameter "-size=20": size must be from 9 to 14'),
        ({"size": "8"}, 'Invalid KnightVision parameter "-size=8": size must be from 9 to 14'),
        ({"size": "15"}, "size must be from 9 to 14"),
        ({"size": "eleven"}, "size must be from 9 to 14"),
        ({"size": True}, 'Invalid KnightVision parameter "-size": size must be from 9 to 14'),
        (
            {"swap": True},
            'Invalid KnightVision parameter "-swap": unknown option; the only '
            "option is -size=N (9 to 14, default 11)",
        ),
    ],
)
def test_option_errors(raw, message):
    with pytest.raises(OptionError) as error:
        game.parse_options(raw, 2)
    assert message in str(error.value)


# -- KV-1: knight placement -------------------------------------------------------------


def test_kv1_white_has_exactly_the_twelve_knight_cells_of_e5():
    state = play(start(), "e5", "c3")
    assert game.to_move(state) == WHITE
    legal = game.legal_moves(state, WHITE)
    assert sorted(legal) == sorted(marked(KV1, "o"))
    assert sorted(legal) == "b6 b7 c4 c8 d3 d8 f2 f7 g2 g6 h3 h4".split()
    assert not any(move.endswith("+") for move in legal) and not throws(legal)


def test_kv1_the_picture_marks_the_last_move():
    state = play(start(), "e5", "c3")
    expected = KV1.replace("o", ".").replace("3   . . b . .", "3   . .[b]. .").rstrip("\n")
    assert game.picture(state) == expected


def test_kv1_every_other_cell_is_refused_with_the_reason():
    state = play(start(), "e5", "c3")
    board = RhombusBoard(9)
    legal = set(game.legal_moves(state, WHITE))
    for name in board.names(board.cells):
        if name in legal:
            assert game.parse_move(state, WHITE, name) == name
        elif name in ("e5", "c3"):
            assert f"{name} is not vacant" in refusal(state, name)
        else:
            assert f"{name} is not a knight's move from any of your pieces" in refusal(state, name)
    assert refusal(state, "e6") == (
        'Invalid move "e6": e6 is not a knight\'s move from any of your pieces: none of its '
        "knight cells (b7, b8, c5, c9, d4, d9, f3, f8, g3, g7, h4 and h5) holds a White piece. "
        "A placement must be two steps along a line and one step at 60 degrees from one of "
        "your pieces"
    )
    assert "f5 is not a knight's move" in refusal(state, "f5")


def test_kv1_no_stack_and_no_throw_exist():
    state = play(start(), "e5", "c3")
    assert "a stack needs three of your pieces at a knight's move, and c4 has 1 (e5)" in (
        refusal(state, "c4+")
    )
    assert "e5 holds White's knight" in refusal(state, "e5-e9")
    assert "there is no stack on d5" in refusal(state, "d5-d9")


# -- KV-2: stack eligibility ------------------------------------------------------------


def test_kv2_position_is_drawn_as_in_the_spec():
    state = setup(white="c4 f2 g6", black="a9")
    assert game.picture(state) == KV2.rstrip("\n")


def test_kv2_three_knights_allow_a_knight_or_a_stack_on_e5():
    state = setup(white="c4 f2 g6", black="a9")
    legal = game.legal_moves(state, WHITE)
    assert "e5" in legal and "e5+" in legal
    stacked = play(state, "e5+")
    assert stacked["rows"][4][4] == "W"
    assert play(state, "e5")["rows"][4][4] == "w"


def test_kv2_two_knights_allow_only_a_knight():
    state = setup(white="c4 g6", black="a9")
    legal = game.legal_moves(state, WHITE)
    assert "e5" in legal and "e5+" not in legal
    assert game.parse_move(state, WHITE, "e5") == "e5"
    assert (
        "a stack needs three of your pieces at a knight's move, and e5 has 2 (c4 and g6)"
        in refusal(state, "e5+")
    )


def test_a_stack_counts_as_one_piece_at_a_knight_move():
    state = setup(white="c4", white_stacks="g6", black="a9")
    assert "e5+" not in game.legal_moves(state, WHITE)
    assert "e5+" in game.legal_moves(setup(white="c4 f2", white_stacks="g6", black="a9"), WHITE)


def test_opponent_pieces_at_a_knight_move_do_not_count():
    state = setup(white="c4 f2", black="g6 a9")
    assert "e5" in game.legal_moves(state, WHITE)
    assert "e5+" not in game.legal_moves(state, WHITE)


# -- KV-5: forced pass ------------------------------------------------------------------


def test_kv5_position_is_drawn_as_in_the_spec():
    assert game.picture(setup(white="a1", black="b3 c2")) == KV5.rstrip("\n")


def test_kv5_pass_is_the_only_move_and_the_server_plays_it():
    state = setup(white="a1", black="b3 c2")
    assert game.legal_moves(state, WHITE) == []
    assert game.forced_move(state) == "pass"
    assert not game.can_pass(state, WHITE)
    after = game.apply_move(state, WHITE, "pass")
    assert game.to_move(after) == BLACK and after["rows"] == state["rows"]
    legal = game.legal_moves(after, BLACK)
    assert len(legal) == 9 and placements(legal) == set(legal)
    assert "Last move: White passed (no legal action)" in game.render_board(after, None)


def test_pass_is_never_voluntary():
    state = play(start(), "e5", "c3")
    assert game.forced_move(state) is None
    assert not game.can_pass(state, WHITE)
    assert game.forced_move(start()) is None


def test_a_stack_with_a_throw_is_not_forced_to_pass():
    state = setup(white_stacks="a1", black="b3 c2 e1")
    assert game.legal_moves(state, WHITE) == ["a1-b1", "a1-c1", "a1-d1", "a1xe1"] + [
        f"a1-a{row}" for row in range(2, 10)
    ]
    assert game.forced_move(state) is None


# -- KV-6: opening and swap -------------------------------------------------------------


def test_kv6_first_placement_is_any_cell_and_a_single_knight():
    state = start()
    assert len(game.legal_moves(state, WHITE)) == 81
    assert placements(game.legal_moves(state, WHITE)) == set(game.legal_moves(state, WHITE))
    assert "your first placement is free but always a single knight; write e5" in (
        refusal(state, "e5+")
    )


def test_kv6_black_may_place_anywhere_vacant_but_not_a_stack():
    state = play(start(), "e5")
    legal = game.legal_moves(state, BLACK)
    assert len(legal) == 80 and "e5" not in legal and placements(legal) == set(legal)
    assert "e5 is not vacant: it holds White's knight on e5" in refusal(state, "e5")
    assert "a single knight" in refusal(state, "c3+")
    assert game.parse_move(state, BLACK, "c3") == "c3"


def test_kv6_after_the_swap_black_places_freely_then_white_by_knight_move():
    assert game.swap_after == 1
    state = play(start(), "e5")
    # The swap exchanges the seat holders in the core; the state is unchanged, Black to move.
    assert game.to_move(state) == BLACK
    state = play(state, "a1")
    assert sorted(game.legal_moves(state, WHITE)) == sorted(
        "b6 b7 c4 c8 d3 d8 f2 f7 g2 g6 h3 h4".split()
    )
    state = play(play(start(), "e5"), "c4")
    assert sorted(game.legal_moves(state, WHITE)) == sorted(
        "b6 b7 c8 d3 d8 f2 f7 g2 g6 h3 h4".split()
    )


def test_only_the_two_first_placements_are_free():
    state = play(start(), "e5", "c3")
    assert state["free"] == []
    assert "d5 is not a knight's move" in refusal(state, "d5")
    state = play(state, "g2")
    assert "i9 is not a knight's move" in refusal(state, "i9")


# -- docs/spec/games/hexgrid.md: the knight's move and the lines on the KnightVision board ---------


def test_hexgrid_3_3_knight_cells_of_e5_are_the_placements():
    state = setup(white="e5", black="a1")
    assert set(game.legal_moves(state, WHITE)) == marked(KNIGHT_PICTURE_9X9, "N")


@pytest.mark.parametrize(
    "size,origin,expected",
    [
        (9, "a1", "b3 c2"),
        (9, "i1", "f2 f3 g4 h4"),
        (9, "a9", "b6 c6 d7 d8"),
        (9, "i9", "g8 h7"),
        (9, "e5", "b6 b7 c4 c8 d3 d8 f2 f7 g2 g6 h3 h4"),
        (11, "f6", "c7 c8 d5 d9 e4 e9 g3 g8 h3 h7 i4 i5"),
    ],
)
def test_hexgrid_3_3_knight_cells_of_a_lone_knight(size, origin, expected):
    assert sorted(game.legal_moves(setup(size, white=origin), WHITE)) == expected.split()


def test_hexgrid_3_3_knight_cell_counts_on_9x9():
    board = RhombusBoard(9)
    counts = Counter(
        len(game.legal_moves(setup(white=name), WHITE)) for name in board.names(board.cells)
    )
    assert counts == {2: 2, 3: 4, 4: 8, 5: 4, 6: 22, 7: 4, 8: 16, 10: 12, 12: 9}


def test_hexgrid_3_3_an_axe_from_e5_flies_along_the_three_lines():
    state = setup(white_stacks="e5", black="a1")
    landings = {move.split("-")[1] for move in throws(game.legal_moves(state, WHITE))}
    assert landings == marked(KNIGHT_PICTURE_9X9, "-")


def test_hexgrid_6_3_empty_boards_are_drawn_as_in_the_spec():
    assert game.picture(start(9)) == EMPTY_9X9.rstrip("\n")
    *rows, letters = game.picture(start(11)).split("\n")[-4:]
    assert rows == LAST_ROWS_11X11.split("\n")[:3]
    # docs/spec/games/hexgrid.md §6.3 prints these letters one blank further right than its own
    # shift rule and the 11x11 pictures of docs/spec/games/lox.md; the shared drawing follows the
    # rule.
    assert letters == " " * 18 + "a b c d e f g h i j k"


def test_hexgrid_6_2_corners_belong_to_both_edges():
    line = "i1 h2 g3 f4 e5 d6 c7 b8 a9"  # an obtuse corner to the other, on one line
    assert KnightVisionPieces(setup(white=line)).has_chain(WHITE)
    assert KnightVisionPieces(setup(black=line)).has_chain(BLACK)


# -- throwing an axe ----------------------------------------------------------------------


def test_an_axe_passes_over_friends_and_stops_at_the_first_enemy():
    state = setup(white_stacks="e5", white="e7", black="e9 a1")
    down = {move for move in throws(game.legal_moves(state, WHITE)) if move[3] == "e"}
    assert down == {"e5-e4", "e5-e3", "e5-e2", "e5-e1", "e5-e6", "e5-e8", "e5xe9"}


def test_a_capture_removes_the_whole_stack_and_the_axe_becomes_a_knight():
    state = setup(white_stacks="e5", white="e7", black_stacks="e9", black="a1")
    assert game.parse_move(state, WHITE, "e5-e9") == "e5xe9"
    after = play(state, "e5xe9")
    assert KnightVisionPieces(after).pieces == {(4, 4): "w", (4, 6): "w", (4, 8): "w", (0, 0): "b"}
    assert game.to_move(after) == BLACK


def test_a_throw_to_a_vacant_cell_leaves_two_knights():
    state = setup(white_stacks="e5", black="a1")
    assert game.parse_move(state, WHITE, "e5xe8") == "e5-e8"
    after = play(state, "e5-e8")
    assert after["rows"][4][4] == "w" and after["rows"][7][4] == "w"


def test_a_throw_need_not_land_at_a_knight_move():
    state = setup(white_stacks="e5", black="a1")
    assert "e5-e6" in game.legal_moves(state, WHITE)
    assert "e6" not in game.legal_moves(state, WHITE)


@pytest.mark.parametrize(
    "move,message",
    [
        (
            "e5-e8",
            'Invalid move "e5-e8": the axe cannot pass Black\'s knight on e7; it can '
            "capture it with e5xe7",
        ),
        ("E5 x E8", 'Invalid move "e5xe8": the axe cannot pass Black\'s knight on e7'),
        (
            "e5-e3",
            "the axe flies over your own pieces but cannot land on them, and e3 holds "
            "White's knight on e3",
        ),
        ("e5-f7", "the landing cell must be on one line with the stack"),
        ("e5-e5", "the landing cell must be on one line with the stack"),
        ("d4-d6", "there is no stack on d4"),
        ("e3-e1", "only one of your stacks can throw an axe, and e3 holds White's knight on e3"),
        ("a1-a2", "a1 holds Black's stack on a1"),
        (
            "e5-z9",
            '"z9" is not a cell of this 9x9 board: the columns are a to i and the rows 1 to 9',
        ),
    ],
)
def test_throw_refusals_say_why(move, message):
    state = setup(white_stacks="e5", white="e3", black="e7", black_stacks="a1")
    assert message in refusal(state, move)


def test_a_stack_with_only_friends_on_its_lines_cannot_throw():
    white = " ".join(f"{column}5" for column in "abcdfghi")
    white += " " + " ".join(f"e{row}" for row in (1, 2, 3, 4, 6, 7, 8, 9))
    white += " i1 h2 g3 f4 d6 c7 b8 a9"
    state = setup(white_stacks="e5", white=white, black="a1")
    assert not throws(game.legal_moves(state, WHITE))


# -- the win ------------------------------------------------------------------------------

COLUMN_E = "e1 e2 e3 e4 e5 e6 e7 e8 g6"  # g6 puts e9 at a knight's move


def test_a_chain_is_no_win_for_the_player_who_made_it():
    state = setup(white=COLUMN_E, black="a1 a5", to_move=WHITE)
    assert "e9" in game.legal_moves(state, WHITE)
    state = play(state, "e9")
    assert game.outcome(state) is None and game.to_move(state) == BLACK


def test_a_chain_that_survives_the_opponent_turn_wins():
    state = play(setup(white=COLUMN_E, black="a1 a5"), "e9", "c6")
    outcome = game.outcome(state)
    assert outcome.winners == (WHITE,)
    assert outcome.reason == "White's chain joins the top and bottom edges"
    assert game.to_move(state) is None
    assert game.legal_moves(state, WHITE) == [] and game.forced_move(state) is None


def test_a_capture_breaks_the_chain_in_time():
    state = setup(white=COLUMN_E + " f1", black="h1", black_stacks="a5", to_move=WHITE)
    state = play(state, "e9")
    assert "a5xe5" in game.legal_moves(state, BLACK)
    state = play(state, "a5xe5")
    assert game.outcome(state) is None and game.to_move(state) == WHITE


def test_black_wins_left_to_right():
    row = "a5 b5 c5 d5 e5 f5 g5 h5 g8"  # g8 puts i5 at a knight's move
    state = play(setup(black=row, white="e1 e9", to_move=BLACK), "i5", "g2")
    assert game.outcome(state).winners == (BLACK,)
    assert game.outcome(state).reason == "Black's chain joins the left and right edges"


def test_a_forced_pass_hands_the_win_to_the_chain_owner():
    state = setup(white="b3 c2 c1 c3 c4 c5 c6 c7 c8 c9", black="a1", to_move=BLACK)
    assert game.outcome(state) is None
    assert game.forced_move(state) == "pass"
    assert game.outcome(game.apply_move(state, BLACK, "pass")).winners == (WHITE,)


def test_a_player_whose_pieces_are_all_captured_must_pass():
    state = setup(white_stacks="e5", white="a9", black="e8")
    state = play(state, "e5xe8")
    assert game.forced_move(state) == "pass"
    assert game.legal_moves(state, BLACK) == []


# -- notation ------------------------------------------------------------------------------


def test_moves_are_case_insensitive_and_spaces_are_ignored():
    state = setup(white="c4 f2 g6", white_stacks="h8", black="a9 h2")
    assert game.parse_move(state, WHITE, " E5 + ") == "e5+"
    assert game.parse_move(state, WHITE, "E5") == "e5"
    assert game.parse_move(state, WHITE, "H8 X H2") == "h8xh2"
    assert game.parse_move(state, WHITE, "h8 - h 2") == "h8xh2"
    assert game.parse_move(state, WHITE, "h8-h5") == "h8-h5"


@pytest.mark.parametrize("text", ["", "e", "5e", "e5++", "+e5", "e5--e9", "e5-", "e5=e9", "pass"])
def test_unreadable_moves_explain_the_notation(text):
    message = refusal(setup(white="e5", black="a1"), text)
    assert message.endswith(
        "write a cell to place a knight (e5), the cell and + to place a stack (e5+), or a "
        "stack's cell, - or x, and the landing cell to throw its axe (e5-e9, e5xe8)"
    )


def test_unknown_cells_are_named():
    message = refusal(setup(white="e5", black="a1"), "j5")
    assert message == (
        'Invalid move "j5": "j5" is not a cell of this 9x9 board: the columns are a to i and '
        "the rows 1 to 9"
    )


# -- the board in mail ---------------------------------------------------------------------


def test_the_board_shows_stacks_legend_and_the_last_throw():
    state = play(setup(white_stacks="e5", white="c4 f2", black="e8 a1"), "e5xe8")
    text = game.render_board(state, None)
    lines = text.split("\n")
    assert lines[5] == "       5   . . . .[w]. . . .   5"
    assert lines[8] == "          8   . . . .[w]. . . .   8"
    assert lines[11:] == [
        "w b  White, Black knight",
        "W B  White, Black stack (a knight with an axe)",
        "[ ]  the last move",
        "White (w W) joins top-bottom: rows 1 and 9",
        "Black (b B) joins left-right: columns a and i",
        "Last move: White e5xe8",
    ]
    stacks = setup(white_stacks="e5", black_stacks="a1")
    assert "   1   B . . . . . . . .   1" in game.render_board(stacks, BLACK)
    assert "       5   . . . . W . . . .   5" in game.render_board(stacks, WHITE)


def test_the_largest_board_fits_the_mail():
    state = setup(14, white="a1 n14", black="a14 n1")
    text = game.render_board(state, None)
    assert max(len(line) for line in text.split("\n")) <= 76
    assert "columns a and n" in text and "rows 1 and 14" in text


def test_help_explains_notation_swap_and_pass():
    text = game.help_text()
    for fragment in (
        "-size=N   board size 9 to 14 (default 11)",
        "e5+      place a stack on e5",
        "e5xe8    throw the axe of the stack on e5 and capture on e8",
        "swap     only as Black's first move (move 2)",
        "A voluntary pass is not allowed",
        "knightvision challenge alice bob",
        "knightvision move 101 alice secret e5",
    ):
        assert fragment in text
    assert max(len(line) for line in text.split("\n")) <= 76


# -- the contract and random games --------------------------------------------------------

# A game won by White: a swap after e5 changes nothing in the state, so the same moves
# are also the game of tests/test_knightvision_by_mail.py.
WON_GAME = ("e5 h7 f2 i9 d8 f6 d5 g5 e7 i4 g3 i5 f1 g8+ e4 h2 e6 h3 f3 h5 d9 g8xg3").split()


def test_contract_conformance():
    check_game(
        game,
        [
            ({"size": "9"}, 2, WON_GAME),
            ({"size": "9"}, 2, WON_GAME[:14]),
            ({}, 2, ["F6", "c3", "d5"]),
            ({"size": "14"}, 2, ["a1", "N14", "c2", "l13", "b3"]),
            ({}, 2, []),
        ],
        bad_options=({"no_such_option": True}, {"size": "16"}, {"size": True}),
    )


def test_the_sample_game_is_won_by_white():
    state = play(start(), *WON_GAME)
    assert game.outcome(state).winners == (WHITE,)


def actions_within_bound(moves, size):
    """docs/spec/games/knightvision.md §5: every action but a capture fills a vacant cell, and each
    capture spends an axe that only a stack placement makes."""
    actions = [move for move in moves if move != "pass"]
    captures = sum("x" in move for move in actions)
    stacks = sum(move.endswith("+") for move in actions)
    return len(actions) - captures <= size * size and captures <= stacks


def replayed(options, seed, moves):
    state = game.initial_state(options, 2, seed)
    for move in moves:
        seat = game.to_move(state)
        assert seat is not None
        if move == "pass":
            assert game.forced_move(state) == "pass"
        else:
            assert game.parse_move(state, seat, move) == move
        piece_map = KnightVisionPieces(state)
        assert not (piece_map.has_chain(WHITE) and piece_map.has_chain(BLACK))
        state = game.apply_move(state, seat, move)
    return state


@settings(max_examples=100, deadline=None)
@given(size=st.integers(9, 14), seed=st.integers(0, 2**32 - 1))
def test_random_games_end_with_a_winner_within_the_bound(size, seed):
    options = game.parse_options({"size": str(size)}, 2)
    moves, final = random_game(game, options, 2, seed, max_plies=4 * size * size + 2)
    assert game.outcome(final) is not None and len(game.outcome(final).winners) == 1
    assert actions_within_bound(moves, size)
    assert replayed(options, seed, moves) == final


def aggressive_game(size, seed, greed):
    """A random game that prefers captures and stacks, which uniform play seldom makes."""
    rng = random.Random(seed)
    state = start(size)
    moves = []
    while game.to_move(state) is not None:
        seat = game.to_move(state)
        legal = game.legal_moves(state, seat)
        preferred = [m for m in legal if "x" in m] or [m for m in legal if m.endswith("+")]
        if not legal:
            move = game.forced_move(state)
        elif preferred and rng.random() < greed:
            move = rng.choice(preferred)
        else:
            move = rng.choice(legal)
        state = game.apply_move(state, seat, move)
        moves.append(move)
        assert len(moves) <= 4 * size * size + 1
    return moves, state


@settings(max_examples=60, deadline=None)
@given(size=st.integers(9, 14), seed=st.integers(0, 2**32 - 1), greed=st.floats(0.3, 1.0))
def test_games_full_of_captures_end_within_the_bound_and_replay(size, seed, greed):
    moves, final = aggressive_game(size, seed, greed)
    assert game.outcome(final) is not None
    assert actions_within_bound(moves, size)
    assert all(moves[i : i + 2] != ["pass", "pass"] for i in range(len(moves)))
    assert replayed({"size": size}, 1, moves) == final


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="abcdefghijklmnxz0123456789+- X", max_size=8))
def test_move_parser_only_raises_move_error(text):
    state = setup(white_stacks="e5", white="c4 f2 g6", black="e8 b2")
    try:
        canonical = game.parse_move(state, WHITE, text)
    except MoveError as error:
        assert str(error).startswith('Invalid move "')
        return
    assert canonical in game.legal_moves(state, WHITE)


# -- through the core ---------------------------------------------------------------------

# A random 9x9 game in which Black, blocked everywhere, must pass after move 79; the server
# plays the pass and White, whose chain survived, wins at once.
PASS_GAME = (
    "g7 i1 d9 g4 h4 e3 d8 h1 g2 i5 f5 f3 f7 h8 d6 e6 e5+ c2 e5-f4 c6 d4 c5 g6 e1 i2 b7 c4 "
    "d3 b3 i3 e9 g5 a3 d7 e7 h5 b2 g3 i7 b6 f8 c8 f6 a5+ a8 h3 h7 e8 d5 f2+ e2 f2-f1 a7 "
    "a5xd5 a9 c9 h6 b5 e4 i6 c3 c7 b8 i4 i8 a6 b4 g9 d2 b9 a4 g1 h2 c1 a1 h9 g8+ d1 a2"
).split()


def test_a_forced_pass_is_played_by_the_server_and_reported(harness):
    harness.signup("alice", "bob")
    harness.challenge("knightvision challenge alice bob -size=9")
    for ply, move in enumerate(PASS_GAME, start=1):
        userid = "alice" if ply % 2 else "bob"
        harness.ok(f"knightvision move 101 {userid} secret {move}#{ply}")
    mails = [mail for mail in harness.mails() if "Game won by" in body_of(mail)]
    assert sorted(mail["To"] for mail in mails) == ["alice@example.org", "bob@example.org"]
    body = body_of(mails[0])
    assert "  79 White (alice): a2\n  80 Black (bob): pass (Auto)" in body
    assert "Last move: Black passed (no legal action)" in body
    assert "Game won by alice." in body
    assert "(White's chain joins the top and bottom edges)" in body


def test_the_core_refuses_a_voluntary_pass_and_a_late_swap(harness):
    harness.signup("alice", "bob")
    harness.challenge("knightvision challenge alice bob")
    harness.ok("knightvision move 101 alice secret f6")
    harness.ok("knightvision move 101 bob secret c3")
    assert "You can only swap after move number 1" in harness.refused(
        "knightvision swap 101 alice secret"
    )
    assert "KnightVision has no voluntary pass" in harness.refused(
        "knightvision pass 101 alice secret"
    )
    assert "d4 is not a knight's move from any of your pieces" in harness.refused(
        "knightvision move 101 alice secret D4"
    )


def test_help_ends_with_the_empty_default_board(harness):
    text = harness.ok("knightvision help", sender=None).printed[0].body
    assert "KnightVision (Christian Freeling, 2021)" in text
    assert "The start position:" in text
    assert "            11   . . . . . . . . . . .   11" in text


def test_a_bad_size_is_reported_to_the_challenger(harness):
    harness.signup("alice", "bob")
    message = harness.refused(
        "knightvision challenge alice bob -size=20", sender="alice@example.org"
    )
    assert 'Invalid KnightVision parameter "-size=20": size must be from 9 to 14' in message
