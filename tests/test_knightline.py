"""Knight Line: the spec's set-ups, rules, notation, worked examples and properties."""

import json
import random
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from games.knightline import KnightLine
from pbm.game import MoveError, OptionError
from pbm.testing import check_game
from pbm.testing import play as checked_replay
from tests.conftest import body_of

game = KnightLine()
WHITE, BLACK, RED = 0, 1, 2

# Found by random search; each is checked move by move below.
THREE_PLAYER_DRAW = [  # all three move three times, then White cannot move
    "0,0/2,-1/19",
    "1,0/3,-1/4",
    "0,-1/1,1/19",
    "2,-1/0,-2/1",
    "1,0/-1,-1/7",
    "1,1/3,0/18",
    "2,-1/4,-2/17",
    "1,0/2,2/1",
    "3,0/1,-1/15",
]
QUICK_THREE_PLAYER_DRAW = ["0,0/1,-2/7", "1,0/-1,1/9", "0,-1/1,-3/2", "1,-2/2,0/4"]  # stack 10
RED_WILDCARD_LINE = [  # Red's line 0,0 (the grey tile) 1,0 2,0 3,0
    "0,1",
    "(-1,0)",
    "1,0",
    "0,1/-1,-1/8",
    "(-1,0)/1,-1/5",
    "1,0/2,-2/17",
    "(-1,-1)/-2,1/3",
    "(-1,0)/-3,1/13",
    "2,-2/0,-1/5",
    "0,1/-2,0/4",
    "1,-1/2,1/2",
    "0,-1/2,0/2",
    "0,1/-2,2/3",
    "(-3,1)/-2,-1/12",
    "2,-2/3,0/7",
]
PASS_THEN_MOVE_AGAIN = [  # stack 10: Black is stuck at ply 8, moves again at ply 10
    "0,0/2,-1/1",
    "1,0/-1,1/8",
    "0,0/1,-2/6",
    "1,0/3,-1/1",
    "1,-2/2,0/5",
    "(-1,1)/0,-1/1",
    "2,0/4,-1/3",
    "pass",
    "0,0/2,1/1",
    "(-1,1)/1,2/4",
    "4,-1/2,-2/1",
]
BLOCKED_TWO_PLAYER = [  # stack 10: after White's ninth ply neither side can move
    "0,0/2,-1/1",
    "1,0/3,-1/7",
    "0,0/2,1/1",
    "1,0/2,2/1",
    "0,0/1,2/1",
    "1,0/2,-2/1",
    "0,0/1,-2/2",
    "3,-1/2,-3/1",
    "1,-2/2,-4/1",
]
BLACK_OUT_AND_STUCK = [  # stack 10: Black leaves at ply 5; after ply 10 it has no move
    "0,0/2,1/2",
    "1,0/-1,1/9",
    "0,-1/1,1/9",
    "0,0/2,-1/6",
    "pass",
    "1,1/3,0/4",
    "0,0/1,2/1",
    "pass",
    "1,1/0,3/1",
    "2,-1/3,1/4",
]


def start(players=2, **raw):
    options = game.parse_options(raw, players)
    return game.initial_state(options, players, seed=1)


def play(state, *moves):
    for move in moves:
        seat = game.to_move(state)
        assert seat is not None, f"{move} after the end"
        canonical = move if move == "pass" else game.parse_move(state, seat, move)
        state = game.apply_move(state, seat, canonical)
    return state


def board(state) -> list[str]:
    """The drawing without the notes under it."""
    lines = game.render_board(state, None).split("\n")
    return lines[: lines.index(lines[0], 1) + 1]


def refusal(state, text, seat=None) -> str:
    with pytest.raises(MoveError) as error:
        game.parse_move(state, game.to_move(state) if seat is None else seat, text)
    return str(error.value)


def parse_cells(move) -> tuple:
    """A canonical move as (x1, y1, x2, y2, k), or a set-up cell as (x, y)."""
    numbers = move.replace("(", "").replace(")", "").replace("/", ",").split(",")
    return tuple(int(n) for n in numbers)


def drawing(text) -> list[str]:
    return text.strip("\n").split("\n")


# -- set-up -------------------------------------------------------------------------


def test_two_player_start():
    state = start()
    assert state["stacks"] == [[0, 0, WHITE, 20], [1, 0, BLACK, 20]]
    assert game.to_move(state) == WHITE and game.outcome(state) is None


