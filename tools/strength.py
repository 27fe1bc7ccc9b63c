"""`make strength`: the robots' measured strength (docs/robots.md). Seeded matches of each
game's registered robot against a uniformly random player, against a one-ply greedy player
(takes a win, avoids an immediate loss) and against itself with a tenth of the budget; the
4x4 Knight Panic check (flat and 3D) against the exhaustive solve
(games/knightpanic/solver.py); and the robot's move times on the largest board of each game
against its budget plus 10%. Not part of `make test`: every variant takes hours, one a few
minutes. Prints a Markdown report (docs/robots.md holds the measured rows)."""

import argparse
import math
import random
import sys
import time
import zlib
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import games.knightline  # noqa: E402
import games.knightpanic  # noqa: E402
import games.knightvision  # noqa: E402
import games.lox  # noqa: E402
import games.uknight  # noqa: E402
from games.knightpanic import solver  # noqa: E402
from pbm.robots.mcts import Budget, immediate_win, is_safe  # noqa: E402

MODULES = {
    "knightline": games.knightline,
    "knightpanic": games.knightpanic,
    "knightvision": games.knightvision,
    "lox": games.lox,
    "uknight": games.uknight,
}
# (game, options, seats): the variants the matches are played on, every size and rule
# variant of every game; `--only` picks some. One game's rows stand apart from the next's.
VARIANTS = [
    ("knightpanic", {"size": 4}, 2),
    ("knightpanic", {"size": 5}, 2),
    ("knightpanic", {"size": 6}, 2),
    ("knightpanic", {"size": 7}, 2),
    ("knightpanic", {"size": 5, "mover_loses": True}, 2),
    ("knightpanic", {"size": 4, "3d": True}, 2),
    ("knightpanic", {"size": 5, "3d": True}, 2),
    ("knightpanic", {"size": 6, "3d": True}, 2),
    ("knightpanic", {"size": 7, "3d": True}, 2),
    ("knightpanic", {"size": 4, "3d": True, "win_no_move": True}, 2),
    #
    ("knightline", {}, 2),
    ("knightline", {}, 3),
    ("knightline", {"blocker": True}, 2),
    ("knightline", {"wildcard": True}, 3),
    ("knightline", {"stack": 10}, 2),
    ("knightline", {"stack": 30}, 3),
    #
    ("knightvision", {"size": 9}, 2),
    ("knightvision", {"size": 11}, 2),
    ("knightvision", {"size": 14}, 2),
    #
    ("lox", {"size": 9}, 2),
    ("lox", {"size": 11}, 2),
    ("lox", {"size": 15}, 2),
    ("lox", {"size": 19}, 2),
    #
    ("uknight", {"size": 5}, 2),
    ("uknight", {"size": 6}, 2),
    ("uknight", {"size": 7}, 2),
]
LARGEST = [
    ("knightpanic", {"size": 7, "3d": True}, 2),
    ("knightline", {"stack": 30}, 3),
    ("knightvision", {"size": 14}, 2),
    ("lox", {"size": 19}, 2),
    ("uknight", {"size": 7}, 2),
]
MAX_PLIES = 300  # Knight Panic has no move limit; a longer game counts as a draw


OPPONENTS = ("random", "greedy", "robot/10")


def chosen(variant: str, only: str) -> bool:
    wanted = [w.strip() for w in only.split(",") if w.strip()]
    if not wanted:
        return True
    return any(variant == w if w.endswith("p") else w in variant for w in wanted)


def game_and_robot(name):
    found = {}
    MODULES[name].register_games(lambda game: found.setdefault("game", game))
    MODULES[name].register_robots(lambda robot: found.setdefault("robot", robot))
    return found["game"], found["robot"]


def start(name, options, seats, seed):
    game, _ = game_and_robot(name)
    full = {**{o.name: o.default for o in game.options}, **options}
    return game.engine(game.initial_state(full, seats, seed))


def variant_name(name, options, seats) -> str:
    words = [f"{k}={v}" for k, v in options.items()]
    return " ".join([name, *words, f"{seats}p"])


