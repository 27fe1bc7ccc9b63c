"""`make bench`: pbm's speed, each figure printed next to a reference measured in the same run.

1. One `move` mail through mail_handler.py in a fresh process, next to `python -c pass`:
   the editable install of `make` and a regular `pip install .` into a temporary venv;
   by password and by reply; handled in that process, and handed to a running `pbm serve`
   of the home (pbm/handoff.py, with the server's CPU for each). Then CPU per accepted
   move on `pbm serve`'s writer path (bench/cpu_per_move.py), text-only and with the
   board's picture in every mail, beside the least a move can cost with the design card's
   libraries (bench/move_floor.py), and the top of its profile. Then where that move's
   time goes by owner, pbm's own Python against the libraries and system calls it asks
   for, beside the same for the floor (bench/native.py, py-spy in native mode).
2. `pbm serve` throughput of `move` mails sent over SMTP by another process, with 1 and
   with 16 clients, next to the raw rate of single SQLite commits on the same disk and to
   what the writer's CPU a move allows; the syncs a move (strace, in a run of its own: a
   traced server is four times slower), and the same with every sync made 4 ms slower
   (strace's fault injection); argon2 reported apart.
3. Latency of `move` and `show` with 100,000 finished boards and 10,000 users, next to
   the same with 100 boards.
4. Every game's engine: random playouts and legal-move listing next to the same through
   the plugin contract, on the same games (bench/engines.py).
5. Board pictures: one PNG and one SVG of the largest board of each game, next to its text
   board (bench/pictures.py).
6. Board pictures in mail: the CPU of a move with html on next to the same moves text-only
   (bench/htmlmail.py).
7. The web view (bench/web.py): requests per second of a board page with 100,000 boards,
   next to the stylesheet from the same server.
8. Delivery (bench/delivery.py): a bounce through mail_handler.py next to a move mail, and
   a move over SMTP with VERP senders next to one envelope sender a mail.
9. Replication (bench/replica.py): a move with [replica] wait = on, Litestream's replica on
   this machine, next to the same moves without the wait, through the pipe and pbm serve.
10. Tournaments (bench/tournaments.py): a tournament's start per board next to a challenge,
   and a move on a tournament's board next to one on a board of no tournament.
11. The plugin contract (bench/contract.py): random playouts through the JSON contract of
   every game at its largest and default sizes, next to the same seeded games through the
   base checkout's contract.

Options: --quick (smaller numbers, for a smoke run), --markdown FILE (write the figures),
--only SECTIONS, --base CHECKOUT (sections pipe, cpu and contract: that checkout measured
alongside), --contract-base CHECKOUT (the contract section's, when another).
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
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# bench/, the script's own folder, leads sys.path: its modules import by their names.
from click.testing import CliRunner  # noqa: E402
from fixtures import LIMITS, populate  # noqa: E402

from pbm.cli import cli  # noqa: E402

PBM = Path(sys.executable).parent / "pbm"
RESULTS: list[tuple[str, str, str, str]] = []  # (section, figure, reference, ratio)


def report(section, figure, reference="", ratio=""):
    RESULTS.append((section, figure, reference, ratio))
    line = f"{section}: {figure}"
    if reference:
        line += f"   [reference: {reference}]"
    if ratio:
        line += f"   ratio {ratio}"
    print(line, flush=True)


def init_home(path: Path, checkout: Path | None = None) -> Path:
    """A new home made by this checkout's pbm, or by another checkout's own (base_pbm)."""
    if path.exists():
        shutil.rmtree(path)
    if checkout is None:
        result = CliRunner().invoke(cli, ["--home", str(path), "init"])
        assert result.exit_code == 0, result.output
    else:
        base_pbm(checkout, path, "init")
    # Text-only mail, as the goals of sections 1-3 are stated; bench/htmlmail.py measures
    # the pictures beside it.
    (path / "pbm.ini").write_text(LIMITS + "[mail]\nhtml = off\n")
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


def pipe_home(path: Path, checkout: Path | None = None) -> Path:
    """White, black and their board 101, made by this checkout's pbm or by another
    checkout's own: a base that reads tables a later schema renamed still finds them."""
    home = init_home(path, checkout)
    run = partial(pbm, home) if checkout is None else partial(base_pbm, checkout, home)
    for userid in ("white", "black"):
        run("signup", userid, "secret", f"{userid}@bench.example")
    run(GAME, "challenge", "white", "black", f"-size={SIZE}")
    return home


