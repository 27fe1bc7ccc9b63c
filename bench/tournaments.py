"""Tournaments (docs/spec/server.md §11.9): what a tournament's start costs, and what being
a tournament's board costs a move, each beside a reference measured in the same run.

1. The start of a tournament of N players, largest division 10 (every board of every
   division at once, one mail per player, delivered to the Maildir), as cleanup runs it in
   one transaction: CPU and wall time per board started, next to `challenge` commands
   (one board each, with its two new-board mails) on the same home.
2. A move on a tournament's board (its board mails name the tournament) next to the same
   move on a board of no tournament, the same game, players and position, alternating: CPU
   per move in process, authorised as a robot's move is (no argon2), its mails delivered.
"""

import statistics
import time
from pathlib import Path

from click.testing import CliRunner
from fixtures import LIMITS

from pbm.cli import cli
from pbm.config import Config
from pbm.dispatch import open_server
from pbm.mailin import build_request
from pbm.replies import TOKEN_PASSWORD, Grant
from pbm.security import hash_password
from pbm.store import Store
from pbm.testing import random_game

GAME, SIZE = "lox", 13
AT = "2026-01-01T00:00:00Z"


def _home(path: Path, users: int) -> Config:
    result = CliRunner().invoke(cli, ["--home", str(path), "init"])
    assert result.exit_code == 0, result.output
    (path / "pbm.ini").write_text(LIMITS + "[mail]\nhtml = off\n")
    config = Config.load(path)
    store = Store.open(config.db_path)
    stored = hash_password("secret")
    with store.write():
        for i in range(users):
            store.users.create(f"p{i:03d}", stored, [f"p{i:03d}@bench.example"], AT)
            store.limits.add_address_proof(f"p{i:03d}", f"p{i:03d}@bench.example", AT)
    store.close()
    return config


def _run(config, text):
    with open_server(config) as server:
        result = server.execute(build_request(text, "", None))
    assert result.ok, [m.body for m in result.printed]
    return result


def _timed(work) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of work()."""
    cpu, wall = time.process_time(), time.perf_counter()
    work()
    return time.process_time() - cpu, time.perf_counter() - wall


def _start(config, players: int) -> tuple[float, float, int]:
    """The start of a tournament of `players` who have joined: (CPU, wall, boards)."""
    from pbm import tournamentplay

    _run(config, f"tournament create bench {GAME} -size={SIZE} --start=2099-01-01")
    store = Store.open(config.db_path)
    with store.write():
        record = store.tournaments.get("bench")
        for i in range(players):
            store.tournaments.add_entrant(record.id, f"p{i:03d}", AT)
    store.close()
    with open_server(config) as server:
        record = server.store.tournaments.get("bench")
        cpu, wall = _timed(lambda: server.run_step(lambda ctx: tournamentplay.start(ctx, record)))
        boards = len(server.store.tournaments.boards(record.id))
    return cpu, wall, boards


def _challenges(config, count: int) -> tuple[float, float]:
    def work():
        for i in range(count):
            _run(config, f"{GAME} challenge p{2 * i:03d} p{2 * i + 1:03d} -size={SIZE}")

    return _timed(work)


def _moves(config, numbers: dict[str, int], plies: int) -> dict[str, list[float]]:
    """CPU per move on each board (by label), the same random game's moves, alternating."""
    from pbm import plugins

    game = plugins.load_game(GAME)
    options = game.parse_options({"size": str(SIZE)}, 2)
    moves = []
    for seed in range(500):
        moves, _ = random_game(game, options, 2, seed, max_plies=plies)
        if len(moves) == plies and "pass" not in moves:
            break
    seats = ["p000", "p001"]
    times: dict[str, list[float]] = {label: [] for label in numbers}
    with open_server(config) as server:
        for ply, move in enumerate(moves, start=1):
            userid = seats[(ply - 1) % 2]
            for label, number in numbers.items():
                text = f"{GAME} move {number} {userid} {TOKEN_PASSWORD} {move}#{ply}"
                grant = Grant(GAME, number, userid, ply)
                cpu = time.process_time()
                result = server.execute_for_robot(text, grant)
                times[label].append(time.process_time() - cpu)
                assert result.ok, [m.body for m in result.printed]
    return times


def tournaments(report, quick: bool, work: Path):
    players = 30 if quick else 100
    config = _home(work / "tournament-home", max(players, 200))
    cpu, wall, boards = _start(config, players)
    challenges = 20 if quick else 60
    ref_cpu, ref_wall = _challenges(config, challenges)
    per_board, ref_per_board = cpu / boards, ref_cpu / challenges
    report(
        f"tournaments: start of {players} players ({boards} boards, {players} mails), CPU "
        "per board",
        f"{per_board * 1000:.2f} ms ({cpu:.2f} s CPU, {wall:.2f} s wall in all)",
        f"a challenge command per board: {ref_per_board * 1000:.2f} ms CPU "
        f"({ref_wall / challenges * 1000:.1f} ms wall)",
        f"{per_board / ref_per_board:.2f}",
    )
    # p000 holds White on the tournament's board p000-p001; the same pair's own board.
    store = Store.open(config.db_path)
    record = store.tournaments.get("bench")
    ours = next(
        b for b in store.tournaments.boards(record.id) if (b.white, b.black) == ("p000", "p001")
    )
    store.close()
    result = _run(config, f"{GAME} challenge p000 p001 -size={SIZE}")
    plain = int(result.queued[0][1].subject.split()[2].rstrip(":"))
    times = _moves(config, {"tournament": ours.number, "plain": plain}, 30 if quick else 80)
    tagged, untagged = statistics.median(times["tournament"]), statistics.median(times["plain"])
    report(
        "tournaments: CPU per move on a tournament's board (median)",
        f"{tagged * 1000:.2f} ms",
        f"on a board of no tournament: {untagged * 1000:.2f} ms",
        f"{tagged / untagged:.2f}",
    )
