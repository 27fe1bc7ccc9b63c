"""Conformance checks every game plugin's tests run (docs/spec/server.md §10.4).

pbm.testing.mail, a module of its own, plays games by mail on a server home of the test's:
importing these checks does not import the server."""

import json
import random
from collections.abc import Iterable, Sequence

from ..game import RESERVED_MOVE_WORDS, BaseGame, MoveError, OptionError, Options, RawOptions, State

__all__ = ["BAD_MOVES", "check_game", "check_rendering", "check_state", "play", "random_game"]

MAX_LINE = 76
BAD_MOVES = ("", "zz", "-", "#", "a1-a1-a1-a1", "x" * 70, "\x00", "é9", "99-99")


# A sample game of check_game: (raw challenge options, players, move texts).
SampleGame = tuple[RawOptions, int, Sequence[str]]


def _frozen(state: State) -> str:
    return json.dumps(state, sort_keys=True)


def check_rendering(game: BaseGame, state: State, seats: int) -> None:
    """The board of every perspective (spectator and each seat) fits a mail: no blank lines
    at either end, lines of at most 76 printable ASCII characters."""
    for perspective in [None, *range(seats)]:
        text = game.render_board(state, perspective)
        assert text == text.strip("\n"), "no leading or trailing blank lines"
        for line in text.split("\n"):
            assert len(line) <= MAX_LINE, f"board line over {MAX_LINE} characters: {line!r}"
            assert "\t" not in line
            assert all(32 <= ord(c) < 127 for c in line), f"non-ASCII board line {line!r}"


def check_state(state: State) -> None:
    assert json.loads(json.dumps(state)) == state, "states must be plain JSON values"


def play(game: BaseGame, options: Options, players: int, seed: int, moves: Iterable[str]) -> State:
    """Apply move texts in turn order, checking the contract at every step; the final state."""
    state = game.initial_state(options, players, seed)
    check_state(state)
    for text in moves:
        seat = game.to_move(state)
        assert seat is not None, f"move {text!r} after the game ended"
        if text == "pass":
            canonical = "pass"
        else:
            canonical = game.parse_move(state, seat, text)
            assert game.parse_move(state, seat, canonical) == canonical, "canonical idempotence"
            assert len(canonical) <= 64 and "#" not in canonical and " " not in canonical
            assert not canonical.startswith("-") and canonical.lower() not in RESERVED_MOVE_WORDS
            assert canonical in set(game.legal_moves(state, seat)), f"{canonical} not listed legal"
        before = _frozen(state)
        new_state = game.apply_move(state, seat, canonical)
        assert _frozen(state) == before, "apply_move must not mutate its argument"
        check_state(new_state)
        state = new_state
    return state


def check_game(
    game: BaseGame,
    sample_games: Iterable[SampleGame],
    bad_options: Iterable[RawOptions] = ({"no_such_option": True},),
) -> None:
    """sample_games: (raw options, players, move texts) triples, each a legal game prefix."""
    for raw, players, moves in sample_games:
        options = game.parse_options(raw, players)
        check_state(options)
        first = play(game, options, players, 20090801, moves)
        second = play(game, options, players, 20090801, moves)
        assert first == second, "replaying the same log must give an equal state"
        check_rendering(game, first, players)
        seat = game.to_move(first)
        if seat is not None:
            for text in BAD_MOVES:
                try:
                    game.parse_move(first, seat, text)
                except MoveError as error:
                    assert str(error), "a MoveError must say what is wrong"
                else:
                    raise AssertionError(f"parse_move accepted {text!r}")
    help_text = game.help_text()
    for option in getattr(game, "options", ()):
        for key in option.keys:
            assert f"-{key}" in help_text, f"help.txt must list -{key}: use game.options_help()"
    for raw in bad_options:
        try:
            game.parse_options(raw, game.min_players)
        except OptionError as error:
            assert str(error)
        else:
            raise AssertionError(f"parse_options accepted {raw!r}")


def random_game(
    game: BaseGame, options: Options, players: int, seed: int, max_plies: int = 2000
) -> tuple[list[str], State]:
    """Play random legal moves until the game ends or max_plies: (move texts, final state)."""
    rng = random.Random(seed)
    state = game.initial_state(options, players, seed)
    moves: list[str] = []
    while len(moves) < max_plies:
        seat = game.to_move(state)
        if seat is None:
            break
        legal = list(game.legal_moves(state, seat))
        if not legal:
            forced = game.forced_move(state)
            assert forced is not None, "a player on move must have a legal move or a forced one"
            legal = [forced]
        move = rng.choice(legal)
        state = game.apply_move(state, seat, move)
        moves.append(move)
    return moves, state
