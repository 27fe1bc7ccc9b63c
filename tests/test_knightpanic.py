"""Knight Panic (2D): the spec's set-ups, rules and worked examples."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.knightpanic import KnightPanic
from pbm.game import MoveError, OptionError
from pbm.testing import check_game, random_game
from pbm.testing import play as checked_replay

game = KnightPanic()


def start(**raw):
    options = game.parse_options({k: v for k, v in raw.items()}, 2)
    return game.initial_state(options, 2, seed=1)


def cells(state, seat):
    return {f"{chr(97 + x)}{y + 1}" for x, y, _k, owner in state["pieces"] if owner == seat}


def play(state, *moves):
    for move in moves:
        seat = game.to_move(state)
        state = game.apply_move(state, seat, game.parse_move(state, seat, move))
    return state


SETUPS = {
    4: ("a1 c1 e1 g1", "a7 c7 e7 g7"),
    5: ("a1 c1 e1 g1 i1 a3 i3", "a9 c9 e9 g9 i9 a7 i7"),
    6: ("a1 c1 e1 g1 i1 k1 a3 c3 i3 k3 a5 k5", "a11 c11 e11 g11 i11 k11 a9 c9 i9 k9 a7 k7"),
    7: (
        "a1 c1 e1 g1 i1 k1 m1 a3 c3 k3 m3 a5 m5",
        "a13 c13 e13 g13 i13 k13 m13 a11 c11 k11 m11 a9 m9",
    ),
}


@pytest.mark.parametrize("size", [4, 5, 6, 7])
def test_setups_match_the_spec(size):
    state = start(size=str(size))
    white, black = SETUPS[size]
    assert cells(state, 0) == set(white.split())
    assert cells(state, 1) == set(black.split())


@pytest.mark.parametrize("size,count", [(4, 10), (5, 16), (6, 24), (7, 32)])
def test_first_move_counts(size, count):
    state = start(size=str(size))
    assert len(game.legal_moves(state, 0)) == count
    assert game.outcome(state) is None


def test_kp1_opening_moves():
    state = start()
    assert sorted(game.legal_moves(state, 0)) == sorted(
        "a1-c5 a1-e3 c1-a5 c1-e5 c1-g3 e1-a3 e1-c5 e1-g5 g1-c3 g1-e5".split()
    )


def test_start_board_renders_as_in_the_spec():
    assert game.render_board(start(), None) == "\n".join(
        [
            "      a c e g",
            "  7   x x x x   7",
            "  5   . . . .   5",
            "  3   . . . .   3",
            "  1   o o o o   1",
            "      a c e g",
            "o x  White, Black knight",
            "[ ]  the last move (from and to)",
        ]
    )


def test_kp2_an_immediate_loss():
    state = play(start(), "c1-e5")
    assert game.outcome(state) is None and game.to_move(state) == 1
    state = play(state, "a7-c3")
    assert game.render_board(state, None).split("\n")[:6] == [
        "      a c e g",
        "  7  [.]x x x   7",
        "  5   . . o .   5",
        "  3   .[x]. .   3",
        "  1   o . o o   1",
        "      a c e g",
    ]
    outcome = game.outcome(state)
    assert outcome.winners == (1,)
    assert "g1" in outcome.reason
    assert game.to_move(state) is None


@pytest.mark.parametrize("tiebreak", [{}, {"mover_loses": True}])
def test_kp2_black_wins_under_either_tiebreak(tiebreak):
    state = game.initial_state(game.parse_options(tiebreak, 2), 2, 1)
    state = play(state, "c1-e5", "a7-c3")
    assert game.outcome(state).winners == (1,)


def test_kp2_double_trap_goes_to_the_mover_by_default():
    state = play(start(), "c1-e5", "e7-c3")
    assert game.outcome(state).winners == (1,)


def test_kp2_double_trap_goes_to_the_opponent_with_mover_loses():
    state = game.initial_state(game.parse_options({"mover_loses": True}, 2), 2, 1)
    state = play(state, "c1-e5", "e7-c3")
    outcome = game.outcome(state)
    assert outcome.winners == (0,)
    assert "a7" in outcome.reason


def test_trapping_only_your_own_knight_loses():
    state = play(start(), "a1-c5", "a7-c3")
    assert game.outcome(state) is None
    state = play(state, "c1-e5")  # g1 now jumps only to e5 and c3, both taken
    outcome = game.outcome(state)
    assert outcome.winners == (1,)
    assert outcome.reason == "White's knight on g1 cannot move"


def test_moves_are_case_insensitive_and_canonical_lower_case():
    assert game.parse_move(start(), 0, "C1-E5") == "c1-e5"


@pytest.mark.parametrize(
    "move,fragment",
    [
        ("b2-c5", '"b2" is not a cell'),
        ("a1-c9", '"c9" is not a cell'),
        ("c7-e5", "no White knight on c7"),
        ("e3-c5", "no White knight on e3"),
        ("a1-c3", "a knight moves two squares one way and one the other"),
        ("a1-a1", "a knight moves"),
        ("a1c5", "write the knight's start and end cells"),
        ("a1-c5-e7", "write the knight's start and end cells"),
    ],
)
def test_move_errors_say_what_is_wrong(move, fragment):
    with pytest.raises(MoveError) as error:
        game.parse_move(start(), 0, move)
    assert fragment in str(error.value)


def test_occupied_target_is_refused():
    state = play(start(), "c1-e5", "g7-e3")
    with pytest.raises(MoveError, match="e3 is occupied"):
        game.parse_move(state, 0, "a1-e3")


@pytest.mark.parametrize(
    "raw,message",
    [
        ({"size": "9"}, 'Invalid KnightPanic parameter "-size=9": size must be from 4 to 7'),
        ({"size": "3"}, "size must be from 4 to 7"),
        ({"size": True}, "size must be from 4 to 7"),
        (
            {"mover_wins": True, "mover_loses": True},
            "give only one of -mover_wins and -mover_loses",
        ),
        ({"win_no_move": True, "lose_no_move": True}, "give only one of"),
        ({"2d": True, "3d": True}, "give only one of -2d and -3d"),
        ({"colour": "red"}, 'Invalid KnightPanic parameter "-colour=red": unknown option'),
        ({"mover_loses": "yes"}, "-mover_loses takes no value"),
        ({"3d": "yes"}, "-3d takes no value"),
    ],
)
def test_option_errors(raw, message):
    with pytest.raises(OptionError) as error:
        game.parse_options(raw, 2)
    assert message in str(error.value)


def test_options_defaults_and_2d_no_move_flags_accepted():
    assert game.parse_options({}, 2) == {
        "size": 4,
        "3d": False,
        "mover_loses": False,
        "win_no_move": False,
    }
    options = game.parse_options({"2d": True, "win_no_move": True, "mover_wins": True}, 2)
    assert options["win_no_move"] is True and options["3d"] is False
    state = play(game.initial_state(options, 2, 0), "c1-e5", "a7-c3")
    assert game.outcome(state).winners == (1,)


def test_contract_conformance():
    check_game(
        game,
        [
            ({}, 2, ["c1-e5", "a7-c3"]),
            ({}, 2, ["a1-c5", "a7-c3", "c1-g3", "c3-g5", "c5-a1", "c7-e3"]),
            ({"size": "7", "mover_loses": True}, 2, ["c3-e7"]),
            ({"size": "5"}, 2, []),
        ],
    )


@settings(max_examples=60, deadline=None)
@given(size=st.integers(4, 7), seed=st.integers(0, 2**32), loses=st.booleans())
def test_random_games_replay_identically(size, seed, loses):
    raw = {"size": str(size)}
    if loses:
        raw["mover_loses"] = True
    options = game.parse_options(raw, 2)
    moves, final = random_game(game, options, 2, seed, max_plies=300)
    assert checked_replay(game, options, 2, seed, moves) == final
    if game.outcome(final) is None:
        assert game.legal_moves(final, game.to_move(final)), "a player on move always has a move"


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=20))
def test_move_parser_only_raises_move_error(text):
    state = start()
    try:
        canonical = game.parse_move(state, 0, text)
    except MoveError:
        return
    assert canonical in game.legal_moves(state, 0)
