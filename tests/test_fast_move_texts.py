"""The fast move-list writers of the engines (Knight Line's move_texts_of, Lox's
placement_texts) give exactly the texts of their moves, in the same order: the plugin
contract's legal_moves answers from them (docs/spec/games/knightline.md and
docs/spec/games/lox.md)."""

import random

import pytest

from pbm.plugins import get_games

GAMES = get_games()


def random_engines(name, raw, players, games=4, plies=300):
    """The engine of every position of a few seeded random games."""
    game = GAMES[name]
    options = game.parse_options(raw, players)
    rng = random.Random(f"{name} {sorted(raw.items())} {players}")
    for _ in range(games):
        engine = game.engine(game.initial_state(options, players, rng.randrange(10**6)))
        for _ in range(plies):
            if engine.to_move() is None:
                break
            yield engine
            engine.play(rng.choice(engine.legal_moves()))


@pytest.mark.parametrize(
    "raw,players",
    [({}, 2), ({}, 3), ({"blocker": True}, 3), ({"wildcard": True}, 2)],
    ids=["2 players", "3 players", "blocker", "wildcard"],
)
def test_knight_line_move_texts_are_the_texts_of_its_moves(raw, players):
    for engine in random_engines("knightline", raw, players):
        seat = engine.to_move()
        moves = sorted(engine.moves_of(seat))
        assert engine.move_texts_of(seat) == [engine.move_text(move) for move in moves]


@pytest.mark.parametrize("raw", [{}, {"control": True}], ids=["plain", "control"])
def test_lox_placement_texts_are_the_texts_of_its_placements(raw):
    for engine in random_engines("lox", raw, 2):
        assert engine.placement_texts() == [engine.move_text(m) for m in engine.placements()]
