"""`make bench`: pbm's speed, each figure printed next to a reference measured in the same run.

1. One `move` mail through mail_handler.py in a fresh process, next to `python -c pass`:
   the editable install of `make` and a regular `pip install .` into a temporary venv.
   Then CPU per accepted move on `pbm serve`'s writer path (bench/cpu_per_move.py) and the
   top of its profile.
2. `pbm serve` throughput of `move` mails sent over SMTP by another process, next to the
   raw rate of small SQLite write transactions on the same disk; argon2 reported apart.
3. Latency of `move` and `show` with 100,000 finished boards and 10,000 users, next to
   the same with 100 boards.
4. Every game: legal-move generation and random playouts per second from the start, and
   the slowest legal-move listing met in random playouts.

Options: --quick (smaller numbers, for a smoke run), --markdown FILE (write the figures),
--only SECTIONS, --base CHECKOUT (sections 1 and cpu: that checkout measured alongside).
"""

import argparse
import json
import os
import platform
import random
import shutil
import signal
import smtplib
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from email.message import EmailMessage
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from click.testing import CliRunner  # noqa: E402

from pbm.cli import cli  # noqa: E402

PBM = Path(sys.executable).parent / "pbm"
LIMITS = """[limits]
commands_per_hour = 100000000
signups_per_day = 100000000
challenges_per_day = 100000000
boards_per_user_per_day = 100000000
failed_logins_per_hour = 100000000
mails_per_user_per_day = 100000000
"""
RESULTS: list[tuple[str, str, str, str]] = []  # (section, figure, reference, ratio)


def report(section, figure, reference="", ratio=""):
    RESULTS.append((section, figure, reference, ratio))
    line = f"{section}: {figure}"
    if reference:
        line += f"   [reference: {reference}]"
    if ratio:
        line += f"   ratio {ratio}"
    print(line, flush=True)


def init_home(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    result = CliRunner().invoke(cli, ["--home", str(path), "init"])
    assert result.exit_code == 0, result.output
    (path / "pbm.ini").write_text(LIMITS)
    return path


def pbm(home, *words):
    result = CliRunner().invoke(cli, ["--home", str(home), *words])
    if result.exit_code not in (0, 1):
        raise RuntimeError(result.output)
    return result


GAME, SIZE = "lox", "13"  # Lox games run long enough for every measurement here


def move_script(plies, size=SIZE):
    """The first `plies` moves of a random Lox game that lasts at least that long."""
    import games.lox
    from pbm.testing import random_game

    game = games.lox.Lox()
    options = game.parse_options({"size": size}, 2)
    for seed in range(2000):
        moves, _ = random_game(game, options, 2, seed, max_plies=plies)
        if len(moves) == plies and "pass" not in moves:
            return moves
    raise RuntimeError(f"no random Lox game of {plies} plies")


def mail(sender, subject, number, body="bench"):
    message = EmailMessage()
    message["From"] = sender
    message["To"] = "pbm@localhost"
    message["Subject"] = subject
    message["Message-ID"] = f"<bench-{number}-{random.random()}@bench.example>"
    message.set_content(body)
    return message


def env_for(home):
    """As an MTA would run us: with bytecode caches (this sandbox sets
    PYTHONDONTWRITEBYTECODE, which would recompile every module on every mail)."""
    env = dict(os.environ, PBM_HOME=str(home), PYTHONPATH=str(ROOT))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


# -- 1. one mail through the MTA pipe -------------------------------------------------------


def pipe_home(path: Path) -> Path:
    home = init_home(path)
    for userid in ("white", "black"):
        pbm(home, "signup", userid, "secret", f"{userid}@bench.example")
    pbm(home, GAME, "challenge", "white", "black", f"-size={SIZE}")
    return home


def regular_install(workdir: Path) -> Path | None:
    """A regular `pip install .` (not editable) into a fresh venv, built from a copy of the
    checkout so that no build/ folder is left in it: the venv's python, or None when pip
    cannot install (no package index)."""
    source, venv = workdir / "source", workdir / "regular-venv"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.egg-info", "build"),
    )
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # pip compiles the installed modules
    python = venv / "bin" / "python"
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "."],
            cwd=source,
            check=True,
            env=env,
            capture_output=True,
        )
    except subprocess.CalledProcessError as error:
        print(f"   (no regular install: {error.stderr or error})")
        return None
    shutil.copy(ROOT / "mail_handler.py", workdir / "mail_handler.py")
    return python


