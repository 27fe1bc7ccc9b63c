"""Lox: rules, worked examples, incremental control, display and play through the core."""

import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.hexgrid import DIRECTIONS, RhombusBoard
from games.lox import BLUE, RED, Lox, count_seen, put_stone
from pbm.game import MoveError, OptionError
from pbm.testing import check_game, play, random_game
from tests.conftest import body_of
from tests.spec_pictures import LX1, LX2, LX3

game = Lox()

# A random 9x9 game: Blue's b6 completes a left-right chain and leaves Red without a legal
# move, so Red must pass, and Blue, on move with the chain, wins.
FORCED_PASS_GAME = """
b2 g7 e5 d6 i8 c9 c3 c5 a1 d4 a5 b9 h6 g8 i6 a6 h8 g3 i5 i4 a2 c4 b1 g2 i9 c7 c2 d3 h7
g1 b4 e8 b3 c8 h1 e2 a3 a7 f8 i1 f3 h4 b7 xe5 d2 e1 g9 f4 c1 f5 xg8 e3 b5 g5 f9 e6 xg7
h3 b8 h2 e9 i2 d1 a8 i7 f1 a4 i3 h9 b6 pass
""".split()

LX1_STONES = {"f2": RED, "f9": RED, "b6": RED, "j6": RED}

# The pictures of docs/spec/games/lox.md §10, verbatim.


def options(**raw):
    return game.parse_options({name: value for name, value in raw.items()}, 2)


def position(stones, to_move, **raw):
    return game.state_with_stones(options(**raw), stones, to_move)


def cell(state, name):
    return game.board(state).parse(name)


def picture_of(state, **keywords):
    """The board drawing without the legend lines under it."""
    size = state["options"]["size"]
    return "\n".join(game.render_board(state, None, **keywords).split("\n")[: size + 2])


def move(state, text):
    seat = game.to_move(state)
    return game.apply_move(state, seat, game.parse_move(state, seat, text))


def brute_force_seen(rows):
    """Walk every ray of every cell, independently of the geometry module and the game."""
    n = len(rows)
    counts = [[[0] * n for _ in range(n)] for _ in (RED, BLUE)]
    for r in range(n):
        for q in range(n):
            for dq, dr in DIRECTIONS:
                x, y = q + dq, r + dr
                while 0 <= x < n and 0 <= y < n and rows[y][x] == ".":
                    x, y = x + dq, y + dr
                if 0 <= x < n and 0 <= y < n:
                    counts["RB".index(rows[y][x])][r][q] += 1
    return [["".join(map(str, row)) for row in per_seat] for per_seat in counts]


def brute_force_controller(rows, q, r):
    n = len(rows)
    neighbours = sum(0 <= q + dq < n and 0 <= r + dr < n for dq, dr in DIRECTIONS)
    seen = brute_force_seen(rows)
    holders = [seat for seat in (RED, BLUE) if 2 * int(seen[seat][r][q]) > neighbours]
    assert len(holders) <= 1, "both players can never control one cell"
    return holders[0] if holders else None


# -- options -------------------------------------------------------------------------------


def test_default_options():
    assert game.parse_options({}, 2) == {"size": 11, "control": False}


@pytest.mark.parametrize("size", [9, 11, 14, 19])
def test_every_size_from_9_to_19(size):
    state = game.initial_state(options(size=str(size)), 2, 1)
    assert len(state["board"]) == size and all(len(row) == size for row in state["board"])
    assert len(game.legal_moves(state, RED)) == size * size


def test_control_flag():
    assert options(control=True) == {"size": 11, "control": True}


def test_help_names_the_control_marks_the_board_draws(harness):
    """`help lox` once said r and b while the board draws + and - (docs/spec/games/lox.md)."""
    harness.ok("help lox")
    text = " ".join(body_of(harness.mails()[-1]).split())
    assert "+ for Red and - for Blue" in text and "r for Red" not in text
    harness.signup("alice", "bob")
    harness.ok("lox challenge alice bob -control", sender="alice@example.org")
    harness.ok("lox move 101 alice secret f6", sender="alice@example.org")
    board = body_of(harness.mails("bob@example.org")[-1])
    assert "+ -  empty cell controlled by Red, Blue" in board


