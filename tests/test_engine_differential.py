"""The fast engines keep the rules exactly (issue 21): over seeded random games in every
variant, each game's engine and its plugin contract list the same moves, reach the same
states and end with the same outcomes as the engine frozen before they were written
(tests/reference_engines/). `make stress` plays thousands of games a game."""

import os
import random

import pytest

from pbm.engine import ContractEngine
from pbm.plugins import get_games
from tests.reference_engines import GAME_NAMES, reference_game, variants

GAMES_PER_GAME = 2000 if os.environ.get("PBM_STRESS") else 60
PLY_LIMIT = 3000


def cases() -> list:
    return [
        pytest.param(name, raw, players, id=f"{name}-{players}p-{raw or 'defaults'}")
        for name in GAME_NAMES
        for raw, players in variants(reference_game(name))
    ]


@pytest.mark.parametrize(("name", "raw", "players"), cases())
def test_random_games_match_the_reference_engine(name, raw, players):
    game, reference = get_games()[name], reference_game(name)
    count = max(1, GAMES_PER_GAME // len(variants(reference)))
    rng = random.Random(f"{name}{raw}{players}")
    options = reference.parse_options(raw, players)
    assert game.parse_options(raw, players) == options
    for _ in range(count):
        seed = rng.randrange(10**9)
        state = reference.initial_state(options, players, seed)
        assert game.initial_state(options, players, seed) == state
        play_alongside(game, reference, state, rng)


def play_alongside(game, reference, state, rng):
    """One random game, each ply checked on the reference, the fast engine and the contract."""
    expected = ContractEngine(reference, state)
    fast = game.engine(state)
    contract = ContractEngine(game, state)
    for ply in range(PLY_LIMIT):
        seat = expected.to_move()
        assert fast.to_move() == seat == contract.to_move(), f"ply {ply}"
        if seat is None:
            break
        moves = {fast.move_text(move): move for move in fast.legal_moves()}
        listed = sorted(expected.legal_moves())
        assert sorted(moves) == listed, f"ply {ply}: legal moves differ"
        assert sorted(contract.legal_moves()) == listed, f"ply {ply}: the contract differs"
        text = rng.choice(listed)
        expected.play(text)
        fast.play(moves[text])
        contract.play(text)
        assert fast.state() == expected.state() == contract.state(), f"ply {ply}: {text}"
    assert fast.outcome() == expected.outcome() == contract.outcome()