def test_three_player_start_puts_red_below_white():
    state = start(3, stack="12")
    assert sorted(state["stacks"]) == [[0, -1, RED, 12], [0, 0, WHITE, 12], [1, 0, BLACK, 12]]


@pytest.mark.parametrize("variant", ["blocker", "wildcard"])
def test_promotion_variants_start_with_set_up_turns_in_play_order(variant):
    state = start(3, **{variant: True})
    assert state["stacks"] == [] and state["grey"] == [0, 0]
    assert sorted(game.legal_moves(state, WHITE)) == sorted(
        ["(-1,-1)", "(-1,0)", "(-1,1)", "0,-1", "0,1", "1,-1", "1,0", "1,1"]
    )
    state = play(state, "1,1")
    assert game.to_move(state) == BLACK and len(game.legal_moves(state, BLACK)) == 7
    assert "1,1 is taken by a White stack of 20 tiles" in refusal(state, "1,1")
    assert "must go next to the grey tile on 0,0" in refusal(state, "2,0")
    assert "this is your set-up turn" in refusal(state, "1,1/2,3/1")
    state = play(state, "-1,-1", "+1, -1")
    assert state["stacks"] == [[-1, -1, BLACK, 20], [1, -1, RED, 20], [1, 1, WHITE, 20]]
    assert game.to_move(state) == WHITE
    assert "a single cell is only a set-up turn" in refusal(state, "0,1")
    # Three players: White's first real move is not restricted.
    assert "1,1/2,-1/19" in game.legal_moves(state, WHITE)


def test_two_player_variant_restricts_whites_first_real_move():
    state = play(start(wildcard=True), "0,1", "1,0")
    assert sorted(game.legal_moves(state, WHITE)) == ["0,1/-1,-1/1", "0,1/1,-1/1", "0,1/2,0/1"]
    assert "White's first move moves exactly one tile" in refusal(state, "0,1/2,0/2")
    state = play(state, "0,1/2,0/1")
    assert any(move.endswith("/19") for move in game.legal_moves(state, BLACK))


# -- worked examples ------------------------------------------------------------------


def test_kl1_whites_first_move():
    state = start()
    assert board(state) == drawing("""
       -1   0   1   2
   1    .   .   .   .   1
   0    . W20 B20   .   0
  -1    .   .   .   .  -1
       -1   0   1   2
""")
    assert sorted(game.legal_moves(state, WHITE)) == ["0,0/2,-1/1", "0,0/2,1/1"]
    assert "White's first move moves exactly one tile" in refusal(state, "0,0/2,1/2")
    assert "1,2 touches no occupied cell" in refusal(state, "0,0/1,2/1")


def test_kl2_blacks_reply():
    state = play(start(), "0,0/2,1/1")
    assert board(state) == drawing("""
       -1   0   1   2   3
   2    .   .   .   .   .   2
   1    .   .   . [W1]  .   1
   0    .[W19]B20   .   .   0
  -1    .   .   .   .   .  -1
       -1   0   1   2   3
""")
    legal = game.legal_moves(state, BLACK)
    assert len(legal) == 76
    assert sorted(legal) == sorted(
        f"1,0/{x},{y}/{k}" for x, y in [(-1, -1), (-1, 1), (2, 2), (3, 1)] for k in range(1, 20)
    )


def test_kl5_rejected_moves():
    state = play(start(), "0,0/2,1/1")
    assert "K must be from 1 to 19" in refusal(state, "1,0/3,1/20")
    assert game.parse_move(state, BLACK, "1,0/3,1/19") == "1,0/3,1/19"
    state = play(state, "1,0/3,1/10")
    assert board(state) == drawing("""
       -1   0   1   2   3   4
   2    .   .   .   .   .   .   2
   1    .   .   .  W1[B10]  .   1
   0    . W19[B10]  .   .   .   0
  -1    .   .   .   .   .   .  -1
       -1   0   1   2   3   4
""")
    for anything in ("2,1/4,2/1", "2,1/0,2/1", "2,1/3,3/5"):
        assert "the White stack on 2,1 has a single tile" in refusal(state, anything)
    assert "2,1 is occupied by a White stack of 1 tile" in refusal(state, "0,0/2,1/5")
    legal = game.legal_moves(state, WHITE)
    assert len(legal) == 36
    assert sorted(legal) == sorted(
        f"0,0/{x},{y}/{k}" for x, y in [(1, 2), (2, -1)] for k in range(1, 19)
    )


