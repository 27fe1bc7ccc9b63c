"""`make bench` section 4: every game's engine against its plugin contract, on the same
seeded random games in the same run.

Figures per game and variant: random playouts a second through the search contract
(game.engine, played in place) next to the same playouts through the plugin contract
(ContractEngine over the game, a new JSON state a ply: what a game without an engine of its
own is searched through), and the time to list the legal moves of the positions met at ply
18 of those games (or the last before the end of a shorter one), next to the contract
listing the same positions. After the hex connection games (KnightVision, Lox), the
compiled reference: OpenSpiel's Hex (the `open_spiel` wheel, the `bench` extra that `make
bench` installs) playing random games on the same board sizes through its Python API.

Until issue 26 the reference was the engines frozen before issue 21; the figures of
docs/performance.md dated 2026-11-22 are against those. They are gone (their games are kept
as traces, tests/test_engine_differential.py).
"""

import gc
import random
import time

from pbm.engine import ContractEngine
from pbm.game import Flag, Number, Switch
from pbm.plugins import get_games

LISTING_PLY = 18  # where issue 21 compared Knight Line's listing with AbstractPlay's
HEX_CONNECTION_GAMES = ("knightvision", "lox")


def random_game(engine, rng, positions):
    """Play to the end, keeping a copy of the position at LISTING_PLY (or the last before
    the end, in a shorter game) in positions."""
    plies, kept = 0, None
    while engine.to_move() is not None:
        if plies <= LISTING_PLY:
            kept = engine.copy()
        engine.play(rng.choice(engine.legal_moves()))
        plies += 1
    if kept is not None:
        positions.append(kept)


def playout_seconds(make_engine, seeds) -> tuple[float, list]:
    """The time to play one random game from each seed, and the positions met at ply 18."""
    rng, positions = random.Random(1), []
    start = time.perf_counter()
    for seed in seeds:
        random_game(make_engine(seed), rng, positions)
    return time.perf_counter() - start, positions


def listing_microseconds(positions, repeats) -> float:
    """The fastest of repeats rounds over the positions: a round a burst of load on a shared
    machine hit (they last longer than a round) says nothing about the engine."""
    gc.collect()  # the playouts' garbage would otherwise be collected on the clock of one side
    fastest = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for position in positions:
            position.legal_moves()
        fastest = min(fastest, time.perf_counter() - start)
    return fastest / len(positions) * 1e6


def variant_name(raw, players) -> str:
    shown = ", ".join(k if v is True else f"{k}={v}" for k, v in raw.items()) or "defaults"
    return f"{shown}, {players} players"


def largest(game) -> list[tuple[dict, int]]:
    """Every number option at its highest, for the most players: alone, and with each flag
    or switch on."""
    highest = {
        option.name: str(max(option.choices or (option.high,)))
        for option in game.options
        if isinstance(option, Number)
    }
    toggles = [
        {option.on if isinstance(option, Switch) else option.name: True}
        for option in game.options
        if isinstance(option, Flag | Switch)
    ]
    return [({**highest, **toggle}, game.max_players) for toggle in [{}, *toggles]]


def engines(report, quick: bool):
    for name, game in get_games().items():
        variants = largest(game) + [({}, game.min_players)]
        for raw, players in variants:
            compare(report, game, raw, players, quick)
        if name in HEX_CONNECTION_GAMES:
            sizes = {game.parse_options(raw, players)["size"] for raw, players in variants}
            for size in sorted(sizes):
                openspiel_hex(report, size, quick)


def openspiel_hex(report, size: int, quick: bool):
    """OpenSpiel's Hex, random games on a size x size board, as the compiled reference."""
    label = f"OpenSpiel hex random playouts (board_size={size}), compiled reference"
    try:
        import pyspiel
    except ImportError:
        report(
            label,
            "not measured: the open_spiel wheel is not installed",
            "install it with `.venv/bin/pip install -e '.[bench]'` (make bench does)",
        )
        return
    game = pyspiel.load_game("hex", {"board_size": size})
    rng = random.Random(1)
    count = 10 if quick else 100
    start = time.perf_counter()
    for _ in range(count):
        state = game.new_initial_state()
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
    report(label, f"{count / (time.perf_counter() - start):.1f}/s")


def compare(report, game, raw, players, quick):
    count = 4 if quick else 20
    options = game.parse_options(raw, players)
    first = random.Random(f"{game.name}{raw}").randrange(10**9)
    seeds = [first + i for i in range(count)]

    def contract(seed):
        return ContractEngine(game, game.initial_state(options, players, seed))

    def engine(seed):
        return game.engine(game.initial_state(options, players, seed))

    # One game each off the clock: the first builds the per-size tables both sides cache.
    playout_seconds(contract, seeds[:1])
    playout_seconds(engine, seeds[:1])
    # Interleaved halves, so that a burst of load on the machine hits both alike.
    contract_seconds = engine_seconds = 0.0
    contract_at, engine_at = [], []
    for half in (seeds[: count // 2], seeds[count // 2 :]):
        seconds, at = playout_seconds(contract, half)
        contract_seconds, contract_at = contract_seconds + seconds, contract_at + at
        seconds, at = playout_seconds(engine, half)
        engine_seconds, engine_at = engine_seconds + seconds, engine_at + at
    label = variant_name(raw, players)
    report(
        f"{game.name} random playouts ({label})",
        f"{count / engine_seconds:.1f}/s",
        f"plugin contract {count / contract_seconds:.1f}/s",
        f"{contract_seconds / engine_seconds:.1f}x",
    )
    if contract_at and engine_at:
        repeats = 3 if quick else 20
        contract_listing = listing_microseconds(contract_at, repeats)
        engine_listing = listing_microseconds(engine_at, repeats)
        report(
            f"{game.name} legal-move listing at ply {LISTING_PLY} ({label})",
            f"{engine_listing:.1f} µs",
            f"plugin contract {contract_listing:.1f} µs",
            f"{contract_listing / engine_listing:.1f}x",
        )
