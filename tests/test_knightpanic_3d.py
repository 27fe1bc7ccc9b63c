"""Knight Panic 3D (-3d): points and levels, the knight's move in space, pins and the end.

Every rule is checked against docs/spec/games/knightpanic.md §5: its examples, positions built for
one rule, and random games compared move by move with a direct reading of the spec.
"""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.knightpanic import LEVEL_CHANGES, KnightPanic, Pieces, highest_fillable_level
from pbm.game import MoveError, OptionError
from pbm.testing import check_game, random_game
from pbm.testing import play as checked_replay
from tests.conftest import body_of

game = KnightPanic()
WHITE, BLACK = 0, 1
DIAGONALS = ((1, 1), (1, -1), (-1, 1), (-1, -1))

# docs/spec/games/knightpanic.md §7's example: White climbs with e1-b4 onto a3 c3 (Black) and a5 c5
# (White) ...
CLIMB = ["a1-c5", "a7-c3", "c1-a5", "c7-a3", "e1-b4"]
# ... and after Black's e7-g3 comes back down with b4-e1.
CLIMB_AND_BACK = [*CLIMB, "e7-g3", "b4-e1"]
# Black's d2 lands on White's four knights c1 e1 c3 e3.
PIN_ALL_WHITE = ["a1-e3", "c7-g5", "g1-c3", "g5-d2"]
# The same with Black's g5 left without a move: both players are stuck.
PIN_ALL_WHITE_AND_TRAP_BLACK = [
    "a1-c5",
    "a7-c3",
    "c5-a1",
    "c3-g5",
    "a1-e3",
    "e7-a5",
    "g1-c3",
    "a5-d2",
]


def raw_options(size=4, **flags):
    raw = {"3d": True, **flags}
    if size != 4:
        raw["size"] = str(size)
    return raw


def start(size=4, **flags):
    return game.initial_state(game.parse_options(raw_options(size, **flags), 2), 2, seed=1)


def play(state, *moves):
    for move in moves:
        seat = game.to_move(state)
        state = game.apply_move(state, seat, game.parse_move(state, seat, move))
    return state


def point(name):
    """(X, Y, level) of "c3" (lowest level with that name) or "c3:3" (level given)."""
    text, _, level = name.partition(":")
    x, y = ord(text[0]) - ord("a"), int(text[1:]) - 1
    return x, y, int(level) if level else 1 + x % 2


def position(white, black, size=4, to_move=WHITE, **flags):
    pieces = [[*point(name), WHITE] for name in white.split()]
    pieces += [[*point(name), BLACK] for name in black.split()]
    return dict(start(size, **flags), pieces=sorted(pieces), to_move=to_move)


def refusal(state, move):
    with pytest.raises(MoveError) as error:
        game.parse_move(state, game.to_move(state), move)
    return str(error.value)


def name(x, y):
    return f"{chr(ord('a') + x)}{y + 1}"


# -- the spec read directly, independent of the game's own helpers ----------------------


def spec_points(size, level):
    low, high = level - 1, 2 * size - 1 - level
    return [(x, y, level) for x in range(low, high + 1, 2) for y in range(low, high + 1, 2)]


def occupied_points(state):
    return {(x, y, level): seat for x, y, level, seat in state["pieces"]}


def spec_pinned(occupied, x, y, level):
    return any((x + dx, y + dy, level + 1) in occupied for dx, dy in DIAGONALS)


def spec_supported(occupied, x, y, level):
    return level == 1 or all((x + dx, y + dy, level - 1) in occupied for dx, dy in DIAGONALS)


def spec_targets(size, occupied, piece):
    """The empty points at distance sqrt(5) from piece that stand once it has left."""
    left = {p: s for p, s in occupied.items() if p != piece}
    targets = []
    for level in range(1, size + 1):
        for target in spec_points(size, level):
            dx, dy, dk = (target[i] - piece[i] for i in range(3))
            # cells 1 apart are 2 doubled units apart, levels sqrt(2)/2 apart: 4 * distance^2
            if dx * dx + dy * dy + 2 * dk * dk == 20 and target not in occupied:
                if spec_supported(left, *target):
                    targets.append(target)
    return targets