# -- notation -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "typed",
    ["0,0/2,1/1", " 0 , 0 / 2 , 1 / 1 ", "+0,+0/+2,+1/+1", "(0,0)/(2,1)/1", "0,0/(2,1)/01"],
)
def test_notation_ignores_spaces_plus_signs_and_parentheses(typed):
    assert game.parse_move(start(), WHITE, typed) == "0,0/2,1/1"


def test_a_move_from_left_of_the_origin_is_written_in_parentheses():
    state = play(start(), "0,0/2,1/1", "1,0/-1,-1/3", "0,0/1,2/1")
    # The contract forbids a leading "-", so the leading cell gets parentheses.
    assert game.parse_move(state, BLACK, "-1,-1/0,1/2") == "(-1,-1)/0,1/2"
    assert game.parse_move(state, BLACK, "(-1,-1)/0,1/2") == "(-1,-1)/0,1/2"
    assert "(-1,-1)/0,1/2" in game.legal_moves(state, BLACK)
    assert "1,0/-1,1/1" in game.legal_moves(state, BLACK)


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("", "write FROM/TO/K with cells as x,y, e.g. 0,0/2,1/1"),
        ("0,0-2,1-1", "write FROM/TO/K"),
        ("(0,0/2,1/1", "write FROM/TO/K"),
        ("0,0/2,1", "K is always required, e.g. 0,0/2,1/1"),
        (
            "pass",
            "KnightLine does not allow passing while you have a legal move (Black's "
            "stacks that can move: 1,0 (20 tiles))",
        ),
        (
            "3,3/4,5/1",
            "there is no Black stack on 3,3 (it is empty); Black's stacks that can "
            "move: 1,0 (20 tiles)",
        ),
        ("0,0/1,2/1", "there is no Black stack on 0,0 (it is a White stack of 19 tiles)"),
        ("1,0/3,0/1", "3,0 is not a knight's move from 1,0"),
        ("1,0/2,1/1", "2,1 is not a knight's move"),
        ("1,0/0,2/1", "0,2 touches no occupied cell, and all tiles must stay connected"),
        ("1,0/3,1/0", "K must be from 1 to 19"),
        ("1,0/3,1/20", "at least one tile stays behind"),
    ],
)
def test_refusals_say_what_is_wrong_and_how_to_write_it(text, fragment):
    assert fragment in refusal(play(start(), "0,0/2,1/1"), text)


def test_refusals_name_the_legal_destinations():
    message = refusal(play(start(), "0,0/2,1/1"), "1,0/0,2/5")
    assert "from 1,0 you can move to (-1,-1), (-1,1), (2,2) or (3,1)" in message


# -- lines ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "moves,winner,reason",
    [
        (
            [
                "0,0/2,1/1",
                "1,0/2,2/17",
                "0,0/2,-1/18",
                "2,2/0,1/4",
                "2,-1/1,1/16",
                "0,1/-1,-1/3",
                "1,1/0,-1/13",
                "2,2/3,0/12",
                "0,-1/2,0/5",
                "(-1,-1)/1,-2/2",
                "0,-1/2,-2/4",
            ],
            WHITE,
            "White made a line of 4 from 2,-2 to 2,1",
        ),
        (
            [
                "0,0/2,-1/1",
                "1,0/2,-2/7",
                "0,0/2,1/8",
                "1,0/3,-1/2",
                "2,1/4,0/1",
                "3,-1/2,-3/1",
                "2,1/1,-1/2",
                "2,-2/3,-4/1",
                "1,-1/3,0/1",
                "2,-2/0,-1/4",
                "pass",
                "0,-1/2,0/3",
                "pass",
                "2,0/1,-2/2",
            ],
            BLACK,
            "Black made a line of 4 from 0,-1 to 3,-4",
        ),
    ],
)
def test_four_own_stacks_in_a_line_win_at_once(moves, winner, reason):
    options = {"stack": "20"} if winner == WHITE else {"stack": "10"}
    state = play(start(**options), *moves[:-1])
    assert game.outcome(state) is None
    state = play(state, moves[-1])
    outcome = game.outcome(state)
    assert outcome.winners == (winner,) and outcome.reason == reason
    assert game.to_move(state) is None and game.legal_moves(state, winner) == []
    assert "the game is over" in refusal(state, moves[-1], seat=1 - winner)


