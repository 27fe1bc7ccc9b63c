"""The game engines keep the rules exactly (issue 21): seeded random games of every game and
variant, replayed on today's engines, list at every ply the same moves and reach the same
states and outcomes as the engines frozen before the fast engines were written did.

What those frozen engines did is kept as traces (tests/engine_traces.jsonl.gz), not as their
code (2,800 lines). They were recorded once, by tools/record_engine_traces.py at commit
d521608 ("Golden traces of the frozen engines"), where the frozen engines still are in
tests/reference_engines/: check that commit out and run the script to record them again.
They hold the very games the differential tests played against those engines: in every
variant (the defaults, each number option at its extremes, each flag or switch, each
extreme with each of them, for every number of players) 60 games a game, and 10 in each
of Knight Panic's 32 variants (every size, 2D and 3D, each set of switches).

The file's first line says where it comes from; every further line is one variant, {"game",
"raw" (the challenge options), "players", "games"}, and each game {"seed", "moves" (the
index of the move played in the sorted list of legal move texts, ply by ply), "digests"
(4 hex digits a ply: ply_digest of that list and the state before the move), "outcome"
([winners, reason], or null after PLY_LIMIT plies), "state" (16 hex digits: the last state)}.

At every ply the fast engine (game.engine) and the plugin contract (ContractEngine over the
game) must list the same moves and reach the same states, and both must match the digest.
New random games, one in every variant (`make stress`: 2,000 a game), hold the engines'
bookkeeping: an engine played on must agree with the contract, which rebuilds one from the
JSON state at every ply.
"""

import gzip
import hashlib
import json
import os
import random
from functools import cache

import pytest

from pbm.engine import ContractEngine
from pbm.plugins import get_games
from tests.conftest import ROOT

TRACES = ROOT / "tests" / "engine_traces.jsonl.gz"
PLY_LIMIT = 3000
RANDOM_GAMES_PER_GAME = 2000 if os.environ.get("PBM_STRESS") else 1


def ply_digest(listed: list[str], state, size: int = 2) -> str:
    """The digest of a position: its sorted legal move texts and its JSON state."""
    text = json.dumps([listed, state], sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=size).hexdigest()


@cache
def variants() -> list[dict]:
    with gzip.open(TRACES, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in list(lines)[1:]]


def variant_id(variant) -> str:
    options = "-".join(k if v is True else f"{k}={v}" for k, v in variant["raw"].items())
    return f"{variant['game']}-{variant['players']}p-{options or 'defaults'}"


@pytest.mark.parametrize("variant", variants(), ids=variant_id)
def test_the_engines_replay_the_frozen_engines_games(variant):
    game = get_games()[variant["game"]]
    options = game.parse_options(variant["raw"], variant["players"])
    for recorded in variant["games"]:
        state = game.initial_state(options, variant["players"], recorded["seed"])
        replay(game, state, recorded)


def replay(game, state, recorded):
    fast, contract = game.engine(state), ContractEngine(game, state)
    digests = recorded["digests"]
    for ply, index in enumerate(recorded["moves"]):
        where = f"seed {recorded['seed']}, ply {ply}"
        assert fast.to_move() == contract.to_move() is not None, where
        moves = {fast.move_text(move): move for move in fast.legal_moves()}
        listed = sorted(moves)
        assert sorted(contract.legal_moves()) == listed, f"{where}: the contract differs"
        assert ply_digest(listed, fast.state()) == digests[4 * ply : 4 * ply + 4], (
            f"{where}: the legal moves or the state differ from the frozen engine's; "
            f"the engine lists {len(listed)} moves: {', '.join(listed[:20])}"
        )
        text = listed[index]
        fast.play(moves[text])
        contract.play(text)
        assert fast.state() == contract.state(), f"{where}: {text}"
    outcome = fast.outcome()
    assert outcome == contract.outcome()
    shown = None if outcome is None else [list(outcome.winners), outcome.reason]
    assert shown == recorded["outcome"], f"seed {recorded['seed']}: the outcome differs"
    assert ply_digest([], fast.state(), 8) == recorded["state"]


@pytest.mark.parametrize("name", sorted({variant["game"] for variant in variants()}))
def test_the_engines_bookkeeping_holds_in_new_random_games(name):
    game = get_games()[name]
    own = [variant for variant in variants() if variant["game"] == name]
    for variant in own:
        rng = random.Random(variant_id(variant))
        options = game.parse_options(variant["raw"], variant["players"])
        for _ in range(max(1, RANDOM_GAMES_PER_GAME // len(own))):
            state = game.initial_state(options, variant["players"], rng.randrange(10**9))
            play_alongside(game, state, rng)


def play_alongside(game, state, rng):
    fast, contract = game.engine(state), ContractEngine(game, state)
    for ply in range(PLY_LIMIT):
        assert fast.to_move() == contract.to_move(), f"ply {ply}"
        if fast.to_move() is None:
            break
        moves = {fast.move_text(move): move for move in fast.legal_moves()}
        listed = sorted(moves)
        assert sorted(contract.legal_moves()) == listed, f"ply {ply}: the contract differs"
        text = rng.choice(listed)
        fast.play(moves[text])
        contract.play(text)
        assert fast.state() == contract.state(), f"ply {ply}: {text}"
    assert fast.outcome() == contract.outcome()