@pytest.mark.parametrize(
    "raw,message",
    [
        ({"size": "20"}, 'Invalid Lox parameter "-size=20": size must be from 9 to 19'),
        ({"size": "8"}, 'Invalid Lox parameter "-size=8": size must be from 9 to 19'),
        ({"size": "ten"}, 'Invalid Lox parameter "-size=ten": size must be from 9 to 19'),
        ({"size": True}, 'Invalid Lox parameter "-size": size must be from 9 to 19'),
        ({"control": "yes"}, 'Invalid Lox parameter "-control=yes": -control takes no value'),
        ({"swap": True}, 'Invalid Lox parameter "-swap": unknown option; the options are'),
    ],
)
def test_bad_options_are_refused(raw, message):
    with pytest.raises(OptionError) as error:
        game.parse_options(raw, 2)
    assert str(error.value).startswith(message)


# -- the conformance checks of the core ----------------------------------------------------


def test_conformance():
    samples = [({}, 2, []), ({}, 2, ["F6", " g 7"])]
    for seed, raw in ((3, {"size": "9"}), (4, {"size": "13", "control": True}), (5, {})):
        moves, _ = random_game(game, game.parse_options(raw, 2), 2, seed, max_plies=60)
        samples.append((raw, 2, moves))
    samples.append(({"size": "9"}, 2, FORCED_PASS_GAME))
    whole_game, _ = random_game(game, options(size="19"), 2, 6)
    samples.append(({"size": "19", "control": True}, 2, whole_game))
    check_game(
        game,
        samples,
        bad_options=({"no_such_option": True}, {"size": "21"}, {"control": "1"}),
    )


# -- worked examples (docs/spec/games/lox.md §10) --------------------------------------------


def test_lx1_control_forbids_placement():
    state = position(LX1_STONES, BLUE)
    assert picture_of(state) == LX1.rstrip("\n")
    f6 = cell(state, "f6")
    assert game.sight_text(state, f6) == "f6 sees Red b6, f2, f9, j6"
    assert game.controller(state, f6) == RED
    blue_moves = game.legal_moves(state, BLUE)
    assert len(blue_moves) == 116 and "f6" not in blue_moves
    assert not any(name.startswith("x") for name in blue_moves)
    with pytest.raises(MoveError) as error:
        game.parse_move(state, BLUE, "f6")
    assert str(error.value) == (
        'Invalid move "f6": Red controls f6, so Blue cannot place a stone there: f6 sees Red '
        "b6, f2, f9, j6; f6 has 6 neighbours, so control takes 4 stones seen (more than half)"
    )
    as_red = dict(state, to_move=RED)
    assert "f6" in game.legal_moves(as_red, RED)
    assert len(game.legal_moves(as_red, RED)) == 117


def test_lx2_a_stone_blocks_sight():
    state = position(LX1_STONES, BLUE)
    f7 = cell(state, "f7")
    assert game.sight_text(state, f7) == "f7 sees Red f2, f9"
    assert game.controller(state, f7) is None
    state = move(state, "f7")
    assert picture_of(state).replace("[B]", " B ") == LX2.rstrip("\n")
    assert "[B]" in picture_of(state).split("\n")[7], "the last move is marked"
    f6 = cell(state, "f6")
    assert game.sight_text(state, f6) == "f6 sees Red b6, f2, j6 and Blue f7"
    assert game.controller(state, f6) is None
    assert "f6" in game.legal_moves(state, RED)
    assert "f6" in game.legal_moves(dict(state, to_move=BLUE), BLUE)


def test_lx3_replacement():
    state = position(LX1_STONES | {"f6": BLUE}, RED)
    assert picture_of(state) == LX3.rstrip("\n")
    f6 = cell(state, "f6")
    assert game.sight_text(state, f6) == "f6 sees Red b6, f2, f9, j6"
    assert game.controls(state, RED, f6)
    assert game.parse_move(state, RED, "xf6") == "xf6"
    assert game.parse_move(state, RED, "f6") == "xf6"
    assert "xf6" in game.legal_moves(state, RED)
    after = game.apply_move(state, RED, "xf6")
    assert game.owner(after, f6) == RED
    assert sorted(game.board(after).name(c) for c in game.stones(after, RED)) == sorted(
        ["b6", "f2", "f6", "f9", "j6"]
    )
    assert game.stones(after, BLUE) == []
    assert after["seen"] == brute_force_seen(after["board"])