# -- players: (engine, seats, rng) -> move ----------------------------------------------------


def random_player(engine, seats, rng):
    moves = engine.legal_moves()
    return moves[rng.randrange(len(moves))]


def greedy_player(engine, seats, rng):
    moves = engine.legal_moves()
    winning = immediate_win(engine, moves)
    if winning is not None:
        return winning
    safe = [move for move in moves if is_safe(engine, move, None)]
    choices = safe or moves
    return choices[rng.randrange(len(choices))]


def robot_player(name, playouts):
    _, robot = game_and_robot(name)

    def play(engine, seats, rng):
        return robot.choose(engine, seats, Budget(playouts=playouts), rng).move

    return play


def play_game(task):
    """One seeded game; returns (robot's result: 1 win, 0.5 shared/draw, 0 loss, plies,
    the positions where the robot was on move with its move, for the 4x4 check)."""
    name, options, seats, robot_seat, robot_playouts, opponent, seed = task
    engine = start(name, options, seats, seed)
    rng = random.Random(seed)
    robot = robot_player(name, robot_playouts)
    other = {
        "random": random_player,
        "greedy": greedy_player,
        "robot/10": robot_player(name, max(1, robot_playouts // 10)),
    }[opponent]
    record = []
    plies = 0
    while engine.outcome() is None and plies < MAX_PLIES:
        seat = engine.to_move()
        if seat == robot_seat:
            move = robot(engine, seats, rng)
            if name == "knightpanic" and options["size"] == 4:
                record.append((engine.copy(), move))
        else:
            move = other(engine, seats, rng)
        engine.play(move)
        plies += 1
    outcome = engine.outcome()
    if outcome is None or not outcome.winners:
        score = 0.5
    elif outcome.winners == (robot_seat,):
        score = 1.0
    elif robot_seat in outcome.winners:
        score = 0.5
    else:
        score = 0.0
    return score, plies, [(e.state(), m) for e, m in record]


def _indexed_game(pair):
    index, task = pair
    return index, play_game(task)


def wilson(wins: float, games: int, z: float = 1.96) -> tuple[float, float]:
    if games == 0:
        return 0.0, 1.0
    p = wins / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return max(0.0, centre - half), min(1.0, centre + half)


# -- the 4x4 Knight Panic check ------------------------------------------------------------


def solved_verdict(state, move) -> tuple[int, int]:
    """The exhaustive solve's value of a 4x4 position for the robot on move (+1 won, 0 drawn,
    -1 lost) and that of the position its move left it (an ended game counts as won or
    lost)."""
    game, _ = game_and_robot("knightpanic")
    engine = game.engine(state)
    seat = engine.to_move()
    before = solver.value(engine)
    after = engine.copy()
    after.play(move)
    outcome = after.outcome()
    if outcome is not None:
        kept = 1 if outcome.winners == (seat,) else -1
    else:
        kept = -solver.value(after)
    return (before > 0) - (before < 0), (kept > 0) - (kept < 0)


# -- move times on the largest boards --------------------------------------------------------


def move_times(task):
    name, options, seats, seconds, seed = task
    _, robot = game_and_robot(name)
    engine = start(name, options, seats, seed)
    rng = random.Random(seed)
    times = []
    for ply in range(12):
        if engine.outcome() is not None:
            break
        if ply % 4 == 0:
            started = time.perf_counter()
            move = robot.choose(engine, seats, Budget(seconds=seconds), rng).move
            times.append(time.perf_counter() - started)
        else:
            move = random_player(engine, seats, rng)
        engine.play(move)
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=10, help="games per side and match")
    parser.add_argument("--playouts", type=int, default=100, help="the robot's budget")
    parser.add_argument("--seconds", type=float, default=1.0, help="budget of the timing run")
    parser.add_argument("--seed", type=int, default=2126)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated: the variants whose name contains one of these, or is exactly "
        "one of these when it ends in 'p' (e.g. 'knightpanic size=4 2p')",
    )
    parser.add_argument(
        "--opponents",
        default=",".join(OPPONENTS),
        help=f"comma-separated, of {', '.join(OPPONENTS)}",
    )
    parser.add_argument("--no-timing", action="store_true", help="skip the move-time run")
    args = parser.parse_args()
    began = time.time()
    variants = [v for v in VARIANTS if chosen(variant_name(*v), args.only)]
    largest = [] if args.no_timing else [v for v in LARGEST if chosen(variant_name(*v), args.only)]
    opponents = [o for o in args.opponents.split(",") if o]
    unknown = set(opponents) - set(OPPONENTS)
    if unknown:
        parser.error(f"no such opponent: {', '.join(sorted(unknown))}")
    tasks = []
    for name, options, seats in variants:
        for opponent in opponents:
            for robot_seat in range(seats):
                for game_number in range(args.games):
                    label = f"{args.seed}/{name}/{options}/{seats}/{opponent}/{robot_seat}"
                    seed = zlib.crc32(f"{label}/{game_number}".encode())
                    tasks.append((name, options, seats, robot_seat, args.playouts, opponent, seed))
    print(f"# Robot strength run: seed {args.seed}, robot budget {args.playouts} playouts a")
    print(f"move, {args.games} games per side and match, {args.workers} workers\n")
    with Pool(args.workers) as pool:
        results = [None] * len(tasks)
        indexed = pool.imap_unordered(_indexed_game, list(enumerate(tasks)))
        for done, (index, result) in enumerate(indexed, start=1):
            results[index] = result
            print(f"{done}/{len(tasks)} games, {time.time() - began:.0f}s", file=sys.stderr)
        timing = pool.map(
            move_times,
            [(n, o, s, args.seconds, args.seed + i) for i, (n, o, s) in enumerate(largest)],
        )
        checks, checked_variants = [], []
        for task, (_, _, record) in zip(tasks, results):
            checks.extend(record)
            checked_variants.extend([variant_name(*task[:3])] * len(record))
        verdicts = pool.starmap(solved_verdict, checks, chunksize=64)
    table = {}
    for task, (score, _, _) in zip(tasks, results):
        name, options, seats, robot_seat, _, opponent, _ = task
        key = (variant_name(name, options, seats), opponent, robot_seat)
        table.setdefault(key, []).append(score)
    print("| variant | opponent | robot's seat | games | robot's wins | draws | 95% interval |")
    print("|---|---|---|---|---|---|---|")
    for (variant, opponent, seat), scores in table.items():
        wins = sum(1 for s in scores if s == 1.0)
        draws = sum(1 for s in scores if s == 0.5)
        low, high = wilson(wins, len(scores))
        print(
            f"| {variant} | {opponent} | {seat + 1} | {len(scores)} | "
            f"{wins / len(scores):.0%} | {draws} | {low:.0%}–{high:.0%} |"
        )
    by_variant = {}
    for variant, verdict in zip(checked_variants, verdicts):
        by_variant.setdefault(variant, []).append(verdict)
    for variant, found in by_variant.items():
        won = [after for before, after in found if before == 1]
        drawn = [after for before, after in found if before == 0]
        print(
            f"\n{variant}, against the exhaustive solve: {len(found)} positions with the "
            f"robot on move; {len(won)} won, of which its move threw away "
            f"{sum(1 for after in won if after < 1)}; {len(drawn)} drawn, of which its move "
            f"lost {sum(1 for after in drawn if after < 0)}; {len(found) - len(won) - len(drawn)} "
            "lost already."
        )
    print(f"\nMove times with a budget of {args.seconds:g}s (limit {args.seconds * 1.1:.2f}s):\n")
    print("| largest board | moves timed | longest | mean | within budget + 10% |")
    print("|---|---|---|---|---|")
    for (name, options, seats), times in zip(largest, timing):
        if not times:
            continue
        longest = max(times)
        print(
            f"| {variant_name(name, options, seats)} | {len(times)} | {longest:.2f}s | "
            f"{sum(times) / len(times):.2f}s | {'yes' if longest <= args.seconds * 1.1 else 'NO'} |"
        )
    print(f"\nThe run took {time.time() - began:.0f}s.")


if __name__ == "__main__":
    main()
