"""The search contract (docs/spec/server.md §10.5): every game's engine follows its plugin
contract move for move, and a copy is independent of its original."""

import random

import pytest

from pbm.plugins import get_games

GAMES = get_games()


@pytest.mark.parametrize("name", sorted(GAMES))
def test_random_games_through_the_engine_match_the_plugin_contract(name):
    game = GAMES[name]
    rng = random.Random(name)
    for _ in range(5):
        options = game.parse_options({}, game.min_players)
        state = game.initial_state(options, game.min_players, rng.randrange(10**6))
        engine = game.engine(state)
        for _ in range(400):
            seat = game.to_move(state)
            assert engine.to_move() == seat
            if seat is None:
                break
            moves = engine.legal_moves()
            texts = {engine.move_text(move) for move in moves}
            listed = set(game.legal_moves(state, seat))
            assert listed <= texts
            assert texts - listed <= {"pass", game.forced_move(state)}
            move = rng.choice(moves)
            state = game.apply_move(state, seat, engine.move_text(move))
            engine.play(move)
            assert engine.state() == state
        assert engine.outcome() == game.outcome(state)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_copy_plays_on_without_touching_its_original(name):
    game = GAMES[name]
    options = game.parse_options({}, game.min_players)
    engine = game.engine(game.initial_state(options, game.min_players, 7))
    before = engine.state()
    copy = engine.copy()
    copy.play(copy.legal_moves()[0])
    assert engine.state() == before
    assert copy.state() != before