def test_lx6_swap_through_the_core(harness):
    harness.signup("alice", "bob")
    harness.challenge("lox challenge alice bob")
    assert "You can only swap after move number 1" in harness.refused("lox swap 101 alice secret")
    harness.ok("lox move 101 alice secret f6")
    harness.new_mails()
    harness.ok("lox swap 101 bob secret")
    mails = harness.new_mails()
    body = body_of(mails[0])
    assert "bob has swapped sides." in body
    assert "   1 Red (alice): f6\n   2 Blue (bob): swap" in body
    assert body.rstrip().endswith("Last move: Red f6\nTo move: Blue")
    assert mails[0]["Subject"] == "Lox Board 101: alice vs bob"
    assert "        6   . . . . .[R]. . . . .   6" in body, "the red stone stays red on f6"
    assert "The board has just been swapped" in harness.refused("lox swap 101 alice secret")
    harness.ok("lox move 101 alice secret g7")
    assert "You can only swap after move number 1" in harness.refused("lox swap 101 bob secret")
    text = harness.ok("lox show 101", sender=None).printed[0].body
    assert "Last move: Blue g7\nTo move: Red" in text
    assert "bob (Red):" in text and "alice (Blue):" in text


# -- control thresholds by cell kind (docs/spec/games/lox.md §3) -----------------------------


@pytest.mark.parametrize(
    "target,neighbours,stones_seen",
    [
        ("f6", 6, ["f2", "f9", "b6", "j6"]),  # interior: 4 of 6
        ("f1", 4, ["a1", "k1", "f5"]),  # top edge: 3 of 4
        ("k1", 3, ["a1", "k5"]),  # obtuse corner: 2 of 3
        ("a11", 3, ["a1", "k11"]),  # obtuse corner: 2 of 3
        ("a1", 2, ["k1", "a11"]),  # acute corner: 2 of 2
        ("k11", 2, ["a11", "k1"]),  # acute corner: 2 of 2
    ],
)
def test_control_needs_more_than_half_of_the_neighbours(target, neighbours, stones_seen):
    full = position({name: RED for name in stones_seen}, BLUE)
    short = position({name: RED for name in stones_seen[1:]}, BLUE)
    here = cell(full, target)
    assert game.board(full).neighbour_count[here] == neighbours
    assert game.seen_count(full, RED, here) == len(stones_seen)
    assert game.controls(full, RED, here) and target not in game.legal_moves(full, BLUE)
    assert not game.controls(short, RED, here) and target in game.legal_moves(short, BLUE)
    with pytest.raises(MoveError, match=f"takes {len(stones_seen)} stones seen"):
        game.parse_move(full, BLUE, target)


def test_a_stone_on_the_cell_itself_neither_counts_nor_blocks():
    state = position(LX1_STONES | {"f6": RED}, BLUE)
    f6 = cell(state, "f6")
    assert game.seen_count(state, RED, f6) == 4 and game.seen_count(state, BLUE, f6) == 0


# -- notation and refusals (docs/spec/games/lox.md §7) ---------------------------------------


@pytest.mark.parametrize("text", ["F6", " f 6 ", "f6", "F 6"])
def test_placements_are_case_and_space_insensitive(text):
    assert game.parse_move(game.initial_state(options(), 2, 1), RED, text) == "f6"


@pytest.mark.parametrize("text", ["xf6", "XF6", "x f6", "f6", " X F 6"])
def test_the_x_of_a_replacement_is_optional(text):
    assert game.parse_move(position(LX1_STONES | {"f6": BLUE}, RED), RED, text) == "xf6"


