"""Record tests/engine_traces.jsonl.gz from the engines frozen before issue 21
(tests/reference_engines/): the games the differential tests played against them, each ply's
legal moves and state as a digest, the move played and the outcome (the format is in the
docstring of tests/test_engine_differential.py). Run once, before the frozen engines went:
.venv/bin/python tools/record_engine_traces.py"""

import gzip
import hashlib
import itertools
import json
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys._called_from_test = True  # the games are registered by hand, as under the tests

import tests.conftest  # noqa: F401 (registers the games)
from pbm.engine import ContractEngine
from tests.reference_engines import GAME_NAMES, reference_game, variants

TRACES = ROOT / "tests" / "engine_traces.jsonl.gz"
PLY_LIMIT = 3000
GAMES_PER_GAME = 60  # the differential test's, spread over a game's variants
KNIGHTPANIC_GAMES_PER_VARIANT = 10  # tests/test_knightpanic_engine.py's
KNIGHTPANIC_SWITCHES = ("mover_loses", "win_no_move")


def ply_digest(listed: list[str], state, size: int = 2) -> str:
    """tests/test_engine_differential.py's."""
    text = json.dumps([listed, state], sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=size).hexdigest()


def knightpanic_variants():
    """tests/test_knightpanic_engine.py's: every size, 2D and 3D, each set of switches."""
    for size, three_d, switches in itertools.product(
        (4, 5, 6, 7),
        (False, True),
        itertools.chain.from_iterable(
            itertools.combinations(KNIGHTPANIC_SWITCHES, count) for count in range(3)
        ),
    ):
        yield {
            "size": str(size),
            **({"3d": True} if three_d else {}),
            **dict.fromkeys(switches, True),
        }


def record(reference, options, players, seed, rng) -> dict:
    """One random game on the frozen engine, as the differential tests played it."""
    engine = ContractEngine(reference, reference.initial_state(options, players, seed))
    moves, digests = [], []
    for _ in range(PLY_LIMIT):
        if engine.to_move() is None:
            break
        listed = sorted(engine.legal_moves())
        digests.append(ply_digest(listed, engine.state()))
        text = rng.choice(listed)
        moves.append(listed.index(text))
        engine.play(text)
    outcome = engine.outcome()
    return {
        "seed": seed,
        "moves": moves,
        "digests": "".join(digests),
        "outcome": None if outcome is None else [list(outcome.winners), outcome.reason],
        "state": ply_digest([], engine.state(), 8),
    }


def differential_games():
    """tests/test_engine_differential.py's games: every variant, from its own seeded rng."""
    for name in GAME_NAMES:
        reference = reference_game(name)
        count = max(1, GAMES_PER_GAME // len(variants(reference)))
        for raw, players in variants(reference):
            rng = random.Random(f"{name}{raw}{players}")
            options = reference.parse_options(raw, players)
            for _ in range(count):
                yield (
                    name,
                    raw,
                    players,
                    record(reference, options, players, rng.randrange(10**9), rng),
                )


def knightpanic_games():
    """tests/test_knightpanic_engine.py's: every board size, 2D and 3D, every switch."""
    reference = reference_game("knightpanic")
    for raw in knightpanic_variants():
        rng = random.Random(f"knightpanic{raw}")
        options = reference.parse_options(raw, 2)
        for _ in range(KNIGHTPANIC_GAMES_PER_VARIANT):
            yield "knightpanic", raw, 2, record(reference, options, 2, rng.randrange(10**9), rng)


def main():
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    variants_seen: dict[tuple, dict] = {}
    for name, raw, players, game in [*differential_games(), *knightpanic_games()]:
        key = (name, json.dumps(raw, sort_keys=True), players)
        variant = variants_seen.setdefault(
            key, {"game": name, "raw": raw, "players": players, "games": []}
        )
        variant["games"].append(game)
    about = {
        "recorded_by": "tools/record_engine_traces.py",
        "from": f"tests/reference_engines/ at commit {commit}",
        "digest": "blake2b of the JSON of [sorted legal move texts, state], 2 bytes a ply",
    }
    lines = [json.dumps(about)] + [
        json.dumps(variant, separators=(",", ":")) for variant in variants_seen.values()
    ]
    # mtime 0: recording again gives the same bytes
    with (
        open(TRACES, "wb") as raw_file,
        gzip.GzipFile(fileobj=raw_file, mode="wb", compresslevel=9, mtime=0) as out,
    ):
        out.write(("\n".join(lines) + "\n").encode())
    plies = sum(len(g["moves"]) for v in variants_seen.values() for g in v["games"])
    games = sum(len(v["games"]) for v in variants_seen.values())
    print(f"{TRACES.name}: {len(variants_seen)} variants, {games} games, {plies} plies")


if __name__ == "__main__":
    main()