def start_pipe_server(home: Path, pbm_command: Path, env: dict) -> subprocess.Popen:
    """`pbm serve` for a pipe home, once it listens (its handoff socket is open then)."""
    command = [str(pbm_command), "--home", str(home), "serve", "--port", str(_free_port())]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, cwd=home)
    assert b"listening" in process.stdout.readline()
    time.sleep(0.5)  # the first outbox flush runs as the listener starts
    return process


def base_pbm(checkout: Path, home: Path, *words) -> str:
    """`pbm` of another checkout, in a process of its own: its code and its schema."""
    env = env_for(home)
    env["PYTHONPATH"] = str(checkout)
    return subprocess.run(
        [sys.executable, "-c", "from pbm.cli import cli; cli()", "--home", str(home), *words],
        env=env,
        cwd=checkout,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


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
    """Each ply: the mail through the editable install's mail_handler.py and through a
    regular install's (each install with its own home), each followed by `python -c pass`
    of its own venv, so that all see the same load; by reply and handed to a running `pbm
    serve` too; with `base`, through that checkout's (the code before a change, run by
    this venv)."""
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
        env = env_for(pipe_home(workdir / "pipe-base", base))
        env["PYTHONPATH"] = str(base)
        pipes["base checkout, editable"] = (
            [sys.executable, str(base / "mail_handler.py")],
            env,
            base,
        )
    # A move by reply needs no password and so no argon2: counted apart (issue 31), for the
    # base checkout too.
    reply_homes = {"editable, by reply": pipe_home(workdir / "pipe-reply")}
    pipes["editable, by reply"] = (
        [sys.executable, str(ROOT / "mail_handler.py")],
        env_for(reply_homes["editable, by reply"]),
        ROOT,
    )
    if base is not None:
        reply_homes["base checkout, by reply"] = pipe_home(workdir / "pipe-base-reply", base)
        env = env_for(reply_homes["base checkout, by reply"])
        env["PYTHONPATH"] = str(base)
        pipes["base checkout, by reply"] = (
            [sys.executable, str(base / "mail_handler.py")],
            env,
            base,
        )
    # The same moves handed to a running `pbm serve` of the home (pbm/handoff.py): the pipe
    # loads no pbm, and the server's CPU for them is counted apart.
    to_serve = {}  # name: (home, the pbm command, its environment)
    for name in ("editable, handed to pbm serve, by password", "handed to pbm serve, by reply"):
        home = pipe_home(workdir / ("pipe-serve-reply" if "reply" in name else "pipe-serve"))
        if "reply" in name:
            reply_homes[name] = home
        to_serve[name] = (home, PBM, env_for(home))
        pipes[name] = ([sys.executable, str(ROOT / "mail_handler.py")], env_for(home), ROOT)
    if regular is not None:
        name = "regular install, handed to pbm serve, by password"
        home = pipe_home(workdir / "pipe-serve-regular")
        env = env_for(home)
        env.pop("PYTHONPATH")  # the installed package, not the checkout
        to_serve[name] = (home, regular.parent / "pbm", env)
        pipes[name] = ([str(regular), str(workdir / "mail_handler.py")], env, workdir)
    # What any mail costs with the design card's libraries and no pbm code (the floor).
    floor = workdir / "floor"
    floor.mkdir(exist_ok=True)
    floor_script = str(ROOT / "bench" / "pipe_floor.py")
    pipes["floor: the libraries alone, by password"] = (
        [sys.executable, floor_script, str(floor)],
        env_for(floor),
        floor,
    )
    pipes["floor: the libraries alone, by reply"] = (
        [sys.executable, floor_script, str(floor), "--by-reply"],
        env_for(floor),
        floor,
    )
    if regular is not None:  # the same libraries, started without the editable finder
        env = env_for(floor)
        env.pop("PYTHONPATH")
        for way, extra in (("by password", []), ("by reply", ["--by-reply"])):
            pipes[f"regular venv floor: the libraries alone, {way}"] = (
                [str(regular), floor_script, str(floor), *extra],
                env,
                floor,
            )
    times = {name: [] for name in pipes}
    # Each pipe beside a bare start of its own interpreter: the editable venv's start
    # loads its install's finder (pathlib, re, importlib.util: about 25 ms here), a
    # regular venv's does not.
    interpreters = {"editable": sys.executable}
    if regular is not None:
        interpreters["regular"] = str(regular)
    bare = {name: [] for name in interpreters}
    servers, server_cpu = {}, {}
    try:  # every server is stopped, whatever fails
        for name, (home, command, env) in to_serve.items():
            servers[name] = start_pipe_server(home, command, env)
            server_cpu[name] = _server_cpu_seconds(servers[name].pid)
        for ply, move in enumerate(script, start=1):
            userid = "white" if ply % 2 else "black"
            subject = f"{GAME} move 101 {userid} secret {move}#{ply}"
            for name, (command, env, cwd) in pipes.items():
                raw = mail(f"{userid}@bench.example", subject, f"{name}-{ply}").as_bytes()
                if name in reply_homes:
                    raw, env = reply_to_board_mail(reply_homes[name], userid, move, ply, env)
                start = time.perf_counter()
                subprocess.run(command, input=raw, env=env, check=True, cwd=cwd)
                times[name].append(time.perf_counter() - start)
                if name in interpreters:
                    start = time.perf_counter()
                    subprocess.run([interpreters[name], "-c", "pass"], check=True)
                    bare[name].append(time.perf_counter() - start)
        for name, process in servers.items():
            server_cpu[name] = (_server_cpu_seconds(process.pid) - server_cpu[name]) / len(script)
    finally:
        for process in servers.values():
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=120)
    assert all(process.returncode == 0 for process in servers.values())
    for home in workdir.glob("pipe*"):
        if home.name.startswith("pipe-base"):
            moved = base_pbm(base, home, GAME, "show", "101")
        else:
            moved = pbm(home, GAME, "show", "101").output
        assert f"): {script[-1]}" in moved.split("\n\n\n")[0], f"moves not played in {home}"
    for name, measured in times.items():
        venv = "regular" if name.startswith("regular") else "editable"
        b = statistics.median(bare[venv]) * 1000
        h = statistics.median(measured) * 1000
        paired = statistics.median(t / r for t, r in zip(measured, bare[venv]))
        if "floor" in name:
            shown = f"{name} (bench/pipe_floor.py)"
        else:
            plain = name.endswith("by reply") or name in servers
            shown = "mail_handler.py, " + (name if plain else f"{name} install")
        report(
            f"move mail through {shown} (median of {len(measured)})",
            f"{h:.1f} ms",
            f"python -c pass of the {venv} venv {b:.1f} ms",
            f"{h / b:.1f}x (median of the paired ratios {paired:.1f}x)",
        )
        if name in servers:
            report(f"   pbm serve's CPU for each ({name})", f"{server_cpu[name] * 1000:.1f} ms")
    return statistics.median(times["editable"]) * 1000