def spec_moves(state, seat):
    """docs/spec/games/knightpanic.md §5.3 as written: every (unpinned piece, target) pair of the
    seat."""
    size, occupied = state["options"]["size"], occupied_points(state)
    return [
        (piece, target)
        for piece, owner in occupied.items()
        if owner == seat and not spec_pinned(occupied, *piece)
        for target in spec_targets(size, occupied, piece)
    ]


def long_random_game(options, seed, plies):
    """Random legal moves that avoid ending the game while they can, so knights get to stack.

    Yields (state before, move, state after) for every ply.
    """
    rng = random.Random(seed)
    state = game.initial_state(options, 2, seed)
    for _ply in range(plies):
        seat = game.to_move(state)
        if seat is None:
            return
        candidates = list(game.legal_moves(state, seat))
        rng.shuffle(candidates)
        chosen = None
        for move in candidates:
            after = game.apply_move(state, seat, move)
            if chosen is None or game.outcome(after) is None:
                chosen = move, after
            if game.outcome(after) is None:
                break
        yield state, *chosen
        state = chosen[1]


# -- options ----------------------------------------------------------------------------


def test_3d_is_accepted_and_keeps_the_option_keys():
    assert game.parse_options({"3d": True}, 2) == {
        "size": 4,
        "3d": True,
        "mover_loses": False,
        "win_no_move": False,
    }
    raw = {"3d": True, "size": "6", "mover_loses": True, "win_no_move": True}
    assert game.parse_options(raw, 2) == {
        "size": 6,
        "3d": True,
        "mover_loses": True,
        "win_no_move": True,
    }
    assert game.parse_options({"3d": True, "lose_no_move": True}, 2)["win_no_move"] is False


@pytest.mark.parametrize(
    "raw,message",
    [
        (
            {"3d": True, "win_no_move": True, "lose_no_move": True},
            "give only one of -lose_no_move and -win_no_move",
        ),
        ({"3d": True, "2d": True}, "give only one of -2d and -3d"),
        ({"3d": True, "size": "8"}, "size must be from 4 to 7"),
    ],
)
def test_3d_option_errors(raw, message):
    with pytest.raises(OptionError) as error:
        game.parse_options(raw, 2)
    assert message in str(error.value)


# -- points and levels (docs/spec/games/knightpanic.md §5.1, §5.2) --------------------


def test_level_points_on_4x4():
    board = Pieces(start())
    names = {
        level: sorted(
            name(x, y) for x in range(-1, 9) for y in range(-1, 9) if board.exists(x, y, level)
        )
        for level in range(1, 6)
    }
    assert [len(names[level]) for level in range(1, 6)] == [16, 9, 4, 1, 0]
    assert names[2] == "b2 b4 b6 d2 d4 d6 f2 f4 f6".split()
    assert names[3] == "c3 c5 e3 e5".split()
    assert names[4] == ["d4"]


@pytest.mark.parametrize("size", [4, 5, 6, 7])
def test_level_k_has_n_minus_k_plus_1_squared_points(size):
    board = Pieces(start(size))
    for level in range(1, size + 1):
        found = [
            (x, y)
            for x in range(-2, 2 * size + 2)
            for y in range(-2, 2 * size + 2)
            if board.exists(x, y, level)
        ]
        assert len(found) == (size - level + 1) ** 2
        assert sorted(found) == sorted((x, y) for x, y, _k in spec_points(size, level))


def test_a_raised_point_sits_on_the_2x2_block_below():
    assert Pieces.supports(*point("b4")) == [point(p) for p in ("a3", "a5", "c3", "c5")]
    assert sorted(Pieces.supports(*point("c3:3"))) == sorted(map(point, "b2 b4 d2 d4".split()))


def test_the_2d_game_has_no_raised_points():
    flat = game.initial_state(game.parse_options({}, 2), 2, 1)
    assert not Pieces(flat).exists(1, 1, 2)
    assert '"b2" is not a cell of this board' in refusal(flat, "b2-c5")


# -- the knight's move in 3D (docs/spec/games/knightpanic.md §5.3) ----------------------