def test_the_wildcard_completes_a_line_and_the_blocker_breaks_it():
    wild = play(start(3, wildcard=True), *RED_WILDCARD_LINE)
    assert game.outcome(wild).winners == (RED,)
    assert game.outcome(wild).reason == "Red made a line of 4 from 0,0 to 3,0"
    blocked = play(start(3, blocker=True), *RED_WILDCARD_LINE)
    assert game.outcome(blocked) is None and game.to_move(blocked) == WHITE
    assert board(wild)[3:6] == [
        "   1    .  B1  W3   .  W5   .  B2   .   .   1",
        "   0    .   .  W4  B2   G  R3  R2 [R7]  .   0",
        "  -1    .   . B12  W5  R3  B3   .   .   .  -1",
    ]


# -- passes and the end of a blocked game --------------------------------------------------


def test_a_stuck_player_passes_and_plays_again_later():
    state = play(start(stack="10"), *PASS_THEN_MOVE_AGAIN[:7])
    assert game.to_move(state) == BLACK
    assert game.legal_moves(state, BLACK) == []
    assert game.forced_move(state) == "pass"
    assert not game.can_pass(state, BLACK)
    state = play(state, "pass")
    assert game.to_move(state) == WHITE and game.forced_move(state) is None
    assert game.render_board(state, None).endswith("Last move: Black passed")
    state = play(state, *PASS_THEN_MOVE_AGAIN[8:10])
    assert game.to_move(state) == WHITE
    state = play(state, PASS_THEN_MOVE_AGAIN[10])
    assert game.outcome(state).winners == (WHITE,)


def test_no_voluntary_pass():
    state = start()
    assert not game.can_pass(state, WHITE) and game.forced_move(state) is None
    assert game.pass_refusal(state, WHITE) == (
        "KnightLine does not allow passing while you have a legal move (White's stacks that "
        "can move: 0,0 (20 tiles)); a player without one passes automatically in a two-player "
        "game"
    )
    assert "(put your stack on (-1,-1), (-1,0)," in game.pass_refusal(start(blocker=True), WHITE)


def test_a_blocked_two_player_game_goes_to_black():
    state = play(start(stack="10"), *BLOCKED_TWO_PLAYER)
    outcome = game.outcome(state)
    assert outcome.winners == (BLACK,)
    assert outcome.reason == "neither player can move: a blocked game goes to Black"
    assert game.to_move(state) is None


def test_a_stuck_player_draws_a_three_player_game_at_once():
    state = play(start(3, stack="10"), *QUICK_THREE_PLAYER_DRAW[:3])
    assert game.outcome(state) is None
    state = play(state, QUICK_THREE_PLAYER_DRAW[3])
    assert game.outcome(state).winners == ()
    assert game.outcome(state).reason == "Black cannot move: a draw"
    assert game.to_move(state) is None and game.forced_move(state) is None


def test_three_player_draw_after_three_rounds():
    state = play(start(3), *THREE_PLAYER_DRAW)
    assert game.outcome(state).winners == ()
    assert game.outcome(state).reason == "White cannot move: a draw"


def test_a_seat_that_left_is_passed_for_and_never_stops_the_game():
    state = play(start(3, stack="10"), *BLACK_OUT_AND_STUCK[:4])
    assert game.legal_moves(state, BLACK)
    # The core passes for Black although Black could move: Black has resigned.
    state = play(state, "pass")
    assert state["out"] == [BLACK]
    state = play(state, *BLACK_OUT_AND_STUCK[5:])
    assert game.to_move(state) == BLACK and game.outcome(state) is None
    assert game.legal_moves(state, BLACK) == []
    state = play(state, "pass")
    assert game.to_move(state) == RED and game.legal_moves(state, RED)


# -- options ------------------------------------------------------------------------


def test_default_options_and_values():
    assert game.parse_options({}, 2) == {"stack": 20, "blocker": False, "wildcard": False}
    assert game.parse_options({"stack": "10", "blocker": True}, 3) == {
        "stack": 10,
        "blocker": True,
        "wildcard": False,
    }
    assert game.parse_options({"stack": "30", "wildcard": True}, 2)["stack"] == 30