@pytest.mark.parametrize(
    "text,message",
    [
        (
            "z5",
            'Invalid move "z5": "z5" is not a cell of this 11x11 board: the columns are a '
            "to k and the rows 1 to 11",
        ),
        ("a12", 'Invalid move "a12": "a12" is not a cell of this 11x11 board'),
        ("xl1", 'Invalid move "xl1": "l1" is not a cell of this 11x11 board'),
        ("f6-f7", 'Invalid move "f6-f7": write the cell as column letter and row number, e.g. f6'),
        ("6f", 'Invalid move "6f": write the cell as column letter and row number'),
        ("xx f6", 'Invalid move "xx f6": write the cell'),
        (
            "b6",
            'Invalid move "b6": b6 already holds a Red stone of yours; place on an empty cell '
            "or replace a Blue stone on a cell you control",
        ),
        ("xb6", 'Invalid move "xb6": b6 already holds a Red stone of yours'),
        (
            "xf5",
            'Invalid move "xf5": f5 is empty, so there is no stone to replace; write f5 to '
            "place a stone there",
        ),
        # Blue's f6 hides f2 from f7.
        (
            "xf7",
            'Invalid move "xf7": Red does not control f7, so Red cannot replace the Blue '
            "stone there: f7 sees Red f9 and Blue f6; f7 has 6 neighbours, so control "
            "takes 4 stones seen (more than half), and Red has 1",
        ),
    ],
)
def test_refusals_say_what_is_wrong(text, message):
    state = position(LX1_STONES | {"f6": BLUE, "f7": BLUE}, RED)
    with pytest.raises(MoveError) as error:
        game.parse_move(state, RED, text)
    assert str(error.value).startswith(message)


def test_x_on_an_empty_cell_the_opponent_controls_names_the_control():
    state = position(LX1_STONES, BLUE)
    with pytest.raises(MoveError, match="Red controls f6, so Blue cannot place a stone there"):
        game.parse_move(state, BLUE, "xf6")


def test_replacement_refusal_counts_the_stones_needed_and_seen():
    state = position({"f2": RED, "b6": RED, "f6": BLUE, "f7": BLUE}, RED)
    with pytest.raises(MoveError) as error:
        game.parse_move(state, RED, "xf6")
    assert str(error.value) == (
        'Invalid move "xf6": Red does not control f6, so Red cannot replace the Blue stone '
        "there: f6 sees Red b6, f2 and Blue f7; f6 has 6 neighbours, so control takes 4 stones "
        "seen (more than half), and Red has 2"
    )


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=12))
def test_the_parser_accepts_only_legal_moves(text):
    state = position(LX1_STONES | {"f6": BLUE, "g3": BLUE}, RED)
    try:
        canonical = game.parse_move(state, RED, text)
    except MoveError as error:
        assert str(error).startswith("Invalid move")
        return
    assert canonical in game.legal_moves(state, RED)
    assert game.parse_move(state, RED, canonical) == canonical


def test_every_listed_move_parses_to_itself_and_every_other_cell_is_refused():
    state = position(LX1_STONES | {"f6": BLUE, "g3": BLUE, "k1": BLUE, "h9": RED}, RED)
    legal = set(game.legal_moves(state, RED))
    assert "xf6" in legal and "xg3" not in legal and "f7" in legal
    board = game.board(state)
    for here in board.cells:
        name = board.name(here)
        canonical = name if game.owner(state, here) is None else "x" + name
        if canonical in legal:
            assert game.parse_move(state, RED, canonical) == canonical
        else:
            with pytest.raises(MoveError):
                game.parse_move(state, RED, name)


def test_moves_are_listed_only_for_the_seat_on_move():
    state = position(LX1_STONES, BLUE)
    assert game.legal_moves(state, RED) == []


# -- passing (docs/spec/games/lox.md §4.2) ---------------------------------------------------


def row_five_empty_rest_red():
    """9x9, every cell red but row 5; each row-5 cell sees at least 3 of 4 or 4 of 6 red."""
    board = RhombusBoard(9)
    return {board.name(c): RED for c in board.cells if c[1] != 4}


def test_pass_is_forced_only_when_nothing_is_legal():
    state = position(row_five_empty_rest_red(), BLUE, size="9")
    assert game.outcome(state) is None, "row 5 empty: Red has no chain yet"
    assert game.legal_moves(state, BLUE) == []
    assert game.forced_move(state) == "pass"
    assert not game.can_pass(state, BLUE)
    opening = game.initial_state(options(), 2, 1)
    assert game.forced_move(opening) is None and not game.can_pass(opening, RED)