def reply_to_board_mail(home: Path, userid: str, move: str, ply: int, env: dict):
    """The player's reply to the newest board mail they got: the move on the first line, to
    the mail's reply address (as the MTA gives it in $ORIGINAL_RECIPIENT), no password."""
    import email
    import email.policy

    mine = [
        message
        for message in (
            email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
            for path in sorted((home / "outbox" / "new").iterdir())
        )
        if message["To"] == f"{userid}@bench.example" and message["Reply-To"]
    ]
    board_mail = mine[-1]
    reply = mail(f"{userid}@bench.example", f"Re: {board_mail['Subject']}", f"reply-{ply}", move)
    reply.replace_header("To", board_mail["Reply-To"])
    reply["In-Reply-To"] = board_mail["Message-ID"]
    return reply.as_bytes(), dict(env, ORIGINAL_RECIPIENT=str(board_mail["Reply-To"]))


def cpu_per_move(moves: int, batch: int, base: Path | None = None):
    """bench/cpu_per_move.py (CPU per accepted move on pbm serve's writer path), text-only
    and with the board's picture in every mail, beside bench/move_floor.py (the least such
    a move can cost with the design card's libraries) and, with a base checkout, the base
    checkout's both ways. One process each, playing `batch` moves in turn (the order turns every
    round) until each has played `moves`: each figure is the median of its batches, each
    ratio the median of the rounds' ratios. Then the top of this checkout's profile."""
    script = str(ROOT / "bench" / "cpu_per_move.py")

    def run(root, *extra):
        result = subprocess.run(
            [sys.executable, script, "--moves", str(moves), "--root", str(root), *extra],
            env=env_for(ROOT),
            check=True,
            capture_output=True,
            text=True,
        )
        return result.stdout

    played = ["--moves", str(moves), "--batch", str(batch)]
    commands = {
        "text": [script, "--root", str(ROOT), *played],
        "pictures": [script, "--root", str(ROOT), "--html", *played],
        "floor": [str(ROOT / "bench" / "move_floor.py"), *played],
    }
    if base is not None:
        commands["base"] = [script, "--root", str(base), *played]
        commands["base pictures"] = [script, "--root", str(base), "--html", *played]
    figures = interleaved(commands, moves // batch)
    text = statistics.median(figures["text"])

    def ratio(label, reference="text"):
        ratios = sorted(m / t for m, t in zip(figures[label], figures[reference]))
        quarter = len(ratios) // 4
        return (
            f"{statistics.median(ratios):.2f} (middle half {ratios[quarter]:.2f}-"
            f"{ratios[-quarter - 1]:.2f})"
        )

    title = "CPU per accepted move, pbm serve's writer path"
    rounds = f"medians of {moves // batch} batches of {batch}, alternated"
    against = (
        (f"base checkout {statistics.median(figures['base']):.2f} ms", ratio("text", "base"))
        if base is not None
        else ("target 2 ms", f"{text / 2:.2f}")
    )
    report(f"{title}, text-only mail ({rounds})", f"{text:.2f} ms", *against)
    pictures = statistics.median(figures["pictures"])
    if base is not None:
        report(
            f"{title}, the board's picture in every mail ({rounds})",
            f"{pictures:.2f} ms",
            f"base checkout {statistics.median(figures['base pictures']):.2f} ms",
            ratio("pictures", "base pictures"),
        )
    report(
        f"{title}, the board's picture in every mail, against text-only mail",
        f"{pictures:.2f} ms",
        f"text-only {text:.2f} ms; target 4 ms",
        ratio("pictures"),
    )
    report(
        f"the least a move can cost (bench/move_floor.py, {rounds})",
        f"{statistics.median(figures['floor']):.2f} ms",
        f"pbm text-only {text:.2f} ms; target 2 ms",
        ratio("floor"),
    )
    print(run(ROOT, "--profile", "--top", "20"))
    return text


def interleaved(commands: dict, rounds: int) -> dict:
    """The batch figures of each process ({label: [ms a move, ...]}): each plays one batch
    in turn, and the order turns every round, so a shared machine whose speed changes from
    one second to the next slows all of them alike."""
    processes = {
        label: subprocess.Popen(
            [sys.executable, *command],
            env=env_for(ROOT),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for label, command in commands.items()
    }
    figures = {label: [] for label in processes}
    try:
        for process in processes.values():
            assert process.stdout.readline().strip() == "ready"
        labels = list(processes)
        for round_number in range(rounds):
            turn = round_number % len(labels)
            for label in labels[turn:] + labels[:turn]:
                process = processes[label]
                process.stdin.write("\n")
                process.stdin.flush()
                figures[label].append(float(process.stdout.readline()))
    finally:
        for process in processes.values():
            process.stdin.close()
            process.wait(timeout=60)
    return figures


# -- 2. pbm serve throughput --------------------------------------------------------------

SYNC_CALLS = "fsync,fdatasync,syncfs,sync,sync_file_range,msync"


def fsync_cost(workdir: Path, samples: int) -> float:
    """Milliseconds for one write and fsync of a small file on the disk of the homes."""
    path = workdir / "fsync.probe"
    times = []
    with open(path, "wb") as handle:
        for _ in range(samples):
            handle.write(b"x" * 512)
            handle.flush()
            start = time.perf_counter()
            os.fsync(handle.fileno())
            times.append(time.perf_counter() - start)
    path.unlink()
    return statistics.median(times) * 1000


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


def serve_run(workdir: Path, clients: int, plies: int, strace=None, delay_ms=0) -> dict:
    """`plies` moves on each of `clients` boards, one SMTP session per board, all at once;
    the moves per second (accepted and their mails in the Maildir) and the syncs a move
    (counted by strace when given) past each board's first WARM_PLIES, and the writer's
    CPU a move (its own log line at the stop)."""
    home = init_home(workdir / f"serve-{clients}-{delay_ms}")
    players = []
    for b in range(clients):
        pair = (f"w{b}", f"b{b}")
        players.append(pair)
        for userid in pair:
            pbm(home, "signup", userid, "secret", f"{userid}@bench.example")
        pbm(home, GAME, "challenge", *pair, f"-size={SIZE}")
    scripts = [move_script(plies) for _ in range(clients)]
    counted = workdir / f"strace-{clients}-{delay_ms}.txt"
    command = [str(PBM), "--home", str(home), "serve", "--port", str(port := _free_port())]
    if strace:
        traced = ["-f", "--seccomp-bpf", "-qq", "-ttt", "-o", str(counted)]
        traced += ["-e", f"trace={SYNC_CALLS}"]
        if delay_ms:
            traced += ["-e", f"inject=fsync,fdatasync,syncfs:delay_exit={delay_ms * 1000}"]
        command = [strace, *traced, *command]
    process = subprocess.Popen(command, env=env_for(home), stdout=subprocess.PIPE, cwd=ROOT)
    assert b"listening" in process.stdout.readline()
    server = _child_of(process.pid) if strace else process.pid
    time.sleep(0.5)  # the first outbox flush runs as the listener starts
    try:
        sender = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--send",
                str(port),
                json.dumps(
                    [
                        [b, p, players[b][(p - 1) % 2], scripts[b][p - 1]]
                        for p in range(1, plies + 1)
                        for b in range(clients)
                    ]
                ),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert sender.stdout.readline() == "warm\n"
        warm_cpu, warm_readers = _server_cpu_seconds(server), _readers_cpu_seconds(server)
        sender.stdin.write("go\n")
        sender.stdin.flush()
        timing, _ = sender.communicate()
        assert sender.returncode == 0
        start, end = json.loads(timing)
        cpu, readers = _server_cpu_seconds(server), _readers_cpu_seconds(server)
    finally:
        os.kill(server, signal.SIGTERM)
        process.wait(timeout=120)
    moves = clients * plies
    timed = clients * (plies - WARM_PLIES)
    mails = len(list((home / "outbox" / "new").iterdir()))
    assert mails >= 2 * moves, f"{mails} mails in the Maildir for {moves} moves"
    for b in range(clients):
        shown = pbm(home, GAME, "show", str(101 + b)).output
        assert f"): {scripts[b][-1]}" in shown.split("\n\n\n")[0], "the moves were not all played"
    figures = {
        "rate": timed / (end - start),
        "moves": timed,
        "process_cpu_ms": (cpu - warm_cpu) / timed * 1000,
        "readers_cpu_ms": (readers - warm_readers) / timed * 1000,
        "cores": (cpu - warm_cpu) / (end - start),  # of the machine's, while timed
    }
    figures.update(_writer_line(home))
    if strace:
        figures["syncs"], figures["all_syncs"] = _sync_calls(counted, start, end)
    return figures


def _cpu_seconds(pid: int) -> float:
    """User and system CPU of a process so far, all its threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _readers_cpu_seconds(pid: int) -> float:
    """The CPU of `pbm serve`'s reader processes (pbm/readerpool.py), its children."""
    children = [
        int(child)
        for task in os.listdir(f"/proc/{pid}/task")
        for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split()
    ]
    return sum(_cpu_seconds(child) for child in children)


def _server_cpu_seconds(pid: int) -> float:
    """A server's CPU so far, its reader processes included."""
    return _cpu_seconds(pid) + _readers_cpu_seconds(pid)


def _child_of(pid: int) -> int:
    """The process strace runs (it answers SIGTERM by detaching, not by stopping it)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return int(children[0])


def _writer_line(home: Path) -> dict:
    """pbm serve's own count at its stop: commands, groups, CPU a command."""
    import re

    text = (home / "log" / "pbm.log").read_text()
    found = re.findall(
        r"writer: (\d+) commands in (\d+) groups .*?, ([\d.]+) ms CPU a command", text
    )
    commands, groups, cpu = found[-1]
    return {"commands": int(commands), "groups": int(groups), "cpu_ms": float(cpu)}


def _sync_calls(path: Path, start: float, end: float) -> tuple[dict, int]:
    """Calls of each sync system call from strace's log between start and end (the timed
    moves), and the number in the whole run (start-up and stop included)."""
    calls, everything = {}, 0
    for line in path.read_text().splitlines():
        words = line.split()
        if len(words) < 3 or "resumed>" in line:
            continue
        name = words[2].split("(")[0]
        if name in SYNC_CALLS.split(","):
            everything += 1
            if start <= float(words[1]) <= end:
                calls[name] = calls.get(name, 0) + 1
    return calls, everything


def serve_throughput(workdir: Path, single_plies: int, clients: int, plies: int):
    fsync_ms = fsync_cost(workdir, 50)
    raw = raw_sqlite_rate(workdir, 300)
    report(
        "disk: write and fsync of a small file (median of 50)",
        f"{fsync_ms:.2f} ms",
        f"raw SQLite commits (WAL, synchronous=FULL) {raw:.0f} per second",
    )
    strace = shutil.which("strace")
    if strace is None:
        print(
            "   (syncs not counted and no slow-disk run: install strace, e.g. apt-get install strace)"
        )
    # Rates and CPU without strace: a traced pbm serve took a quarter of the moves (it stops
    # the process at every sync and slows its threads), so syncs are counted in a run of
    # their own. The untraced runs alternate one client and many, SERVE_REPEATS times: on
    # a shared machine one run's ratio moved by 0.06.
    sizes = ((1, single_plies), (clients, plies))
    repeated = {count: [] for count, _ in sizes}
    for _ in range(SERVE_REPEATS):
        for count, each in sizes:
            repeated[count].append(serve_run(workdir, count, each))
    runs = {}
    for count, each in sizes:
        measured = repeated[count]
        for run in measured:
            run["bound_ratio"] = run["rate"] * run["cpu_ms"] / 1000
        run = runs[count] = sorted(measured, key=lambda r: r["bound_ratio"])[len(measured) // 2]
        rates = sorted(r["rate"] for r in measured)
        ratios = sorted(r["bound_ratio"] for r in measured)
        median_rate = statistics.median(rates)
        report(
            f"pbm serve, {count} SMTP client{'s' if count > 1 else ''} ({run['moves']} moves, "
            f"median of {len(measured)} runs)",
            f"{median_rate:.0f} moves per second (accepted, mails in the Maildir; runs "
            f"{rates[0]:.0f} to {rates[-1]:.0f}), {run['commands'] / run['groups']:.1f} "
            "commands a group",
            f"raw SQLite commits {raw:.0f} per second",
            f"{median_rate / raw:.2f}",
        )
        if strace:
            traced = serve_run(workdir, count, each, strace)
            syncs = sum(traced["syncs"].values())
            kinds = ", ".join(f"{n} {k}" for k, n in sorted(traced["syncs"].items()))
            per_group = syncs / traced["moves"] * traced["commands"] / traced["groups"]
            report(
                f"pbm serve, {count} client{'s' if count > 1 else ''}: syncs a move",
                f"{per_group * run['groups'] / run['commands']:.2f} untraced "
                f"({per_group:.2f} syncs a group, counted by strace, times the untraced "
                "groups a command)",
                f"traced: {syncs / traced['moves']:.2f} ({kinds}), "
                f"{traced['commands'] / traced['groups']:.1f} commands a group, "
                f"{traced['rate']:.0f} moves per second",
            )
        report(
            f"pbm serve, {count} client{'s' if count > 1 else ''}: writer CPU a move (the run "
            "of the median ratio)",
            f"{run['cpu_ms']:.2f} ms, so at most {1000 / run['cpu_ms']:.0f} moves per second "
            f"(the whole server: {run['process_cpu_ms']:.2f} ms a move, "
            f"{run['readers_cpu_ms']:.2f} of them in its reader processes; it got "
            f"{run['cores']:.2f} of a core while timed)",
            f"measured {run['rate']:.0f} per second",
            f"{run['bound_ratio']:.2f} (runs {ratios[0]:.2f} to {ratios[-1]:.2f})",
        )
    if strace:
        slow = serve_run(workdir, clients, plies, strace, delay_ms=4)
        slow_one = serve_run(workdir, 1, single_plies, strace, delay_ms=4)
        for count, run in ((1, slow_one), (clients, slow)):
            syncs = sum(run["syncs"].values())
            report(
                f"pbm serve, {count} client{'s' if count > 1 else ''}, every sync 4 ms slower (strace inject)",
                f"{run['rate']:.0f} moves per second, {syncs / run['moves']:.2f} syncs a move",
                f"{run['commands'] / run['groups']:.1f} commands a group; a sync then "
                f"takes {fsync_ms + 4:.1f} ms",
            )
    cost = argon2_cost(20)
    report(
        "argon2id password check (m=19 MiB, t=2, p=1)",
        f"{cost:.1f} ms each",
        f"{1000 / cost:.0f} checks per second per core",
    )
    return runs, raw


WARM_PLIES = 2  # each player's first move pays argon2, later ones hit the password cache
SERVE_REPEATS = 7  # so that each figure rests on over 1,000 moves (issue 31)


def send_over_smtp(port: int, plan: list):
    """Run in a separate process: one SMTP session per board, all at once (each board's
    moves in order, built before the clock starts); the first WARM_PLIES moves of every
    board go first, untimed. Prints the seconds the rest took."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    by_board = {}
    for board, ply, userid, move in plan:
        raw = mail(
            f"{userid}@bench.example",
            f"{GAME} move {101 + board} {userid} secret {move}#{ply}",
            f"{board}-{ply}",
        ).as_bytes()
        by_board.setdefault(board, []).append((f"{userid}@bench.example", raw))
    warm = threading.Barrier(len(by_board) + 1)
    go = threading.Barrier(len(by_board) + 1)

    def session(board):
        with smtplib.SMTP("127.0.0.1", port, timeout=300) as client:
            for number, (sender, raw) in enumerate(by_board[board]):
                if number == WARM_PLIES:
                    warm.wait()
                    go.wait()
                client.sendmail(sender, ["pbm@localhost"], raw)

    with ThreadPoolExecutor(len(by_board)) as pool:
        done = pool.map(session, by_board)
        warm.wait()
        print("warm", flush=True)
        sys.stdin.readline()  # the bench reads the server's CPU so far
        start = time.time()
        go.wait()
        list(done)
    print(json.dumps([start, time.time()]))


def _free_port():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- 3. scaling ------------------------------------------------------------------------------


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


def checkout(base: str, work: Path) -> Path:
    """The base checkout: a directory as given, or a commit exported from this repository."""
    if Path(base).is_dir():
        return Path(base).resolve()
    target = work / "base-checkout"
    target.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", base], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--markdown")
    parser.add_argument(
        "--only",
        help="comma-separated: pipe, cpu, native, serve, scaling, engines, pictures, htmlmail, web, "
        "delivery, replica, tournaments, contract",
    )
    parser.add_argument(
        "--base",
        help="another checkout (the code before a change) measured beside this one: a "
        "directory, or a commit of this repository (exported for the run)",
    )
    parser.add_argument(
        "--contract-base",
        help="the checkout the contract section compares with (default: --base); the plugin "
        "contract is older than the pipe and the writer that bench/cpu_per_move.py drives",
    )
    parser.add_argument("--send", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.send:
        send_over_smtp(int(args.send[0]), json.loads(args.send[1]))
        return
    # The sections' modules only here: bench/cpu_per_move.py loads this module's helpers
    # beside a base checkout's pbm, which lacks what later sections import.
    from contract import contract_speed
    from delivery import delivery
    from engines import engines, largest
    from htmlmail import html_mail
    from native import where_cpu_goes
    from pictures import pictures
    from replica import replica_wait
    from tournaments import tournaments
    from web import web

    from pbm.plugins import get_games

    print(f"machine: {machine()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="pbm-bench-") as tmp:
        work = Path(tmp)
        wanted = (
            args.only
            or "pipe,cpu,native,serve,scaling,engines,pictures,htmlmail,web,delivery,replica,"
            "tournaments,contract"
        )
        base = checkout(args.base, work) if args.base else None
        contract_base = base
        if args.contract_base and args.contract_base != args.base:
            contract_base = checkout(args.contract_base, work / "contract")
        if "pipe" in wanted:
            per_message_cost(work, 15 if args.quick else 31, base)
        if "cpu" in wanted:
            cpu_per_move(500 if args.quick else 2000, 25, base)
        if "native" in wanted:
            where_cpu_goes(report, interleaved, 500 if args.quick else 2000, 25)
        if "serve" in wanted:
            serve_throughput(work, 30 if args.quick else 150, 16, 5 if args.quick else 25)
        if "scaling" in wanted:
            scaling(
                work,
                2000 if args.quick else 100_000,
                500 if args.quick else 10_000,
                40 if args.quick else 200,
                10 if args.quick else 30,
            )
        if "engines" in wanted:
            engines(report, args.quick)
        if "pictures" in wanted:
            pictures(report, args.quick)
        if "htmlmail" in wanted:
            html_mail(report, args.quick)
        if "web" in wanted:
            web(report, args.quick)
        if "delivery" in wanted:
            delivery(report, args.quick)
        if "replica" in wanted:
            replica_wait(report, args.quick, move_script, env_for, _free_port)
        if "tournaments" in wanted:
            tournaments(report, args.quick, work)
        if "contract" in wanted:
            variants = [
                [name, raw, players]
                for name, game in get_games().items()
                for raw, players in largest(game) + [({}, game.min_players)]
            ]
            contract_speed(
                report,
                variants,
                3 if args.quick else 5,
                "1:3" if args.quick else "1:21",
                contract_base,
            )
    if args.markdown:
        write_markdown(Path(args.markdown))


if __name__ == "__main__":
    main()