def per_message_cost(workdir: Path, runs: int, base: Path | None = None):
    """Each ply: the mail through the editable install's mail_handler.py, `python -c pass`,
    and the same mail through a regular install's (each install with its own home), so
    that all three see the same load; with `base`, through that checkout's too (the
    code before a change, run by this venv)."""
    script = move_script(runs)
    for checkout in [ROOT] + ([base] if base else []):
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", "pbm", "games", "mail_handler.py"],
            cwd=checkout,
            env=env_for(workdir),
            check=True,
            capture_output=True,
        )
    editable_home = pipe_home(workdir / "pipe")
    pipes = {
        "editable": ([sys.executable, str(ROOT / "mail_handler.py")], env_for(editable_home), ROOT)
    }
    regular = regular_install(workdir)
    if regular is not None:
        home = pipe_home(workdir / "pipe-regular")
        env = env_for(home)
        env.pop("PYTHONPATH")  # the installed package, not the checkout
        pipes["regular"] = ([str(regular), str(workdir / "mail_handler.py")], env, workdir)
    if base is not None:
        env = env_for(pipe_home(workdir / "pipe-base"))
        env["PYTHONPATH"] = str(base)
        pipes["base checkout, editable"] = (
            [sys.executable, str(base / "mail_handler.py")],
            env,
            base,
        )
    times = {name: [] for name in pipes}
    bare = []
    for ply, move in enumerate(script, start=1):
        userid = "white" if ply % 2 else "black"
        subject = f"{GAME} move 101 {userid} secret {move}#{ply}"
        for name, (command, env, cwd) in pipes.items():
            raw = mail(f"{userid}@bench.example", subject, f"{name}-{ply}").as_bytes()
            start = time.perf_counter()
            subprocess.run(command, input=raw, env=env, check=True, cwd=cwd)
            times[name].append(time.perf_counter() - start)
            if name == "editable":
                start = time.perf_counter()
                subprocess.run([sys.executable, "-c", "pass"], check=True)
                bare.append(time.perf_counter() - start)
    for home in workdir.glob("pipe*"):
        moved = pbm(home, GAME, "show", "101").output
        assert f"): {script[-1]}" in moved.split("\n\n\n")[0], f"moves not played in {home}"
    b = statistics.median(bare) * 1000
    for name, measured in times.items():
        h = statistics.median(measured) * 1000
        paired = statistics.median(t / r for t, r in zip(measured, bare))
        report(
            f"move mail through mail_handler.py, {name} install (median of {len(measured)})",
            f"{h:.1f} ms",
            f"python -c pass {b:.1f} ms",
            f"{h / b:.1f}x (median of the paired ratios {paired:.1f}x)",
        )
    return statistics.median(times["editable"]) * 1000


def cpu_per_move(moves: int, rounds: int, base: Path | None = None):
    """bench/cpu_per_move.py (CPU per accepted move on pbm serve's writer path, text-only
    mail), `rounds` times, alternating with the base checkout when given; then the top of
    this checkout's profile."""
    script = str(ROOT / "bench" / "cpu_per_move.py")
    roots = {"this checkout": ROOT} | ({"base checkout": base} if base else {})
    figures = {name: [] for name in roots}

    def run(root, *extra):
        result = subprocess.run(
            [sys.executable, script, "--moves", str(moves), "--root", str(root), *extra],
            env=env_for(ROOT),
            check=True,
            capture_output=True,
            text=True,
        )
        return result.stdout

    for _ in range(rounds):
        for name, root in roots.items():
            figures[name].append(float(run(root).split()[1]))
    reference = statistics.median(figures["base checkout"]) if base else None
    mine = statistics.median(figures["this checkout"])
    report(
        f"CPU per accepted move, pbm serve's writer path, text-only mail (median of {rounds} x {moves})",
        f"{mine:.2f} ms",
        f"base checkout {reference:.2f} ms" if base else "target 2 ms",
        f"{mine / reference:.2f}" if base else f"{mine / 2:.2f}",
    )
    print(run(ROOT, "--profile", "--top", "20"))
    return mine


# -- 2. pbm serve throughput --------------------------------------------------------------


def raw_sqlite_rate(workdir: Path, count: int) -> float:
    """Small write transactions with the server's own settings: WAL, synchronous=FULL."""
    path = workdir / "raw.db"
    if path.exists():
        path.unlink()
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)")
    start = time.perf_counter()
    for i in range(count):
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO t (body) VALUES (?)", (f"row {i}",))
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return count / elapsed


def argon2_cost(samples: int) -> float:
    from pbm.security import hash_password, verify_password

    stored = hash_password("secret")
    start = time.perf_counter()
    for _ in range(samples):
        verify_password(stored, "secret")
    return (time.perf_counter() - start) / samples * 1000


