"""Board mails with pictures (docs/spec/server.md §11.5): the CPU time of a move, its board
mails included, when every player has `html on`, next to the same game with `html off` (the
reference), in the same run, on the largest board of each game.

1. In one process, as `pbm serve` runs moves: time.process_time around the dispatcher, per
   move, the password check (argon2) included as in every real move.
2. Through mail_handler.py, one fresh process per move as an MTA runs it: the CPU time of
   the child processes (user + system), where the first picture of a process pays for
   importing Pillow.
"""

import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from email.message import EmailMessage
from pathlib import Path

from click.testing import CliRunner
from fixtures import LIMITS

from pbm.cli import cli
from pbm.config import Config
from pbm.dispatch import open_server
from pbm.mailin import build_request
from pbm.position import replay

ROOT = Path(__file__).resolve().parent.parent
USERS = ("white", "black", "third")

# (label, game, challenge options, players, plies played before the measured ones):
# Knight Line only late in a game, when the occupied area is largest.
LARGEST = [
    ("KnightVision 14x14", "knightvision", "-size=14", 2, 0),
    ("Lox 19x19 -control", "lox", "-size=19 -control", 2, 0),
    ("Uknight base 7", "uknight", "-size=7", 2, 0),
    ("Knight Panic 7x7 2D", "knightpanic", "-size=7", 2, 0),
    ("Knight Panic 7x7 3D", "knightpanic", "-size=7 -3d", 2, 0),
    ("Knight Line 3 players, 30 tiles, after ply 40", "knightline", "-stack=30", 3, 40),
]


def new_home(path: Path, html: str) -> Config:
    if path.exists():
        shutil.rmtree(path)
    result = CliRunner().invoke(cli, ["--home", str(path), "init"])
    assert result.exit_code == 0, result.output
    (path / "pbm.ini").write_text(LIMITS + f"[mail]\nhtml = {html}\n")
    return Config.load(path)


def run(config, text, sender):
    with open_server(config) as server:
        result = server.execute(build_request(text, "", sender))
    assert result.ok, [m.body for _, m in result.queued]
    return result


def start_board(config, game_name, options, players):
    userids = USERS[:players]
    for userid in userids:
        run(config, f"signup {userid} secret {userid}@bench.example", f"{userid}@bench.example")
    run(config, f"{game_name} challenge {' '.join(userids)} {options}", "white@bench.example")


def next_move(config, game_name, rng):
    """(userid, move) of a seeded random legal move on board 101; None when the game is over."""
    with open_server(config) as server:
        game = server.games[game_name]
        row = server.store.boards.get(game_name, 101)
        holders = server.store.boards.seat_userids(row.id)
        plies = server.store.boards.plies(row.id)
    position = replay(game, json.loads(row.options), holders, row.seed, plies)
    seat = position.to_move()
    if row.status != "active" or seat is None:
        return None
    moves = sorted(game.legal_moves(position.state, seat))
    if not moves:
        return None
    return position.holders[seat], moves[rng.randrange(len(moves))]


def move_text(game_name, userid, move):
    return f"{game_name} move 101 {userid} secret {move}"


def in_process(work: Path, game_name, options, players, before, measured) -> dict:
    """Mean CPU ms of one move with html off and on, over the same number of moves."""
    means = {}
    for html in ("off", "on"):
        config = new_home(work / f"{game_name}-{html}", html)
        start_board(config, game_name, options, players)
        rng = random.Random(18)
        costs = []
        for ply in range(before + measured):
            found = next_move(config, game_name, rng)
            if found is None:
                break
            userid, move = found
            sender = f"{userid}@bench.example"
            request = build_request(move_text(game_name, userid, move), "", sender)
            start = time.process_time()
            with open_server(config) as server:
                result = server.execute(request)
            spent = time.process_time() - start
            assert result.ok, [m.body for _, m in result.queued]
            if ply >= before:
                costs.append(spent)
        means[html] = (statistics.mean(costs) * 1000, len(costs))
    return means


def mail_bytes(sender, subject, number) -> bytes:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = "pbm@localhost"
    message["Subject"] = subject
    message["Message-ID"] = f"<htmlmail-{number}-{random.random()}@bench.example>"
    message.set_content("bench")
    return message.as_bytes()


def through_the_pipe(work: Path, moves: int) -> dict:
    """Mean child CPU ms of one Lox 19x19 move mail through mail_handler.py, html off and on."""
    means = {}
    for html in ("off", "on"):
        config = new_home(work / f"pipe-{html}", html)
        start_board(config, "lox", "-size=19 -control", 2)
        env = dict(os.environ, PBM_HOME=str(config.home), PYTHONPATH=str(ROOT))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        rng = random.Random(18)
        costs = []
        for number in range(moves):
            userid, move = next_move(config, "lox", rng)
            raw = mail_bytes(
                f"{userid}@bench.example",
                move_text("lox", userid, move) + "#" + str(number + 1),
                number,
            )
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(
                [sys.executable, str(ROOT / "mail_handler.py")],
                input=raw,
                env=env,
                cwd=ROOT,
                check=True,
            )
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            costs.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        means[html] = statistics.mean(costs) * 1000
    return means


def html_mail(report, quick):
    import tempfile

    measured = 6 if quick else 30
    with tempfile.TemporaryDirectory(prefix="pbm-bench-htmlmail-") as tmp:
        work = Path(tmp)
        for label, game_name, options, players, before in LARGEST:
            means = in_process(work, game_name, options, players, before, measured)
            (on, count), (off, _) = means["on"], means["off"]
            report(
                f"move with board pictures in its mails, {label} (CPU, mean of {count})",
                f"{on:.1f} ms",
                f"html off {off:.1f} ms",
                f"{on / off:.2f}x",
            )
        piped = through_the_pipe(work, 5 if quick else 20)
        report(
            "move mail through mail_handler.py with pictures, Lox 19x19 (child CPU, mean)",
            f"{piped['on']:.1f} ms",
            f"html off {piped['off']:.1f} ms",
            f"{piped['on'] / piped['off']:.2f}x",
        )