def test_a_forced_pass_in_play_then_the_win_of_the_player_on_move():
    before = play(game, options(size="9"), 2, 1, FORCED_PASS_GAME[:-1])
    assert game.outcome(before) is None, "Blue's new chain does not win on Blue's own move"
    assert game.to_move(before) == RED
    assert game.legal_moves(before, RED) == [] and game.forced_move(before) == "pass"
    after = game.apply_move(before, RED, "pass")
    assert game.outcome(after).winners == (BLUE,)


def test_a_chain_wins_only_once_it_has_survived_the_opponents_turn():
    state = position(row_five_empty_rest_red(), BLUE, size="9")
    state = game.apply_move(state, BLUE, "pass")
    assert game.to_move(state) == RED and game.outcome(state) is None
    state = move(state, "e5")  # Red's chain now joins rows 1 and 9
    assert game.outcome(state) is None, "never a win for the player who just moved"
    assert game.to_move(state) == BLUE and game.forced_move(state) == "pass"
    assert game.render_board(state, None).endswith("Last move: Red e5\nTo move: Blue")
    state = game.apply_move(state, BLUE, "pass")
    outcome = game.outcome(state)
    assert outcome.winners == (RED,)
    assert outcome.reason == "Red's chain joins the top and bottom edges (rows 1 and 9)"
    assert game.to_move(state) is None and game.forced_move(state) is None
    assert game.render_board(state, None).endswith("Last move: Blue passed (no legal move)")


# -- the win (docs/spec/games/lox.md §5) -----------------------------------------------------

# Red holds e1..e8 of a 9x9 board; Blue's a4, a8, h1 and i4 are seen from e4.
CHAIN_MINUS_ONE = {f"e{row}": RED for row in range(1, 9)} | {
    "a4": BLUE,
    "a8": BLUE,
    "h1": BLUE,
    "i4": BLUE,
}


def test_a_replacement_breaks_a_new_chain():
    state = move(position(CHAIN_MINUS_ONE, RED, size="9"), "e9")
    assert game.outcome(state) is None and game.to_move(state) == BLUE
    assert "xe4" in game.legal_moves(state, BLUE)
    state = move(state, "xe4")
    assert game.outcome(state) is None and game.to_move(state) == RED
    with pytest.raises(MoveError) as error:
        game.parse_move(state, RED, "xe4")
    assert "e4 sees Red e3, e5 and Blue a4, a8, h1, i4" in str(error.value)
    assert str(error.value).endswith("and Red has 2")


def test_an_unbroken_chain_wins_at_the_start_of_its_owners_turn():
    state = move(position(CHAIN_MINUS_ONE, RED, size="9"), "e9")
    state = move(state, "b2")
    assert game.outcome(state).winners == (RED,)
    assert game.to_move(state) is None
    assert game.legal_moves(state, RED) == [] and game.legal_moves(state, BLUE) == []


def test_blue_wins_with_a_left_right_chain():
    row = {f"{letter}5": BLUE for letter in "abcdefghi"}
    state = position(row, BLUE, size="9")
    assert game.outcome(state).winners == (BLUE,)
    assert game.outcome(state).reason == (
        "Blue's chain joins the left and right edges (columns a and i)"
    )


def test_corner_cells_count_for_both_edges():
    # The diagonal a9..i1 (q + r = 8) runs from corner a9 to corner i1, which lie on the
    # left and right edges and also on the bottom and top edges.
    board = RhombusBoard(9)
    diagonal = {board.name(c): RED for c in board.cells if sum(c) == 8}
    assert game.outcome(position(diagonal, RED, size="9")).winners == (RED,)
    blue = {name: BLUE for name in diagonal}
    assert game.outcome(position(blue, BLUE, size="9")).winners == (BLUE,)


# -- incremental control against a brute-force recount ---------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    size=st.sampled_from([9, 10, 13, 19]),
    placements=st.lists(st.tuples(st.integers(0, 360), st.sampled_from([RED, BLUE])), max_size=150),
)
def test_incremental_counts_match_a_recount_on_random_positions(size, placements):
    board = RhombusBoard(size)
    rows = ["." * size] * size
    seen = count_seen(board, rows)
    for index, seat in placements:
        here = board.cells[index % len(board.cells)]
        if rows[here[1]][here[0]] == "RB"[seat]:
            continue
        rows, seen = put_stone(board, rows, seen, here, seat)
    assert seen == brute_force_seen(rows)
    assert seen == count_seen(board, rows)