def serve_throughput(workdir: Path, messages: int, boards: int):
    home = init_home(workdir / "serve")
    players = []
    for b in range(boards):
        pair = (f"w{b}", f"b{b}")
        players.append(pair)
        for userid in pair:
            pbm(home, "signup", userid, "secret", f"{userid}@bench.example")
        pbm(home, GAME, "challenge", *pair, f"-size={SIZE}")
    plies = messages // boards
    scripts = [move_script(plies) for _ in range(boards)]
    port = _free_port()
    process = subprocess.Popen(
        [str(PBM), "--home", str(home), "serve", "--port", str(port)],
        env=env_for(home),
        stdout=subprocess.PIPE,
        cwd=ROOT,
    )
    assert b"listening" in process.stdout.readline()
    try:
        sender = subprocess.run(
            [
                sys.executable,
                __file__,
                "--send",
                str(port),
                json.dumps(
                    [
                        [b, p, players[b][(p - 1) % 2], scripts[b][p - 1]]
                        for p in range(1, plies + 1)
                        for b in range(boards)
                    ]
                ),
            ],
            capture_output=True,
            check=True,
            text=True,
        )
        seconds = float(sender.stdout.strip())
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    shown = pbm(home, GAME, "show", "101").output
    assert f"): {scripts[0][-1]}" in shown.split("\n\n\n")[0], "the moves were not all played"
    rate = boards * plies / seconds
    raw = raw_sqlite_rate(workdir, 2000)
    report(
        "pbm serve: move mails over SMTP",
        f"{rate:.0f} per second",
        f"raw SQLite write transactions {raw:.0f} per second",
        f"{rate / raw:.2f}",
    )
    cost = argon2_cost(20)
    report(
        "argon2id password check (m=19 MiB, t=2, p=1)",
        f"{cost:.1f} ms each",
        f"{1000 / cost:.0f} checks per second per core",
    )
    return rate, raw


def send_over_smtp(port: int, plan: list):
    """Run in a separate process: one SMTP session per board, all at once (each board's
    moves in order); print the seconds it took."""
    from concurrent.futures import ThreadPoolExecutor

    by_board = {}
    for board, ply, userid, move in plan:
        by_board.setdefault(board, []).append((ply, userid, move))

    def session(board):
        with smtplib.SMTP("127.0.0.1", port, timeout=300) as client:
            for ply, userid, move in by_board[board]:
                client.send_message(
                    mail(
                        f"{userid}@bench.example",
                        f"{GAME} move {101 + board} {userid} secret {move}#{ply}",
                        f"{board}-{ply}",
                    )
                )

    start = time.perf_counter()
    with ThreadPoolExecutor(len(by_board)) as pool:
        list(pool.map(session, by_board))
    print(time.perf_counter() - start)


def _free_port():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- 3. scaling ------------------------------------------------------------------------------


def populate(home: Path, finished: int, users: int):
    """Users and finished boards straight through the storage layer: fast and realistic."""
    from pbm.config import Config
    from pbm.security import hash_password
    from pbm.store import Store

    store = Store.open(Config.load(home).db_path)
    stored = hash_password("secret")
    at = "2026-01-01T00:00:00Z"
    with store.write():
        for i in range(users):
            store.users.create(f"u{i:05d}", stored, [f"u{i:05d}@bench.example"], at)
        for n in range(finished):
            a, b = f"u{(2 * n) % users:05d}", f"u{(2 * n + 1) % users:05d}"
            board_id = store.boards.create(
                game=GAME,
                number=store.boards.next_number(GAME),
                options={"size": 11, "control": False},
                seed=n,
                nag_days=7,
                forfeit_days=21,
                total_days=0,
                created_at=at,
                userids=[a, b],
                rated=True,
            )
            for ply, (seat, text) in enumerate([(0, "f6"), (1, "g7")], start=1):
                store.boards.append_ply(
                    board_id,
                    ply=ply,
                    seat=seat,
                    userid=(a, b)[seat],
                    kind="move",
                    text=text,
                    auto=False,
                    charged=60,
                    at=at,
                )
            store.boards.set_status(board_id, "finished", finished_at=at)
            store.ratings.add_result(
                game=GAME,
                board_id=board_id,
                finished_at=at,
                rated=True,
                points=1,
                reason="bench",
                scores=[(a, 0.0), (b, 1.0)],
            )
    store.close()


def command_latency(home: Path, plies: int, repeats: int):
    """Median milliseconds of `move` and `show` on a long active game, in process."""
    from pbm.config import Config
    from pbm.dispatch import open_server
    from pbm.request import Request

    pbm(home, "signup", "longw", "secret", "longw@bench.example")
    pbm(home, "signup", "longb", "secret", "longb@bench.example")
    result = pbm(home, GAME, "challenge", "longw", "longb", "-size=19")
    number = int(result.output.split("(")[1].split(")")[0])
    script = move_script(plies + repeats, size="19")
    config = Config.load(home)
    moves, shows = [], []
    with open_server(config) as server:
        for ply, move in enumerate(script, start=1):
            userid = "longw" if ply % 2 else "longb"
            request = Request(
                text=f"{GAME} move {number} {userid} secret {move}#{ply}",
                sender=f"{userid}@bench.example",
                key=f"lat-{ply}-{random.random()}",
            )
            start = time.perf_counter()
            assert server.execute(request).ok
            if ply > plies:
                moves.append(time.perf_counter() - start)
                start = time.perf_counter()
                assert server.execute(
                    Request(text=f"{GAME} show {number}", sender="watcher@bench.example")
                ).ok
                shows.append(time.perf_counter() - start)
    return statistics.median(moves) * 1000, statistics.median(shows) * 1000