def test_knight_offsets_per_level_change_are_the_spec_table():
    flat = {(sx * a, sy * b) for a, b in ((2, 4), (4, 2)) for sx in (1, -1) for sy in (1, -1)}
    by_three = {(3 * sx, 3 * sy) for sx, sy in DIAGONALS}
    expected = {
        0: flat,
        1: by_three,
        -1: by_three,
        3: set(DIAGONALS),
        -3: set(DIAGONALS),
        2: set(),
        -2: set(),
    }
    for change, offsets in expected.items():
        found = {offset for offset, changes in LEVEL_CHANGES.items() if change in changes}
        assert found == offsets, change


def test_the_table_is_exactly_the_distance_sqrt5_rule():
    for dk in range(-5, 6):
        for dx in range(-9, 10):
            for dy in range(-9, 10):
                if (dx - dk) % 2 or (dy - dk) % 2:
                    continue  # no two points are this far apart
                at_sqrt5 = dx * dx + dy * dy + 2 * dk * dk == 20
                assert (dk in LEVEL_CHANGES.get((dx, dy), ())) == at_sqrt5, (dx, dy, dk)


def test_on_4x4_only_levels_1_and_2_can_be_used():
    def pyramid(top):
        points, layer = {top}, {top}
        while next(iter(layer))[2] > 1:
            layer = {s for p in layer for s in Pieces.supports(*p)}
            points |= layer
        return points

    assert len(pyramid(point("b2"))) == 5
    assert len(pyramid(point("c3:3"))) == 14  # more than the 8 knights of a 4x4 game
    assert [highest_fillable_level(len(start(size)["pieces"])) for size in (4, 5, 6, 7)] == [
        2,
        3,
        3,
        3,
    ]


def test_a_knight_climbs_onto_a_supported_point():
    before = play(start(), *CLIMB[:-1])
    assert "e1-b4" in game.legal_moves(before, WHITE)
    after = play(before, "e1-b4")
    assert [1, 3, 2, WHITE] in after["pieces"] and [4, 0, 1, WHITE] not in after["pieces"]
    assert game.outcome(after) is None
    assert sorted(game.legal_moves(after, BLACK)) == ["e7-g3", "g7-e3"]  # a3 and c3 are pinned


def test_a_knight_comes_back_down():
    state = play(start(), *CLIMB_AND_BACK[:-1])
    assert sorted(game.legal_moves(state, WHITE)) == ["b4-e1", "b4-e7", "g1-e5"]
    state = play(state, "b4-e1")
    assert [4, 0, 1, WHITE] in state["pieces"]
    assert all(level == 1 for _x, _y, level, _seat in state["pieces"])


# 6x6: c3 holds Black on level 1 and White on level 3, which rests on b2 d2 b4 d4.
STACKED = position(
    "c3:3 b2 d4 a1 e1 a3 c5 e5 g5 g7 k11 i11",
    "c3 c1 e3 a5 d2 b4 c9 g1 k1 i9 k9 a11",
    size=6,
)


def test_the_start_names_the_highest_knight_and_the_end_the_lowest_empty_point():
    # STACKED with Black's c9 on e7, so that f6 has its four supports e5 g5 e7 g7.
    stacked = position(
        "c3:3 b2 d4 a1 e1 a3 c5 e5 g5 g7 k11 i11",
        "c3 c1 e3 a5 d2 b4 e7 g1 k1 i9 k9 a11",
        size=6,
    )
    down = play(stacked, "c3-f6")
    assert [5, 5, 2, WHITE] in down["pieces"]
    assert [2, 2, 1, BLACK] in down["pieces"] and [2, 2, 3, WHITE] not in down["pieces"]
    climbed_down = position(
        "f6 b2 d4 a1 e1 a3 c5 e5 g5 g7 k11 i11",
        "c3 c1 e3 a5 d2 b4 e7 g1 k1 i9 k9 a11",
        size=6,
    )
    back_up = play(climbed_down, "f6-c3")
    assert [2, 2, 3, WHITE] in back_up["pieces"] and [5, 5, 2, WHITE] not in back_up["pieces"]
    assert refusal(dict(stacked, to_move=BLACK), "c3-e7") == (
        'Invalid move "c3-e7": the highest knight on c3 (level 3) is White\'s; '
        "the Black knight under it is pinned"
    )


# -- refusals (docs/spec/games/knightpanic.md §7) ---------------------------------------