@settings(max_examples=25, deadline=None)
@given(size=st.sampled_from([9, 11, 12]), seed=st.integers(0, 2**32))
def test_incremental_counts_match_a_recount_through_random_legal_games(size, seed):
    rng = random.Random(seed)
    state = game.initial_state(options(size=str(size)), 2, seed)
    for _ply in range(400):
        seat = game.to_move(state)
        if seat is None:
            break
        legal = game.legal_moves(state, seat) or [game.forced_move(state)]
        state = game.apply_move(state, seat, rng.choice(legal))
        assert state["seen"] == brute_force_seen(state["board"])
    q, r = rng.randrange(size), rng.randrange(size)
    assert game.controller(state, (q, r)) == brute_force_controller(state["board"], q, r)


@settings(max_examples=25, deadline=None)
@given(size=st.sampled_from([9, 11, 13]), seed=st.integers(0, 2**32), plies=st.integers(0, 80))
def test_the_text_board_draws_each_cell_as_a_recount_says(size, seed, plies):
    """docs/spec/games/lox.md: a stone's letter, else with -control the mark of the seat
    controlling the cell, else "."; the last move bracketed. Drawn from the state's rows
    (issue 31), checked here cell by cell against a recount."""
    rng = random.Random(seed)
    state = game.initial_state(options(size=str(size), control=True), 2, seed)
    for _ply in range(plies):
        seat = game.to_move(state)
        if seat is None:
            break
        legal = game.legal_moves(state, seat) or [game.forced_move(state)]
        state = game.apply_move(state, seat, rng.choice(legal))
    rows = state["board"]

    def recounted(cell):
        q, r = cell
        if rows[r][q] != ".":
            return rows[r][q]
        holder = brute_force_controller(rows, q, r)
        return "." if holder is None else "+-"[holder]

    board = game.board(state)
    expected = board.draw(recounted, marks=game.last_cell(state))
    assert game.picture(state, show_control=True) == expected
    plain = board.draw(lambda cell: rows[cell[1]][cell[0]], marks=game.last_cell(state))
    assert game.picture(state, show_control=False) == plain


@settings(max_examples=30, deadline=None)
@given(size=st.sampled_from([9, 11, 15]), seed=st.integers(0, 2**32))
def test_legal_moves_follow_the_rules_from_a_recount(size, seed):
    rng = random.Random(seed)
    names = RhombusBoard(size)
    stones = {}
    for q in range(size):
        for r in range(size):
            if rng.random() < 0.6:
                stones[names.name((q, r))] = rng.choice([RED, BLUE])
    seat = rng.choice([RED, BLUE])
    state = position(stones, seat, size=str(size))
    if game.outcome(state) is not None:
        return
    rows = state["board"]
    expected = []
    for q, r in names.cells:
        holder = brute_force_controller(rows, q, r)
        if rows[r][q] == "." and holder != 1 - seat:
            expected.append(names.name((q, r)))
        elif rows[r][q] == "RB"[1 - seat] and holder == seat:
            expected.append("x" + names.name((q, r)))
    assert sorted(game.legal_moves(state, seat)) == sorted(expected)


# -- replay ----------------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(size=st.integers(9, 19), seed=st.integers(0, 2**32))
def test_random_legal_games_replay_identically_from_their_log(size, seed):
    chosen = options(size=str(size))
    moves, final = random_game(game, chosen, 2, seed, max_plies=500)
    assert play(game, chosen, 2, seed, moves) == final
    if game.outcome(final) is None:
        assert game.legal_moves(final, game.to_move(final)) or game.forced_move(final) == "pass"
    else:
        assert final["winner"] != final["last"][0], "never a win for the player who just moved"


# -- display ---------------------------------------------------------------------------------


def test_the_control_option_marks_controlled_empty_cells_on_every_board():
    state = game.state_with_stones(options(control=True), LX1_STONES, BLUE)
    legend = "+ -  empty cell controlled by Red, Blue (the other may not place there)"
    for perspective in (None, RED, BLUE):
        lines = game.render_board(state, perspective).split("\n")
        assert lines[6] == "        6   . R . . . + . . . R .   6"
        assert legend in lines
    unmarked = game.render_board(state, None, control=False).split("\n")
    assert unmarked[6] == "        6   . R . . . . . . . R .   6"
    assert legend not in unmarked


