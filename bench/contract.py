"""Random playouts through the JSON plugin contract (issue 31 item 4), for one checkout.

    python bench/contract.py --root CHECKOUT --variants JSON --seeds A:B

Plays one random game from each seed of each variant through the plugin contract as every
outside plugin and every move of the server use it: `legal_moves`, `forced_move`,
`can_pass` and `apply_move` on JSON states, `to_move` between plies (ContractEngine's
steps, written out here so that a checkout older than pbm/engine.py runs them too). It
imports the games of CHECKOUT only (4f8799b had one module a game, today one package a
game: both are `games.<name>`), and prints, as JSON, each variant's CPU seconds
(time.process_time), games and plies. bench/bench.py's section `contract` runs it for this
checkout and the base alternately and compares (contract_speed).
"""

import argparse
import importlib
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path


def load_game(name: str):
    module = importlib.import_module(f"games.{name}")
    found = []
    module.register_games(found.append)
    return found[0]


def playout(game, options, players, seed, rng) -> int:
    """One random game through the contract; the plies it lasted."""
    state = game.initial_state(options, players, seed)
    plies = 0
    while True:
        seat = game.to_move(state)
        if seat is None:
            return plies
        moves = list(game.legal_moves(state, seat))
        if not moves:
            forced = game.forced_move(state)
            if forced is not None:
                moves = [forced]
        if "pass" not in moves and game.can_pass(state, seat):
            moves.append("pass")
        state = game.apply_move(state, seat, rng.choice(moves))
        plies += 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--variants", required=True, help="JSON: [[game, raw options, players]]")
    parser.add_argument("--seeds", required=True, help="first:last (last excluded)")
    args = parser.parse_args()
    sys.path.insert(0, args.root)
    first, last = (int(n) for n in args.seeds.split(":"))
    figures = []
    for name, raw, players in json.loads(args.variants):
        game = load_game(name)
        options = game.parse_options(raw, players)
        rng = random.Random(f"{name}{sorted(raw.items())}{first}")
        playout(game, options, players, first - 1, random.Random(0))  # the per-size tables
        plies = 0
        start = time.process_time()
        for seed in range(first, last):
            plies += playout(game, options, players, seed, rng)
        figures.append(
            {"seconds": time.process_time() - start, "games": last - first, "plies": plies}
        )
    for package in ("pbm", "games"):
        assert sys.modules[package].__file__.startswith(args.root), (
            f"{package} not from {args.root}"
        )
    print(json.dumps(figures))


def contract_speed(report, variants, rounds: int, seeds: str, base: Path | None) -> None:
    """Section `contract` of bench/bench.py: this checkout's plugin contract next to the
    base checkout's, the same seeded games (their plies must agree: the same rules), the
    two run alternately `rounds` times in fresh processes; the median of each variant."""
    roots = {"this": Path(__file__).resolve().parent.parent} | ({"base": base} if base else {})
    runs: dict[str, list] = {name: [] for name in roots}
    for _ in range(rounds):
        for name, root in roots.items():
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--root",
                    str(root),
                    "--variants",
                    json.dumps(variants),
                    "--seeds",
                    seeds,
                ],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            runs[name].append(json.loads(out))
    for index, (game, raw, players) in enumerate(variants):
        shown = ", ".join(k if v is True else f"{k}={v}" for k, v in raw.items()) or "defaults"
        label = f"contract playouts, {game} {shown}, {players} players (median of {rounds})"
        plies = runs["this"][0][index]["plies"]
        mine = statistics.median(run[index]["seconds"] for run in runs["this"]) / plies * 1e6
        if not base:
            report(label, f"{mine:.1f} us/ply")
            continue
        assert runs["base"][0][index]["plies"] == plies, f"{label}: the base played other games"
        theirs = statistics.median(run[index]["seconds"] for run in runs["base"]) / plies * 1e6
        report(label, f"{mine:.1f} us/ply", f"base {theirs:.1f} us/ply", f"{mine / theirs:.2f}")


if __name__ == "__main__":
    main()