@pytest.mark.parametrize(
    "state,move,expected",
    [
        (
            start(),
            "b1-c5",
            '"b1" is not a point of this board; the cells are files a c e g '
            "with ranks 1 3 5 7, and the raised points letters b d f with "
            "numbers 2 4 6",
        ),
        (start(), "a1-h8", '"h8" is not a point'),
        (start(), "a0-c5", '"a0" is not a point'),
        (
            start(),
            "a1c5",
            "write the knight's start and end points as from-to, e.g. a1-c5, "
            "or e1-b4 to jump onto level 2",
        ),
        (start(), "c3-e7", 'Invalid move "c3-e7": there is no White knight on c3'),
        (start(), "a7-c3", "there is no White knight on a7"),
        (start(), "b4-e1", "there is no White knight on b4"),
        (
            start(),
            "e1-e5",
            "a knight jumps 2 letters and 4 numbers (or 4 and 2) on its own "
            "level, e.g. a1-c5, or 3 letters and 3 numbers one level up or "
            "down, e.g. e1-b4 onto level 2",
        ),
        (start(), "a1-e5", "a knight jumps 2 letters and 4 numbers"),
        (
            start(),
            "e1-b4",
            'Invalid move "e1-b4": b4 (level 2) is not supported: a3, a5, c3 '
            "and c5 on level 1 are empty, and a knight can only stand there "
            "when all four points under it (a3, a5, c3 and c5) are occupied",
        ),
        (
            play(start(), "a1-c5", "a7-c3"),
            "e1-b4",
            "b4 (level 2) is not supported: a3 and a5 on level 1 are empty",
        ),
        (play(start(), "c1-e5", "g7-e3"), "a1-e3", 'Invalid move "a1-e3": e3 is occupied'),
        (
            STACKED,
            "a3-c7",
            "White's knight on a3 is pinned: White's knight on b2 (level 2) "
            "and Black's knight on b4 (level 2) rest on it, and a pinned "
            "knight cannot move",
        ),
        (
            STACKED,
            "c5-e1",
            "White's knight on c5 is pinned: Black's knight on b4 (level 2) "
            "and White's knight on d4 (level 2) rest on it",
        ),
        (STACKED, "c3-g5", "g5 (level 3) is not supported: f4, f6, h4 and h6 on level 2 are empty"),
        (
            STACKED,
            "c3-e7",
            "from level 3 this jump must land on level 3, but the lowest free "
            "point e7 is on level 1; a knight jumps",
        ),
        (
            STACKED,
            "g5-f4",
            "from level 1 this jump must land on level 4, but the lowest free "
            "point f4 is on level 2",
        ),
        (STACKED, "c3-d4", "from level 3 this jump cannot land on any level of d4"),
        (
            dict(STACKED, to_move=BLACK),
            "g1-c3",
            'Invalid move "g1-c3": c3 is occupied up to level 3',
        ),
    ],
)
def test_refusals_say_what_is_wrong(state, move, expected):
    assert expected in refusal(state, move)


def test_an_occupied_raised_target_is_refused():
    occupied = position("a3 c3 a5 c5 b4", "e1 g7 g5", to_move=BLACK)
    assert refusal(occupied, "e1-b4") == 'Invalid move "e1-b4": b4 is occupied'


def test_moves_are_case_insensitive_and_canonical_lower_case():
    assert game.parse_move(play(start(), *CLIMB[:-1]), WHITE, " E1-B4 ") == "e1-b4"


# -- end of the game (docs/spec/games/knightpanic.md §5.4) ----------------------------


def test_a_pinned_knight_without_a_move_does_not_end_the_game():
    state = play(start(6), "i1-e3", "k7-g5", "a1-c5", "a7-e9", "a5-d2")
    occupied = occupied_points(state)
    # White's e1 lies under d2; a3 c5 g5 i3 are taken and b4 h4 lack support.
    assert occupied[(4, 0, 1)] == WHITE and spec_pinned(occupied, 4, 0, 1)
    assert spec_targets(6, occupied, (4, 0, 1)) == []
    assert game.outcome(state) is None and game.to_move(state) == BLACK