@pytest.mark.parametrize(
    "raw,message",
    [
        ({"stack": "0"}, 'Invalid KnightLine parameter "-stack=0": stack must be from 10 to 30'),
        ({"stack": "31"}, "stack must be from 10 to 30 tiles"),
        ({"stack": "9"}, "stack must be from 10 to 30 tiles"),
        ({"stack": True}, 'Invalid KnightLine parameter "-stack": write the number of tiles'),
        ({"stack": "ten"}, "write the number of tiles, e.g. -stack=15"),
        ({"blocker": True, "wildcard": True}, "give only one of -blocker and -wildcard"),
        (
            {"blocker": "yes"},
            'Invalid KnightLine parameter "-blocker=yes": -blocker takes no value',
        ),
        ({"size": "5"}, 'Invalid KnightLine parameter "-size=5": unknown option; the options are'),
    ],
)
def test_option_errors(raw, message):
    with pytest.raises(OptionError) as error:
        game.parse_options(raw, 2)
    assert message in str(error.value)


# -- display -------------------------------------------------------------------------


def test_a_three_player_board_mid_game():
    state = play(start(3), *THREE_PLAYER_DRAW[:6])
    assert game.render_board(state, RED) == "\n".join(
        [
            "       -2  -1   0   1   2   3   4",
            "   2    .   .   .   .   .   .   .   2",
            "   1    .   .   . [R1]  .   .   .   1",
            "   0    .   .  W1  B9   .[R18]  .   0",
            "  -1    .  B7  R1   . W18  B4   .  -1",
            "  -2    .   .  W1   .   .   .   .  -2",
            "  -3    .   .   .   .   .   .   .  -3",
            "       -2  -1   0   1   2   3   4",
            "W B R  White, Black, Red stack; the number is its height",
            "[ ]  the last move (from and to)",
            "Last move: Red 1,1/3,0/18",
        ]
    )


def test_a_wide_board_is_drawn_in_panels_of_at_most_76_columns():
    stacks = [[x, 0, x % 3, 1 + x % 30] for x in range(40)]
    state = dict(start(3), stacks=stacks)
    text = game.render_board(state, None)
    assert max(len(line) for line in text.split("\n")) <= 76
    lines = text.split("\n")
    rows_with_y0 = [line for line in lines if line.startswith("   0 ")]
    assert len(rows_with_y0) == 3
    shown = " ".join(rows_with_y0).split()
    for _x, _y, seat, height in stacks:
        assert f"{'WBR'[seat]}{height}" in shown
    assert shown.count(".") == 2  # the margin: one column on either side
    assert "W28" in shown and "B29" in shown and "R30" in shown


def test_help_gives_rules_options_notation_and_examples():
    text = game.help_text()
    for needed in (
        "-stack=N",
        "-blocker",
        "-wildcard",
        "0,0/2,1/1",
        "Swap: not offered",
        "Draws and undo: by agreement",
        "knightline challenge alice bob carol",
        "knightline move 101 alice secret 0,0/2,1/1",
    ):
        assert needed in text
    assert max(len(line) for line in text.split("\n")) <= 76


# -- the plugin contract and properties -------------------------------------------------


def test_contract_conformance():
    check_game(
        game,
        [
            ({}, 2, []),
            ({}, 2, ["0,0/2,1/1", "1,0/3,1/10", "0,0/1,2/5"]),
            ({"stack": "10"}, 2, PASS_THEN_MOVE_AGAIN),
            ({}, 3, THREE_PLAYER_DRAW[:5]),
            ({}, 3, THREE_PLAYER_DRAW),
            ({"wildcard": True}, 3, RED_WILDCARD_LINE),
            ({"blocker": True}, 2, ["1,1", "-1,-1", "1,1/-1,0/1"]),
            ({"blocker": True}, 3, ["0,1"]),
        ],
        bad_options=({"no_such_option": True}, {"stack": "0"}, {"blocker": True, "wildcard": True}),
    )