def test_show_control_marks_a_board_without_the_option():
    state = position(LX1_STONES, BLUE)
    plain = game.render_board(state, None)
    marked = game.render_board(state, None, control=True)
    assert "+" not in plain.split("\n")[6] and " + " in marked.split("\n")[6]
    assert game.render_board(state, None, control=None) == plain


def test_blue_control_is_marked_with_a_dash_not_like_a_stone():
    state = position({"f2": BLUE, "f9": BLUE, "b6": BLUE, "j6": BLUE}, RED)
    assert picture_of(state, control=True).split("\n")[6] == (
        "        6   . B . . . - . . . B .   6"
    )


def test_legend_names_symbols_edges_and_the_last_move():
    state = move(game.initial_state(options(size="19"), 2, 1), "S 19")
    text = game.render_board(state, 1)
    assert text.split("\n")[-6:] == [
        "R B  Red, Blue stone",
        ".    empty cell",
        "[ ]  the last move",
        "Red: top-bottom (rows 1 and 19), Blue: left-right (columns a and s)",
        "Last move: Red s19",
        "To move: Blue",
    ]
    assert "  19   . . . . . . . . . . . . . . . . . .[R]  19" in text
    assert max(len(line) for line in text.split("\n")) <= 76


def test_help_gives_rules_options_notation_and_samples():
    text = game.help_text()
    for fragment in (
        "-size=N    board N x N, 9 to 19 (default 11)",
        "-control",
        "xf6        replace the opponent stone on f6",
        "Swap: Blue may answer Red's first stone with swap, at move 2 only",
        "Pass: only when you have no legal move",
        "Draws and undo: by agreement",
        "lox challenge alice bob",
        "lox move 101 alice secret f6",
    ):
        assert fragment in text
    assert max(len(line) for line in text.split("\n")) <= 76


# -- speed -----------------------------------------------------------------------------------


def test_listing_the_legal_moves_of_19x19_playout_positions_is_fast():
    rng = random.Random(19)
    state = game.initial_state(options(size="19"), 2, 19)
    slowest = 0.0
    while game.to_move(state) is not None:
        seat = game.to_move(state)
        runs = []
        for _ in range(3):
            started = time.perf_counter()
            legal = game.legal_moves(state, seat)
            runs.append(time.perf_counter() - started)
        slowest = max(slowest, min(runs))
        state = game.apply_move(state, seat, rng.choice(legal) if legal else "pass")
    assert slowest < 0.005


# -- through the core ------------------------------------------------------------------------


def test_the_core_plays_a_forced_pass_and_then_declares_the_win(harness):
    moves = FORCED_PASS_GAME
    harness.signup("alice", "bob")
    harness.challenge("lox challenge alice bob -size=9")
    for ply, text in enumerate(moves[:-1], start=1):
        userid = "alice" if ply % 2 else "bob"
        harness.ok(f"lox move 101 {userid} secret {text}#{ply}")
    body = body_of(harness.mails("alice@example.org")[-1])
    assert "Game won by bob." in body
    assert "(Blue's chain joins the left and right edges (columns a and i))" in body
    assert "  70 Blue (bob): b6\n  71 Red (alice): pass (Auto)" in body
    assert "Last move: Red passed (no legal move)" in body


def test_a_show_can_ask_for_the_control_marks(harness):
    harness.signup("alice", "bob")
    harness.challenge("lox challenge alice bob -size=9")
    harness.ok("lox move 101 alice secret e5")
    plain = harness.ok("lox show 101", sender=None).printed[0].body
    marked = harness.ok("lox show 101 -control", sender=None).printed[0].body
    assert "+ -  empty cell controlled by Red, Blue" not in plain
    assert "+ -  empty cell controlled by Red, Blue" in marked
    assert 'Unknown view option "-colour" for show; Lox offers -control' in harness.refused(
        "lox show 101 -colour"
    )
    assert "KnightPanic boards have no view options" in harness.refused(
        "knightpanic show 101 -control"
    )


def test_a_voluntary_pass_is_refused_with_the_reason(harness):
    harness.signup("alice", "bob")
    harness.challenge("lox challenge alice bob -size=9")
    assert "Lox has no voluntary pass" in harness.refused("lox pass 101 alice secret")