def test_a_raised_knight_without_a_move_loses():
    state = play(start(6), "k5-g7", "e11-c7", "g7-j10", "c9-g7")
    outcome = game.outcome(state)
    assert outcome.winners == (BLACK,)
    assert outcome.reason == "White's knight on j10 (level 2) cannot move"


@pytest.mark.parametrize("tiebreak", [{}, {"mover_loses": True}])
def test_all_pinned_loses_by_default(tiebreak):
    state = play(start(**tiebreak), *PIN_ALL_WHITE)
    assert game.outcome(state).winners == (BLACK,)
    assert game.outcome(state).reason == "all of White's knights are pinned"
    assert game.to_move(state) is None
    explicit = play(start(lose_no_move=True, **tiebreak), *PIN_ALL_WHITE)
    assert game.outcome(explicit) == game.outcome(state)


@pytest.mark.parametrize("tiebreak", [{}, {"mover_loses": True}])
def test_all_pinned_wins_with_win_no_move(tiebreak):
    state = play(start(win_no_move=True, **tiebreak), *PIN_ALL_WHITE)
    outcome = game.outcome(state)
    assert outcome.winners == (WHITE,)
    assert outcome.reason == "all of White's knights are pinned, which wins with -win_no_move"


def test_all_pinned_counts_as_stuck_in_the_tiebreak():
    state = play(start(), *PIN_ALL_WHITE_AND_TRAP_BLACK)
    assert game.outcome(state).winners == (BLACK,)
    assert game.outcome(state).reason == "all of White's knights are pinned"
    state = play(start(mover_loses=True), *PIN_ALL_WHITE_AND_TRAP_BLACK)
    assert game.outcome(state).winners == (WHITE,)
    assert game.outcome(state).reason == "Black's knight on g5 cannot move"
    state = play(start(win_no_move=True, mover_loses=True), *PIN_ALL_WHITE_AND_TRAP_BLACK)
    assert game.outcome(state).winners == (WHITE,)
    assert "pinned" in game.outcome(state).reason


@pytest.mark.parametrize(
    "moves,default,mover_loses",
    [
        # docs/spec/games/knightpanic.md §KP-2 holds in 3D: g1 is trapped
        (["c1-e5", "a7-c3"], BLACK, BLACK),
        (["c1-e5", "e7-c3"], BLACK, WHITE),  # and so does its double trap
    ],
)
def test_the_2d_trap_rules_hold_in_3d(moves, default, mover_loses):
    assert game.outcome(play(start(), *moves)).winners == (default,)
    assert game.outcome(play(start(mover_loses=True), *moves)).winners == (mover_loses,)


def test_at_most_one_player_is_all_pinned():
    """The highest knight is never pinned; check_move asserts this after every random move."""
    state = play(start(), *PIN_ALL_WHITE)
    board = Pieces(state)
    assert board.all_pinned(WHITE) and not board.all_pinned(BLACK)
    highest = max(board.owner, key=lambda p: p[2])
    assert highest == point("d2") and not board.pinned(highest)


# -- display --------------------------------------------------------------------------


def test_start_board_renders_as_in_the_spec():
    assert game.render_board(start(), None) == "\n".join(
        [
            "levels 1 and 2:",
            "      a b c d e f g",
            "  7   x   x   x   x   7",
            "  6                   6",
            "  5   .   .   .   .   5",
            "  4                   4",
            "  3   .   .   .   .   3",
            "  2                   2",
            "  1   o   o   o   o   1",
            "      a b c d e f g",
            "o x  White, Black knight",
            "O X  White, Black knight pinned: another knight rests on it",
            "     A raised knight stands between the four points under it.",
            "[ ]  the last move (from and to)",
        ]
    )


def test_a_level_2_knight_is_drawn_between_the_cells_it_stands_on():
    # Level 3 is left out: 8 knights can never fill it.
    assert game.render_board(play(start(), *CLIMB), WHITE) == "\n".join(
        [
            "levels 1 and 2:",
            "      a b c d e f g",
            "  7   .   .   x   x   7",
            "  6                   6",
            "  5   O   O   .   .   5",
            "  4    [o]            4",
            "  3   X   X   .   .   3",
            "  2                   2",
            "  1   .   .  [.]  o   1",
            "      a b c d e f g",
            "o x  White, Black knight",
            "O X  White, Black knight pinned: another knight rests on it",
            "     A raised knight stands between the four points under it.",
            "[ ]  the last move (from and to)",
            "Last move: White e1-b4",
        ]
    )