def reference_moves(state, seat, white_has_moved):
    """The legal moves straight from the spec's wording, as tuples."""
    stacks = {(x, y): (owner, height) for x, y, owner, height in state["stacks"]}
    occupied = set(stacks) | ({tuple(state["grey"])} if state["grey"] else set())

    def touches(cell):
        return any(max(abs(cell[0] - c[0]), abs(cell[1] - c[1])) == 1 for c in occupied)

    if state["grey"] and not any(owner == seat for owner, _ in stacks.values()):
        gx, gy = state["grey"]
        return {
            (gx + dx, gy + dy)
            for dx in (-1, 0, 1)
            for dy in (-1, 0, 1)
            if (gx + dx, gy + dy) not in occupied
        }
    restricted = state["players"] == 2 and seat == WHITE and not white_has_moved
    found = set()
    for (x, y), (owner, height) in stacks.items():
        if owner != seat or height < 2:
            continue
        for dx in range(-2, 3):
            for dy in range(-2, 3):
                target = (x + dx, y + dy)
                if {abs(dx), abs(dy)} != {1, 2} or target in occupied or not touches(target):
                    continue
                for k in [1] if restricted else range(1, height):
                    found.add((x, y, *target, k))
    return found


def connected(state) -> bool:
    cells = {(x, y) for x, y, _, _ in state["stacks"]}
    if state["grey"]:
        cells.add(tuple(state["grey"]))
    if not cells:
        return True
    seen, todo = set(), [next(iter(cells))]
    while todo:
        x, y = todo.pop()
        if (x, y) in seen:
            continue
        seen.add((x, y))
        todo.extend(
            (x + dx, y + dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if (x + dx, y + dy) in cells
        )
    return seen == cells


def has_line(state, seat) -> bool:
    mine = {(x, y) for x, y, owner, _ in state["stacks"] if owner == seat}
    if state["options"]["wildcard"]:
        mine.add(tuple(state["grey"]))
    return any(
        all((x + i * dx, y + i * dy) in mine for i in range(4))
        for x, y in mine
        for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1))
    )


def random_playout(options, players, seed, leave_chance):
    """Random legal moves, and in three-player games a seat may leave (the core then passes
    for it). Checks each position against the reference rules; the log and the final state."""
    rng = random.Random(seed)
    state = game.initial_state(options, players, seed)
    log, left, white_has_moved = [], set(), False
    while (seat := game.to_move(state)) is not None:
        legal = game.legal_moves(state, seat)
        assert {parse_cells(m) for m in legal} == reference_moves(state, seat, white_has_moved)
        assert len(set(legal)) == len(legal)
        if seat in left or (players == 3 and not left and rng.random() < leave_chance):
            left.add(seat)
            move = "pass"
        elif legal:
            move = rng.choice(legal)
            white_has_moved |= seat == WHITE and "/" in move
        else:
            move = game.forced_move(state)
            assert move == "pass" and players == 2
            assert reference_moves(state, 1 - seat, white_has_moved), "the other side can move"
        state = game.apply_move(state, seat, move)
        json.loads(json.dumps(state))
        log.append((seat, move))
        assert connected(state), "all tiles stay one 8-connected group"
        outcome = game.outcome(state)
        if move != "pass" and outcome is None:
            assert not has_line(state, seat)
        if outcome is not None and outcome.winners and "line" in outcome.reason:
            assert outcome.winners == (seat,) and has_line(state, seat)
    return log, state, left


def check_end(state, log, players, left):
    """A finished game ended the way the spec says: a line, or nobody (else) could move."""
    outcome = game.outcome(state)
    assert outcome is not None and game.to_move(state) is None
    if "line" in outcome.reason:
        return
    if players == 2:
        assert outcome.winners == (BLACK,)
        assert not reference_moves(state, WHITE, True) and not reference_moves(state, BLACK, True)
        return
    following = next(seat for step in (1, 2) if (seat := (log[-1][0] + step) % 3) not in left)
    assert outcome.winners == ()
    assert outcome.reason == f"{game.player_names[following]} cannot move: a draw"
    assert not reference_moves(state, following, True)


@settings(max_examples=60, deadline=None)
@given(
    players=st.sampled_from([2, 3]),
    variant=st.sampled_from([{}, {"blocker": True}, {"wildcard": True}]),
    stack=st.integers(10, 30),
    seed=st.integers(0, 2**32),
    leave_chance=st.sampled_from([0.0, 0.05]),
)
def test_random_games_end_in_bounds_stay_connected_and_replay(
    players, variant, stack, seed, leave_chance
):
    options = game.parse_options(dict(variant, stack=str(stack)), players)
    log, final, left = random_playout(options, players, seed, leave_chance)
    setup_turns = players if options["blocker"] or options["wildcard"] else 0
    real_moves = sum(1 for _, move in log if "/" in move)
    assert real_moves <= players * (stack - 1), "the spec's bound on the number of moves"
    assert len(log) <= setup_turns + 2 * players * (stack - 1) + players
    check_end(final, log, players, left)
    assert checked_replay(game, options, players, seed, [move for _seat, move in log]) == final


