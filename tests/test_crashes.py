"""Crashes: mail_handler.py killed with SIGKILL at random points.

The database must open, pass PRAGMA integrity_check, and hold either a command's whole
change with its outgoing mail or none of it; delivering the same message again must give
the result of one delivery. `make stress` kills more (PBM_STRESS=1)."""

import random
import signal
import subprocess
import sys
import time

from click.testing import CliRunner

import games.lox
from pbm.cli import cli
from pbm.store import Store
from pbm.testing import random_game
from tests.conftest import GENEROUS_LIMITS, ROOT, STRESS_FACTOR
from tests.mailpipe import pipe
from tests.test_concurrency import message

KILLS = 60 if STRESS_FACTOR > 1 else 8


def state_of(home, number, key):
    store = Store.open(home / "pbm.db")
    try:
        assert store.integrity_check() == "ok"
        board = store.boards.get("lox", number)
        plies = store.boards.plies(board.id)
        rows = [
            r
            for r in store._rows(
                "SELECT id, status, inbox_key FROM outbox WHERE inbox_key = ?", (key,)
            )
        ]
        return plies, store.limits.inbox_seen(key), rows
    finally:
        store.close()


def test_a_killed_handler_leaves_all_or_nothing(project_env, tmp_path):
    home = tmp_path / "home"
    runner = CliRunner()
    assert runner.invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    (home / "pbm.ini").write_text(GENEROUS_LIMITS)
    for userid in ("white", "black"):
        runner.invoke(
            cli, ["--home", str(home), "signup", userid, "pw" + userid, f"{userid}@kill.example"]
        )
    # Lox: its random games last long enough to play a move for every kill.
    runner.invoke(cli, ["--home", str(home), "lox", "challenge", "white", "black", "-size=13"])
    game = games.lox.Lox()
    script = []
    seed = 0
    while len(script) < KILLS:
        script, _ = random_game(
            game, game.parse_options({"size": "13"}, 2), 2, seed, max_plies=KILLS
        )
        seed += 1

    start = time.monotonic()
    probe = pipe(project_env, message("nobody@kill.example", "help", "probe")[1])
    assert probe.returncode == 0
    typical = time.monotonic() - start
    rng = random.Random(2026)
    outcomes = {"nothing": 0, "committed": 0, "delivered": 0}
    for ply, move in enumerate(script, start=1):
        userid = "white" if ply % 2 else "black"
        key, raw = message(
            f"{userid}@kill.example",
            f"lox move 101 {userid} pw{userid} {move}#{ply}",
            f"kill-{ply}",
        )
        process = subprocess.Popen(
            [sys.executable, str(ROOT / "mail_handler.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=project_env,
            cwd=ROOT,
        )
        process.stdin.write(raw)
        process.stdin.close()
        time.sleep(rng.uniform(0.3, 1.1) * typical)
        process.send_signal(signal.SIGKILL)
        process.wait()

        plies, seen, rows = state_of(home, 101, f"{key}@race.example")
        if seen:
            assert [p.text for p in plies] == script[:ply], "the move committed with its key"
            assert len(rows) == 2, "and with its two board mails"
            delivered = all(r["status"] == "sent" for r in rows)
            outcomes["delivered" if delivered else "committed"] += 1
        else:
            assert [p.text for p in plies] == script[: ply - 1], "nothing of it committed"
            assert rows == []
            outcomes["nothing"] += 1

        again = pipe(project_env, raw)
        assert again.returncode == 0
        plies, seen, rows = state_of(home, 101, f"{key}@race.example")
        assert seen and [p.text for p in plies] == script[:ply]
        assert len(rows) == 2 and all(r["status"] == "sent" for r in rows)
        files = sorted((home / "outbox" / "new").iterdir())
        assert sum(f.name in {f"{r['id']:010d}.pbm" for r in rows} for f in files) == 2
    print(f"\nkills: {KILLS}, outcomes: {outcomes}")
    assert sum(outcomes.values()) == KILLS


def test_a_crash_between_commit_and_delivery_is_finished_by_redelivery(harness, monkeypatch):
    """The window is too narrow for random kills to hit often, so open it on purpose."""
    import pbm.dispatch

    harness.signup("alice", "bob")
    harness.challenge("knightpanic challenge alice bob")
    before = len(harness.outbox_files())

    class Killed(BaseException):
        pass

    def crash(*args, **kwargs):
        raise Killed()

    monkeypatch.setattr(pbm.dispatch, "deliver", crash)
    try:
        harness.run(
            "knightpanic move 101 alice secret c1-e5",
            sender="alice@example.org",
            key="crash-1@example.org",
        )
    except Killed:
        pass
    monkeypatch.undo()
    assert len(harness.outbox_files()) == before, "committed, not yet delivered"
    store = Store.open(harness.home / "pbm.db")
    assert len(store.outbox.pending_for("crash-1@example.org")) == 2
    result = harness.run(
        "knightpanic move 101 alice secret c1-e5",
        sender="alice@example.org",
        key="crash-1@example.org",
    )
    assert result.duplicate
    assert len(harness.outbox_files()) == before + 2
    assert store.outbox.pending_for("crash-1@example.org") == []
    board = store.boards.get("knightpanic", 101)
    assert [p.text for p in store.boards.plies(board.id)] == ["c1-e5"]


def test_a_claim_outlives_its_process_only_while_it_runs():
    import os

    from pbm.mailout import claimer_is_gone

    finished = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_pid = int(finished.stdout)
    assert claimer_is_gone(f"2026-01-01T00:00:00Z#{dead_pid}#ab12")
    assert not claimer_is_gone(f"2026-01-01T00:00:00Z#{os.getpid()}#ab12")
    assert claimer_is_gone("2026-01-01T00:00:00Z")