def test_a_level_3_knight_on_a_large_board():
    assert game.render_board(STACKED, None) == "\n".join(
        [
            "levels 1 and 2:",
            "      a b c d e f g h i j k",
            " 11   x   .   .   .   o   o   11",
            " 10                           10",
            "  9   .   x   .   .   x   x   9",
            "  8                           8",
            "  7   .   .   .   o   .   .   7",
            "  6                           6",
            "  5   X   O   O   o   .   .   5",
            "  4     X   O                 4",
            "  3   O   X   X   .   .   .   3",
            "  2     O   X                 2",
            "  1   O   X   O   x   .   x   1",
            "      a b c d e f g h i j k",
            "level 3:",
            "      c d e f g h i",
            "  9   .   .   .   .   9",
            "  8                   8",
            "  7   .   .   .   .   7",
            "  6                   6",
            "  5   .   .   .   .   5",
            "  4                   4",
            "  3   o   .   .   .   3",
            "      c d e f g h i",
            "o x  White, Black knight",
            "O X  White, Black knight pinned: another knight rests on it",
            "     A raised knight stands between the four points under it.",
            "[ ]  the last move (from and to)",
        ]
    )  # no level 4: 24 knights can never fill it


def test_the_help_describes_the_3d_variant():
    text = game.help_text()
    for fragment in (
        "-3d",
        "e1-b4",
        "pinned",
        "-win_no_move",
        "-lose_no_move",
        "knightpanic challenge alice bob -3d",
    ):
        assert fragment in text
    assert all(len(line) <= 76 for line in text.split("\n"))


# -- contract and random play -----------------------------------------------------------


def test_contract_conformance_in_3d():
    long_game = [
        move
        for _before, move, _after in long_random_game(
            game.parse_options(raw_options(7), 2), seed=3, plies=80
        )
    ]
    check_game(
        game,
        [
            (raw_options(), 2, CLIMB_AND_BACK),
            (raw_options(), 2, PIN_ALL_WHITE),
            (raw_options(win_no_move=True), 2, PIN_ALL_WHITE_AND_TRAP_BLACK),
            (raw_options(6, mover_loses=True), 2, ["k5-g7", "e11-c7", "g7-j10", "c9-g7"]),
            (raw_options(7), 2, long_game),
            (raw_options(5), 2, []),
        ],
    )


def spec_winner(state, mover):
    """docs/spec/games/knightpanic.md §5.4 as written: the winner after mover's move, or None while
    play goes on."""
    size, occupied, options = state["options"]["size"], occupied_points(state), state["options"]

    def all_pinned(player):
        return all(spec_pinned(occupied, *p) for p, s in occupied.items() if s == player)

    def stuck(player):
        return all_pinned(player) or any(
            not spec_pinned(occupied, *p) and not spec_targets(size, occupied, p)
            for p, s in occupied.items()
            if s == player
        )

    if options["win_no_move"]:
        for player in (mover, 1 - mover):
            if all_pinned(player):
                return player
    theirs, mine = stuck(1 - mover), stuck(mover)
    if theirs and mine:
        return 1 - mover if options["mover_loses"] else mover
    return mover if theirs else 1 - mover if mine else None


def check_legal_moves(state):
    """legal_moves lists exactly the spec's moves, each under one text that parses to itself."""
    seat = game.to_move(state)
    legal = list(game.legal_moves(state, seat))
    expected = [f"{name(*p[:2])}-{name(*t[:2])}" for p, t in spec_moves(state, seat)]
    assert len(set(expected)) == len(expected), "a move text names two moves"
    assert sorted(legal) == sorted(expected)
    for move in legal:
        assert game.parse_move(state, seat, move) == move
    return legal


