"""The engines of KnightVision, Lox and Uknight as the search contract uses them
(docs/spec/server.md §10.5): an engine made from a stored state gives that state back before
any move, and a copy is independent of the engine it was copied from."""

import random

import pytest

from pbm.plugins import get_games

GAMES = ("knightvision", "lox", "uknight")


@pytest.mark.parametrize("name", GAMES)
def test_an_engine_gives_back_the_state_it_was_made_from(name):
    game = get_games()[name]
    options = game.parse_options({}, 2)
    rng = random.Random(name)
    for seed in range(3):
        state = game.initial_state(options, 2, seed)
        while game.to_move(state) is not None:
            engine = game.engine(state)
            assert engine.state() == state
            text = engine.move_text(rng.choice(engine.legal_moves()))
            state = game.apply_move(state, game.to_move(state), text)
        assert game.engine(state).state() == state
        assert game.engine(state).outcome() == game.outcome(state)
        assert game.engine(state).legal_moves() == []


@pytest.mark.parametrize("name", GAMES)
def test_a_copy_is_independent(name):
    game = get_games()[name]
    rng = random.Random(name)
    engine = game.engine(game.initial_state(game.parse_options({}, 2), 2, 1))
    for _ in range(30):
        engine.play(rng.choice(engine.legal_moves()))
    before = engine.state()
    twin = engine.copy()
    while twin.to_move() is not None:
        twin.play(rng.choice(twin.legal_moves()))
    assert engine.state() == before
    assert twin.outcome() is not None and engine.outcome() is None