def scaling(workdir: Path, big_boards: int, users: int, plies: int, repeats: int):
    small = init_home(workdir / "small")
    populate(small, 100, 200)
    small_move, small_show = command_latency(small, plies, repeats)
    big = init_home(workdir / "big")
    start = time.perf_counter()
    populate(big, big_boards, users)
    filled = time.perf_counter() - start
    big_move, big_show = command_latency(big, plies, repeats)
    report(
        f"move, {big_boards} finished boards and {users} users, game of {plies}+ plies",
        f"{big_move:.1f} ms",
        f"100 boards {small_move:.1f} ms",
        f"{big_move / small_move:.2f}",
    )
    report(
        f"show, {big_boards} finished boards and {users} users",
        f"{big_show:.1f} ms",
        f"100 boards {small_show:.1f} ms",
        f"{big_show / small_show:.2f}",
    )
    print(f"   (filling the big database took {filled:.0f} s)")
    return big_move / small_move, big_show / small_show


# -- 4. game engines -------------------------------------------------------------------------


def engines(playouts: int):
    from pbm.plugins import get_games

    worst_overall = 0.0
    for name, game in get_games().items():
        options = game.parse_options({}, game.min_players)
        state = game.initial_state(options, game.min_players, 1)
        seat = game.to_move(state)
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < 0.5:
            list(game.legal_moves(state, seat))
            count += 1
        listings = count / (time.perf_counter() - start)
        rng = random.Random(5)
        worst, plies, start = 0.0, 0, time.perf_counter()
        for _ in range(playouts):
            state = game.initial_state(options, game.min_players, rng.randrange(10**6))
            for _ in range(3000):
                seat = game.to_move(state)
                if seat is None:
                    break
                t0 = time.perf_counter()
                legal = list(game.legal_moves(state, seat))
                worst = max(worst, time.perf_counter() - t0)
                move = rng.choice(legal) if legal else game.forced_move(state)
                state = game.apply_move(state, seat, move)
                plies += 1
        elapsed = time.perf_counter() - start
        worst_overall = max(worst_overall, worst)
        report(
            f"{name} engine ({', '.join(f'{k}={v}' for k, v in options.items() if not isinstance(v, bool)) or 'defaults'})",
            f"{listings:.0f} legal-move listings/s at the start; "
            f"{playouts / elapsed:.1f} random playouts/s ({plies / elapsed:.0f} plies/s); "
            f"slowest listing {worst * 1000:.2f} ms",
            "limit 5 ms",
            f"{worst * 1000 / 5:.2f}",
        )
    return worst_overall


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}"
    )


def write_markdown(path: Path):
    lines = ["| measurement | figure | reference (same run) | ratio |", "|---|---|---|---|"]
    lines += [f"| {s} | {f} | {r} | {q} |" for s, f, r, q in RESULTS]
    path.write_text("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--markdown")
    parser.add_argument("--only", help="comma-separated: pipe, cpu, serve, scaling, engines")
    parser.add_argument(
        "--base", help="another checkout (the code before a change) measured beside this one"
    )
    parser.add_argument("--send", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.send:
        send_over_smtp(int(args.send[0]), json.loads(args.send[1]))
        return
    print(f"machine: {machine()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="pbm-bench-") as tmp:
        work = Path(tmp)
        wanted = args.only or "pipe,cpu,serve,scaling,engines"
        base = Path(args.base).resolve() if args.base else None
        if "pipe" in wanted:
            per_message_cost(work, 15 if args.quick else 31, base)
        if "cpu" in wanted:
            cpu_per_move(100 if args.quick else 300, 3 if args.quick else 7, base)
        if "serve" in wanted:
            serve_throughput(work, 60 if args.quick else 400, 4 if args.quick else 8)
        if "scaling" in wanted:
            scaling(
                work,
                2000 if args.quick else 100_000,
                500 if args.quick else 10_000,
                40 if args.quick else 200,
                10 if args.quick else 30,
            )
        if "engines" in wanted:
            engines(3 if args.quick else 20)
    if args.markdown:
        write_markdown(Path(args.markdown))


if __name__ == "__main__":
    main()