def check_move(before, move, after):
    """The rules every 3D move keeps; returns the moved knight's level change."""
    seat = game.to_move(before)
    left = [p for p in before["pieces"] if p not in after["pieces"]]
    arrived = [p for p in after["pieces"] if p not in before["pieces"]]
    assert len(left) == len(arrived) == 1 and left[0][3] == arrived[0][3] == seat
    occupied_before, occupied_after = occupied_points(before), occupied_points(after)
    assert not spec_pinned(occupied_before, *left[0][:3]), "a pinned knight moved"
    for x, y, level, _seat in after["pieces"]:
        assert spec_supported(occupied_after, x, y, level), "a raised knight lost a support"
    pinned_players = [
        player
        for player in (WHITE, BLACK)
        if all(spec_pinned(occupied_after, *p[:3]) for p in after["pieces"] if p[3] == player)
    ]
    assert len(pinned_players) <= 1, "both players all-pinned"
    assert seat not in pinned_players
    outcome = game.outcome(after)
    assert (outcome.winners[0] if outcome else None) == spec_winner(after, seat)
    if outcome is None:
        assert game.legal_moves(after, game.to_move(after)), (
            f"the player on move has no move: {after}"
        )
    return arrived[0][2] - left[0][2]


@settings(max_examples=30, deadline=None)
@given(
    size=st.integers(4, 7),
    seed=st.integers(0, 2**32),
    win_no_move=st.booleans(),
    mover_loses=st.booleans(),
)
def test_long_random_3d_games_keep_every_rule(size, seed, win_no_move, mover_loses):
    flags = {
        name: True
        for name, on in (("win_no_move", win_no_move), ("mover_loses", mover_loses))
        if on
    }
    options = game.parse_options(raw_options(size, **flags), 2)
    log, state = [], game.initial_state(options, 2, seed)
    for before, move, after in long_random_game(options, seed, plies=60):
        assert move in check_legal_moves(before)
        assert abs(check_move(before, move, after)) <= 1
        assert size > 4 or max(level for _x, _y, level, _s in after["pieces"]) <= 2
        log.append(move)
        state = after
    replayed = game.initial_state(options, 2, seed)
    for move in log:
        replayed = game.apply_move(replayed, game.to_move(replayed), move)
    assert replayed == state


def random_position(size, seed, count, **flags):
    """count knights: a full pyramid under a random raised point, the rest anywhere they stand."""
    rng = random.Random(seed)
    for apex_level in range(rng.randint(2, size), 0, -1):
        pyramid = layer = [rng.choice(spec_points(size, apex_level))]
        while layer[0][2] > 1:
            layer = sorted(
                {(x + dx, y + dy, level - 1) for x, y, level in layer for dx, dy in DIAGONALS}
            )
            pyramid = layer + pyramid
        if len(pyramid) <= count:
            break
    colours = [index % 2 for index in range(count)]  # as even as in a real game
    rng.shuffle(colours)
    occupied = dict(zip(pyramid, colours))
    every_point = [p for level in range(1, size + 1) for p in spec_points(size, level)]
    while len(occupied) < count:
        free = [p for p in every_point if p not in occupied and spec_supported(occupied, *p)]
        occupied[rng.choice(free)] = colours[len(occupied)]
    pieces = sorted([*p, seat] for p, seat in occupied.items())
    return dict(start(size, **flags), pieces=pieces, to_move=rng.randrange(2))


@settings(max_examples=100, deadline=None)
@given(
    size=st.integers(4, 7),
    seed=st.integers(0, 2**32),
    extra=st.integers(0, 16),
    win_no_move=st.booleans(),
)
def test_every_move_of_random_stacked_positions_keeps_every_rule(size, seed, extra, win_no_move):
    """Stacks three and four high, which play reaches rarely or never, follow the rules too.

    With extra knights beyond the set-up, level 4 and so the (1, 1) jumps across three
    levels come within reach: none is ever legal.
    """
    count = len(start(size)["pieces"]) + extra
    state = random_position(size, seed, count, **({"win_no_move": True} if win_no_move else {}))
    for move in check_legal_moves(state):
        assert abs(check_move(state, move, game.apply_move(state, game.to_move(state), move))) <= 1


ANY_NAME = st.tuples(st.sampled_from("abcdefghijklmn"), st.integers(0, 14)).map(
    lambda letter_number: f"{letter_number[0]}{letter_number[1]}"
)


