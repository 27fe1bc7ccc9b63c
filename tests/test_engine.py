"""The search contract (docs/spec/server.md §10.5): every game's engine follows its plugin
contract move for move, and a copy is independent of its original."""

import json
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
def test_the_contract_answers_for_a_state_it_made_as_for_the_same_state_read_afresh(name):
    """The contract keeps the engine it played for each state it returns (StateEngines):
    that engine, updated step by step, must answer as one built from the state's JSON,
    for every player count the game allows."""
    game = GAMES[name]
    rng = random.Random(f"kept {name}")
    for players in range(game.min_players, game.max_players + 1):
        options = game.parse_options({}, players)
        state = game.initial_state(options, players, rng.randrange(10**6))
        for _ in range(300):
            seat = game.to_move(state)
            fresh = json.loads(json.dumps(state))
            assert game.to_move(fresh) == seat
            if seat is None:
                assert game.outcome(fresh) == game.outcome(state)
                break
            listed = list(game.legal_moves(state, seat))
            assert listed == list(game.legal_moves(fresh, seat))
            assert game.forced_move(state) == game.forced_move(fresh)
            moves = listed or [game.forced_move(state) or "pass"]
            move = rng.choice(moves)
            state = game.apply_move(state, seat, move)
            assert state == game.apply_move(fresh, seat, move)


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


def _random_state(game, plies: int, seed: int):
    rng = random.Random(seed)
    options = game.parse_options({}, game.min_players)
    state = game.initial_state(options, game.min_players, seed)
    for _ in range(plies):
        seat = game.to_move(state)
        if seat is None:
            break
        moves = list(game.legal_moves(state, seat)) or [game.forced_move(state)]
        state = game.apply_move(state, seat, rng.choice(moves))
    return state


@pytest.mark.parametrize("name", sorted(GAMES))
def test_the_contract_answers_for_a_state_changed_in_place_not_for_the_engine_kept(name):
    """The engines kept for the states apply_move returned (pbm.engine.StateEngines) never
    answer for a state someone has changed since: the same dict, other contents."""
    game = GAMES[name]
    state = _random_state(game, 6, 3)
    other = _random_state(game, 9, 4)
    seat = game.to_move(state)
    assert seat is not None
    listed = list(game.legal_moves(state, seat))  # the kept engine answers
    fresh_other = json.loads(json.dumps(other))
    state.clear()
    state.update(json.loads(json.dumps(other)))  # the same object, another position
    other_seat = game.to_move(state)
    assert list(game.legal_moves(state, other_seat)) == list(
        game.legal_moves(fresh_other, other_seat)
    )
    assert game.forced_move(state) == game.forced_move(fresh_other)
    assert game.engine(state).state() == game.engine(fresh_other).state()
    assert listed  # the first answer came from a position with moves


@pytest.mark.parametrize("name", sorted(GAMES))
def test_the_engine_a_game_hands_out_is_its_own_to_play_on(name):
    """game.engine gives a fresh engine every time: playing on it changes neither the state
    nor what the contract says about it."""
    game = GAMES[name]
    state = _random_state(game, 1, 5)
    before = json.dumps(state, sort_keys=True)
    seat = game.to_move(state)
    listed = list(game.legal_moves(state, seat))
    engine = game.engine(state)
    engine.play(engine.legal_moves()[0])
    assert json.dumps(state, sort_keys=True) == before
    assert list(game.legal_moves(state, seat)) == listed
    assert game.engine(state).state() == state