@settings(max_examples=200, deadline=None)
@given(text=st.one_of(st.text(max_size=24), st.sampled_from(["pass", "PASS", " Pass "])))
@example(text="PASS")
def test_move_parser_only_raises_move_error(text):
    """Every refusal says what was wrong: an invalid move as such, a pass with the words of
    docs/spec/server.md §3.5.1 step 8 (input ignores case and spaces)."""
    state = play(start(), "0,0/2,1/1")
    try:
        canonical = game.parse_move(state, BLACK, text)
    except MoveError as error:
        if text.strip().lower() == "pass":
            assert str(error).startswith("KnightLine does not allow passing while you have")
        else:
            assert str(error).startswith("Invalid move")
        return
    assert canonical in game.legal_moves(state, BLACK)


# -- through the server, in process ------------------------------------------------------


def test_a_three_player_challenge_with_options(harness):
    harness.signup("alice", "bob", "carol")
    harness.new_mails()
    harness.ok(
        "knightline challenge alice bob carol -stack=15 -wildcard", sender="alice@example.org"
    )
    mails = harness.new_mails()
    assert sorted(m["To"] for m in mails) == [
        "alice@example.org",
        "bob@example.org",
        "carol@example.org",
    ]
    for mail in mails:
        assert mail["Subject"] == "KnightLine Board 101: alice vs bob vs carol"
        body = body_of(mail)
        assert "Options: -stack=15 -wildcard" in body
        assert "Set-up: White puts a stack of 15 on an empty cell next to G." in body
    for userid, cell in (("alice", "1,1"), ("bob", "-1,-1"), ("carol", "-1,1")):
        harness.ok(f"knightline move 101 {userid} secret {cell}")
    mail = harness.new_mails("carol@example.org")[-1]
    body = body_of(mail)
    assert mail["Subject"] == "KnightLine Board 101: alice vs bob vs carol"
    assert "   1 1,1" in body and "2 (-1,-1)" in body and "3 (-1,1)" in body
    assert "  -1    . B15   .   .   .  -1" in body


def test_the_server_plays_a_forced_pass(harness):
    harness.signup("alice", "bob")
    harness.challenge("knightline challenge alice bob -stack=10")
    players = ("alice", "bob")
    for ply, move in enumerate(PASS_THEN_MOVE_AGAIN[:7]):
        harness.ok(f"knightline move 101 {players[ply % 2]} secret {move}")
    mails = harness.new_mails()
    body = body_of(mails[-1])
    assert mails[-1]["Subject"] == "KnightLine Board 101: alice vs bob"
    assert "   7 2,0/4,-1/3      8 pass (Auto)" in body
    assert "It is alice's turn." in body
    assert "KnightLine does not allow passing" in harness.refused(
        "knightline pass 101 alice secret"
    )


def test_a_resigned_player_is_passed_for_until_the_end(harness):
    harness.signup("alice", "bob", "carol")
    harness.challenge("knightline challenge alice bob carol -stack=10")
    seats = ("alice", "bob", "carol")
    for ply, move in enumerate(BLACK_OUT_AND_STUCK[:4]):
        harness.ok(f"knightline move 101 {seats[ply % 3]} secret {move}")
    harness.ok("knightline resign 101 bob secret")
    for userid, move in (
        ("carol", "1,1/3,0/4"),
        ("alice", "0,0/1,2/1"),
        ("carol", "1,1/0,3/1"),
        ("alice", "2,-1/3,1/4"),
    ):
        harness.ok(f"knightline move 101 {userid} secret {move}")
    mails = harness.new_mails()[-3:]
    assert sorted(m["To"] for m in mails) == [
        "alice@example.org",
        "bob@example.org",
        "carol@example.org",
    ]
    body = body_of(mails[-1])
    # Black cannot move any more, but has left the game: it goes on between the other two.
    assert mails[-1]["Subject"] == "KnightLine Board 101: alice vs bob vs carol"
    assert "It is carol's turn." in body
    # Ply 12 is Black's automatic pass, in either move-list layout of the core.
    assert re.search(r"\b12 (Black \(bob\): )?pass \(Auto\)", body)
    assert "Subscribers: bob" in body