@settings(max_examples=300, deadline=None)
@given(size=st.integers(4, 7), seed=st.integers(0, 2**32), data=st.data())
def test_parse_move_agrees_with_legal_moves(size, seed, data):
    state = random_position(size, seed, len(start(size)["pieces"]) + seed % 9)
    seat = game.to_move(state)
    points = sorted({name(x, y) for k in range(1, size + 1) for x, y, _k in spec_points(size, k)})
    occupied = occupied_points(state)
    own = [p for p, owner in sorted(occupied.items()) if owner == seat]
    free = [p for p in own if not spec_pinned(occupied, *p)]
    x, y, _level = data.draw(st.sampled_from(free or own))
    dx, dy = data.draw(st.sampled_from([*LEVEL_CHANGES, (0, 2), (2, 2), (3, 1), (4, 4)]))
    if data.draw(st.booleans()):
        text = f"{data.draw(ANY_NAME)}-{data.draw(st.one_of(ANY_NAME, st.sampled_from(points)))}"
    else:  # mostly knight's jumps from one of the mover's knights
        text = f"{name(x, y)}-{name(x + dx, y + dy) if min(x + dx, y + dy) >= 0 else 'a0'}"
    legal = game.legal_moves(state, seat)
    try:
        canonical = game.parse_move(state, seat, text.upper())
    except MoveError as error:
        assert str(error).startswith(("Invalid move", '"')) and text not in legal
    else:
        assert canonical == text and canonical in legal


def test_random_positions_reach_levels_3_and_4():
    """The property test above is not empty: its positions stack three and four high."""
    highest = {
        size: {
            max(level for _x, _y, level, _seat in random_position(size, seed, 40)["pieces"])
            for seed in range(30)
        }
        for size in (6, 7)
    }
    assert {3, 4} <= highest[6] and {3, 4} <= highest[7]


@settings(max_examples=40, deadline=None)
@given(size=st.integers(4, 7), seed=st.integers(0, 2**32), win_no_move=st.booleans())
def test_random_3d_games_replay_identically(size, seed, win_no_move):
    flags = {"win_no_move": True} if win_no_move else {}
    options = game.parse_options(raw_options(size, **flags), 2)
    moves, final = random_game(game, options, 2, seed, max_plies=300)
    assert checked_replay(game, options, 2, seed, moves) == final
    if game.outcome(final) is None:
        assert game.legal_moves(final, game.to_move(final)), "a player on move always has a move"


def test_random_games_do_stack_knights():
    """The property tests above are not empty: long games reach level 2 on every size."""
    for size, seed in ((4, 1), (5, 2), (6, 3), (7, 4)):
        options = game.parse_options(raw_options(size), 2)
        assert any(
            level == 2
            for _before, _move, after in long_random_game(options, seed, plies=120)
            for _x, _y, level, _seat in after["pieces"]
        )


# -- by mail ---------------------------------------------------------------------------


def test_a_3d_game_through_the_server(harness):
    harness.signup("alice", "bob")
    harness.new_mails()
    harness.challenge("knightpanic challenge alice bob -3d")
    [mail, *_rest] = harness.new_mails("alice@example.org")
    assert "levels 1 and 2:" in body_of(mail) and "-3d" in body_of(mail)
    for ply, move in enumerate(CLIMB, start=1):
        mover = "alice" if ply % 2 else "bob"
        harness.ok(f"knightpanic move 101 {mover} secret {move.upper()}#{ply}")
    body = body_of(harness.new_mails("bob@example.org")[-1])
    assert "   5 e1-b4" in body
    # b4 stands between the four knights under it, which are pinned (capitals); the last
    # move is bracketed where it left (e1) and where it arrived (b4, on level 2).
    assert (
        "\n".join(
            [
                "levels 1 and 2:",
                "      a b c d e f g",
                "  7   .   .   x   x   7",
                "  6                   6",
                "  5   O   O   .   .   5",
                "  4    [o]            4",
                "  3   X   X   .   .   3",
                "  2                   2",
                "  1   .   .  [.]  o   1",
                "      a b c d e f g",
                "o x  White, Black knight",
                "O X  White, Black knight pinned: another knight rests on it",
                "     A raised knight stands between the four points under it.",
                "[ ]  the last move (from and to)",
                "Last move: White e1-b4",
            ]
        )
        in body
    )
    assert "It is bob's turn." in body
    assert "pinned" in harness.refused("knightpanic move 101 bob secret a3-c7")
