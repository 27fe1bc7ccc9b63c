"""Issue 20.1: `pbm serve` commits the commands waiting for it together (group commit).

Each command of a group runs in its own savepoint and gets the answer it would get alone;
one that fails loses only its own writes. The group's mails are written into tmp/, made
durable with one sync together with the commit, renamed into new/, and only then is any
client answered. A server killed at each step of that (SIGKILL, as in tests/test_crashes.py)
loses nothing and sends nothing twice: the client got no 250, sends the mail again, and
the restarted server finishes what was committed."""

import asyncio
import email
import email.policy
import os
import shutil
import signal
import smtplib
import stat
import subprocess
import sys
import threading
from concurrent.futures import Future
from pathlib import Path

import pytest
from click.testing import CliRunner

from pbm.cli import cli
from pbm.failures import TransientError
from pbm.mailin import build_request
from pbm.serve import MailService, WriterJob
from pbm.store import Store
from tests.conftest import ROOT, free_port
from tests.mailpipe import command_mail

PBM = Path(sys.executable).parent / "pbm"


def store_of(home) -> Store:
    return Store.open(home / "pbm.db")


def plies(home, game="knightpanic", number=101) -> list[str]:
    store = store_of(home)
    try:
        board = store.boards.get(game, number)
        return [p.text for p in store.boards.plies(board.id)]
    finally:
        store.close()


def outbox_rows(home, key):
    store = store_of(home)
    try:
        assert store.integrity_check() == "ok"
        return store._rows("SELECT id, status FROM outbox WHERE inbox_key = ? ORDER BY id", (key,))
    finally:
        store.close()


def files_of(home, rows) -> dict:
    """Where each row's Maildir file is: new/ only, once, is the right answer."""
    names = {f"{r['id']:010d}.pbm" for r in rows}
    return {
        folder: sorted(p.name for p in (home / "outbox" / folder).iterdir() if p.name in names)
        for folder in ("tmp", "new", "cur")
        if (home / "outbox" / folder).exists()
    }


# -- a group of commands, in process --------------------------------------------------------


def test_a_group_answers_each_command_as_alone_and_a_failure_loses_only_its_own_writes(
    harness, monkeypatch
):
    import pbm.dispatch

    harness.signup("alice", "bob")
    harness.challenge("knightpanic challenge alice bob")
    before = len(harness.outbox_files())
    original = pbm.dispatch.Server._over_rate_limit

    def broken_for_carol(self, ctx):
        if ctx.request.sender == "carol@example.org":
            raise TransientError("the disk went away")  # after the inbox key was written
        return original(self, ctx)

    monkeypatch.setattr(pbm.dispatch.Server, "_over_rate_limit", broken_for_carol)
    requests = {
        "move": build_request(
            "knightpanic move 101 alice secret c1-e5", "", "alice@example.org", "g-move"
        ),
        "wrong password": build_request(
            "knightpanic move 101 bob guessed a1-c5", "", "bob@example.org", "g-wrong"
        ),
        "grammar": build_request("knightpanic frobnicate", "", "dave@example.org", "g-grammar"),
        "transient": build_request("help", "", "carol@example.org", "g-transient"),
    }
    service = MailService(harness.config)
    try:
        # The writer waits on a task while the four commands queue up: they make one group.
        started, hold = threading.Event(), threading.Event()
        service.jobs.put(WriterJob(lambda: started.set() or hold.wait(), Future()))
        assert started.wait(30)
        outcomes = {name: Future() for name in requests}

        def send(name):
            try:
                outcomes[name].set_result(service.run(requests[name], None, None))
            except Exception as error:
                outcomes[name].set_exception(error)

        senders = [threading.Thread(target=send, args=(name,)) for name in requests]
        for thread in senders:
            thread.start()
        while service.jobs.qsize() < len(requests):
            threading.Event().wait(0.01)
        hold.set()
        for thread in senders:
            thread.join()
        assert (service.groups, service.commands) == (1, 4)
    finally:
        service.close()

    assert outcomes["move"].result().ok
    assert plies(harness.home) == ["c1-e5"], "the move committed; the refused one did not"
    refused = outcomes["wrong password"].result()
    assert not refused.ok and "Invalid password entered" in refused.queued[0][1].body
    grammar = outcomes["grammar"].result()
    assert not grammar.ok and [m.kind for _, m in grammar.queued] == ["error"]
    with pytest.raises(TransientError):
        outcomes["transient"].result()  # SMTP 451: the client sends it again

    store = store_of(harness.home)
    try:
        seen = {key: store.limits.inbox_seen(key) for key in ("g-move", "g-wrong", "g-grammar")}
        assert seen == {"g-move": True, "g-wrong": True, "g-grammar": True}
        assert not store.limits.inbox_seen("g-transient"), "its writes were rolled back"
        assert store.outbox.pending_for("g-transient") == []
        statuses = {r.status for r in store.outbox.rows()}
        assert statuses == {"sent"}, "the sent marks committed when the service stopped"
    finally:
        store.close()
    delivered = harness.mails()[before:]
    assert sorted(str(m["To"]) for m in delivered) == [
        "alice@example.org",
        "bob@example.org",
        "bob@example.org",
        "dave@example.org",
    ]
    assert not list((harness.home / "outbox" / "tmp").iterdir())


def test_a_group_wakes_the_robots_only_on_a_server_with_a_robot_account(harness):
    """The robots' round reads on a connection of its own, which every commit makes
    stale (issue 31): a server without robots is not woken after its commits; once one is
    added (by `pbm robots add`, from another process) the next group wakes it."""
    harness.signup("alice")
    service = MailService(harness.config)
    woken = []
    poke = service.robots.poke
    service.robots.poke = lambda: woken.append("poke") or poke()
    try:
        assert service.run(build_request("help", "", "alice@example.org", "r-1"), None, None).ok
        assert woken == []
        added = CliRunner().invoke(
            cli, ["--home", str(harness.home), "robots", "add", "robo", "knightpanic", "mcts"]
        )
        assert added.exit_code == 0, added.output
        assert service.run(build_request("help", "", "alice@example.org", "r-2"), None, None).ok
        assert woken == ["poke"]
    finally:
        service.close()


def test_a_group_makes_an_outbox_removed_meanwhile_again_private(harness):
    """pbm serve does not look for the Maildir's folders before each file: the first file
    that finds them gone makes them again, 0700, and its mail is delivered, 0600."""
    harness.signup("alice")
    service = MailService(harness.config)
    try:
        assert service.run(build_request("help", "", "alice@example.org", "o-1"), None, None).ok
        shutil.rmtree(harness.home / "outbox")
        assert service.run(build_request("help", "", "alice@example.org", "o-2"), None, None).ok
    finally:
        service.close()
    [row] = outbox_rows(harness.home, "o-2")
    assert files_of(harness.home, [row]) == {"tmp": [], "new": [f"{row['id']:010d}.pbm"], "cur": []}
    for folder in ("outbox", "outbox/tmp", "outbox/new", "outbox/cur"):
        assert stat.S_IMODE((harness.home / folder).stat().st_mode) == 0o700, folder
    mode = (harness.home / "outbox" / "new" / f"{row['id']:010d}.pbm").stat().st_mode
    assert stat.S_IMODE(mode) == 0o600


def test_a_client_that_hangs_up_still_has_its_command_run_under_the_homes_lock(harness):
    """The event loop, not a thread per mail, waits for the commands (issue 31). A client
    that hangs up while its command waits is told nothing, but the command runs, and the
    home's lock (which keeps `pbm restore` out) is held until it has."""
    from pbm.homelock import no_mail_handled
    from pbm.serve import BoundedController

    service = MailService(harness.config)
    controller = BoundedController(
        service, harness.config, hostname="127.0.0.1", port=free_port(), ident="pbm"
    )
    controller.start()
    started, hold = threading.Event(), threading.Event()
    try:
        service.jobs.put(WriterJob(lambda: started.set() or hold.wait(), Future()))
        assert started.wait(30)
        client = smtplib.SMTP(controller.hostname, controller.port, timeout=30)
        client.ehlo()
        client.mail("carol@example.org")
        client.rcpt("pbm@localhost")
        client.putcmd("data")
        assert client.getreply()[0] == 354
        client.send(command_mail("carol@example.org", "signup carol secret") + b"\r\n.\r\n")
        while service.jobs.qsize() < 1:
            threading.Event().wait(0.01)
        client.close()
        sessions = harness.config.number("listen.max_sessions")
        while controller.sessions._value != sessions:  # her session is gone
            threading.Event().wait(0.01)
        for _ in range(5):  # and the event loop has run what her hanging up set off
            asyncio.run_coroutine_threadsafe(asyncio.sleep(0), controller.loop).result(30)
        with pytest.raises(TransientError, match="mail is being handled"):
            with no_mail_handled(harness.home, 0):
                pass
        hold.set()
        with no_mail_handled(harness.home, 30):  # let go once her command has run
            pass
        assert service.commands == 1
    finally:
        hold.set()
        controller.stop()
        service.close()
    store = store_of(harness.home)
    try:
        assert store.users.password_hash("carol") is not None, "her command ran"
    finally:
        store.close()


# -- the Maildir's crash cases, in process ----------------------------------------------------


def test_a_file_whose_rename_was_lost_is_renamed_by_the_flush(harness):
    """A rename becomes durable with the next sync, which may come after the sent mark:
    a power cut in between leaves the synced file in tmp/ and its row sent."""
    harness.signup("alice")
    delivered = harness.outbox_files()
    path = delivered[-1]
    stuck = harness.home / "outbox" / "tmp" / path.name
    os.replace(path, stuck)
    flushed = CliRunner().invoke(cli, ["--home", str(harness.home), "outbox", "flush"])
    assert flushed.exit_code == 0 and "0 sent" in flushed.output
    assert harness.outbox_files() == delivered and not stuck.exists()


def test_a_row_taken_over_is_not_written_again_when_its_reader_has_it(harness, monkeypatch):
    """A crash between the rename and the sent mark: the file reached new/ and its reader
    moved it into cur/. Taking the row over must mark it sent, not deliver it again."""
    import pbm.dispatch

    harness.signup("alice")
    monkeypatch.setattr(pbm.dispatch, "deliver", lambda *args: None)
    harness.run("help", sender="alice@example.org", key="taken-over@example.org")
    monkeypatch.undo()
    store = store_of(harness.home)
    [row_id] = store.outbox.pending_for("taken-over@example.org")
    [row] = store.outbox.claim_many(
        [row_id], "2026-01-01T00:00:00Z#999999999#dead", "2000-01-01", lambda claim: False
    )
    cur = harness.home / "outbox" / "cur"
    cur.mkdir(parents=True, exist_ok=True)
    (cur / f"{row_id:010d}.pbm:2,S").write_bytes(row.message)
    flushed = CliRunner().invoke(cli, ["--home", str(harness.home), "outbox", "flush"])
    assert "1 sent" in flushed.output, flushed.output
    assert not (harness.home / "outbox" / "new" / f"{row_id:010d}.pbm").exists()
    assert [r.status for r in store.outbox.rows() if r.id == row_id] == ["sent"]
    store.close()


# -- a real server killed at each step of a group ----------------------------------------------

# Runs `pbm serve` with one function of pbm/serve.py made to kill the process with SIGKILL
# the nth time it is called; "rename" is os.replace while publish_maildir runs.
KILLER = """
import os, signal, sys
import pbm.serve
where, nth = sys.argv[1], int(sys.argv[2])
calls = []
def killing(original):
    def killed(*args, **kwargs):
        calls.append(1)
        if len(calls) == nth:
            os.kill(os.getpid(), signal.SIGKILL)
        return original(*args, **kwargs)
    return killed
if where == "rename":
    publish, replace = pbm.serve.publish_maildir, os.replace
    def publishing(*args, **kwargs):
        os.replace = killing(replace)
        try:
            return publish(*args, **kwargs)
        finally:
            os.replace = replace
    pbm.serve.publish_maildir = publishing
else:
    setattr(pbm.serve, where, killing(getattr(pbm.serve, where)))
from pbm.cli import cli
cli.main(args=sys.argv[3:], prog_name="pbm")
"""


def start(project_env, home, killed_at=None):
    port = free_port()
    command = [str(PBM), "--home", str(home), "serve", "--port", str(port)]
    if killed_at is not None:
        command = [sys.executable, "-c", KILLER, *killed_at, *command[1:]]
    process = subprocess.Popen(
        command, env=project_env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert b"listening" in process.stdout.readline()
    return process, port


@pytest.mark.parametrize(
    "killed_at, left",
    [
        (("claim_queued", "1"), None),  # inside the group's transaction, before its COMMIT
        (("sync_together", "1"), (2, 0)),  # committed, mails in tmp/, nothing synced
        (("publish_maildir", "1"), (2, 0)),  # synced, nothing renamed into new/
        (("rename", "2"), (1, 1)),  # one mail renamed into new/, the other still in tmp/
    ],
    ids=["before-commit", "before-sync", "before-rename", "between-renames"],
)
def test_a_server_killed_in_a_group_loses_nothing_and_sends_nothing_twice(
    project_env, challenged_home, killed_at, left
):
    """`left`: the mails of the move in tmp/ and in new/ when the server died, None when
    nothing was committed."""
    home = challenged_home
    raw = command_mail(
        "alice@example.org",
        "knightpanic move 101 alice secret c1-e5",
        "killed",
        "<group-kill@example.org>",
    )
    key = "group-kill@example.org"
    process, port = start(project_env, home, killed_at)
    try:
        with pytest.raises(smtplib.SMTPServerDisconnected):
            with smtplib.SMTP("127.0.0.1", port, timeout=60) as client:
                client.sendmail("alice@example.org", ["pbm@localhost"], raw)
    finally:
        process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL, "no 250 came before the kill"
    rows = outbox_rows(home, key)
    if left is None:
        assert plies(home) == [] and rows == []
    else:
        assert plies(home) == ["c1-e5"] and len(rows) == 2
        assert {r["status"] for r in rows} == {"sending"}, "claimed in the commit, not sent"
        where = files_of(home, rows)
        assert (len(where["tmp"]), len(where["new"])) == left

    process, port = start(project_env, home)  # the MTA sends the mail again
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=60) as client:
            assert client.sendmail("alice@example.org", ["pbm@localhost"], raw) == {}
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    assert plies(home) == ["c1-e5"]
    rows = outbox_rows(home, key)
    assert len(rows) == 2 and {r["status"] for r in rows} == {"sent"}
    names = sorted(f"{r['id']:010d}.pbm" for r in rows)
    assert files_of(home, rows) == {"tmp": [], "new": names, "cur": []}
    recipients = sorted(
        str(email.message_from_bytes(p.read_bytes(), policy=email.policy.default)["To"])
        for p in (home / "outbox" / "new").iterdir()
        if p.name in names
    )
    assert recipients == ["alice@example.org", "bob@example.org"], "one board mail each"


def test_one_sync_for_a_batch_of_files_on_one_file_system(tmp_path, monkeypatch):
    import pbm.maildir
    from pbm.maildir import sync_together

    if sys.platform.startswith("linux"):
        assert pbm.maildir._syncfs() is not None, "syncfs(2) is found on Linux"
    paths = [tmp_path / f"{n}.pbm" for n in range(3)]
    for path in paths:
        path.write_bytes(b"mail")
    synced, fsynced = [], []
    monkeypatch.setattr(pbm.maildir, "_syncfs", lambda: lambda fd: synced.append(fd) or 0)
    sync_together(paths)
    assert len(synced) == 1
    with pytest.raises(FileNotFoundError):
        sync_together([tmp_path / "gone" / "missing.pbm"])
    monkeypatch.setattr(pbm.maildir, "_syncfs", lambda: None)
    monkeypatch.setattr(pbm.maildir.os, "sync", lambda: fsynced.append("sync"))
    sync_together(paths)
    assert fsynced == ["sync"], "without syncfs, one sync(2) for them all"


def test_syncing_never_opens_the_database_file_itself(tmp_path, monkeypatch):
    """Closing any descriptor of the database drops the POSIX locks SQLite holds on it in
    this process: pbm serve's readers then met disk I/O errors. The sync goes through the
    folder instead."""
    import pbm.maildir
    from pbm.maildir import sync_together

    database = tmp_path / "pbm.db"
    database.write_bytes(b"")
    opened = []
    real_open = os.open
    monkeypatch.setattr(
        pbm.maildir.os, "open", lambda path, *a: opened.append(str(path)) or real_open(path, *a)
    )
    monkeypatch.setattr(pbm.maildir, "_syncfs", lambda: lambda fd: 0)
    sync_together([database])
    assert opened == [str(tmp_path)]


def outbox_mail(store, body: bytes, key="k") -> int:
    return store.outbox.add(
        created_at="2026-11-28T12:00:00Z",
        kind="board",
        recipients=["alice@example.org"],
        envelope_from=None,
        message_id=f"<{key}@pbm.example>",
        message=body,
        inbox_key=key,
    )


def test_a_group_writes_its_mails_claimed_and_claims_a_duplicates_leftovers(harness):
    """pbm serve's group writes its mails already claimed, as the claim it used to make in
    the same transaction would leave them; a row of another command (a duplicate's, left
    undelivered by a crash) is claimed as before; a rolled-back command's row is not taken,
    though the next row gets its id."""
    from pbm.clock import now
    from pbm.dispatch import open_server
    from pbm.mailout import claim_queued

    harness.signup("alice", "bob")
    with open_server(harness.config) as server:
        store = server.store
        with store.write():
            leftover = outbox_mail(store, b"left by a crash", "crashed")
        claim = f"2026-11-28T12:00:00Z#{os.getpid()}#abc"
        with store.write(), store.outbox.writing_claimed(claim) as written:
            first = outbox_mail(store, b"first")
            with pytest.raises(RuntimeError), store.savepoint():
                undone = outbox_mail(store, b"rolled back")
                raise RuntimeError("the command failed")
            second = outbox_mail(store, b"second")
            assert second == undone, "SQLite gives the id again"
            rows = claim_queued(store, written, [leftover, first, second], now())
        assert [(r.id, r.message, r.status) for r in rows] == [
            (leftover, b"left by a crash", "pending"),
            (first, b"first", "pending"),
            (second, b"second", "pending"),
        ], "as claim_many gives them: as they were found"
        stored = [
            (r["id"], r["status"], r["claimed_at"])
            for r in store._rows(
                "SELECT id, status, claimed_at FROM outbox WHERE id >= ? ORDER BY id", (leftover,)
            )
        ]
        assert [(r[0], r[1]) for r in stored] == [
            (leftover, "sending"),
            (first, "sending"),
            (second, "sending"),
        ]
        assert stored[1][2] == stored[2][2] == claim != stored[0][2]
        with store.write():
            after = outbox_mail(store, b"after the group")
        assert store.outbox.get(after).status == "pending"


def test_a_copy_that_comes_after_its_early_check_runs_nothing(harness):
    """An early check exists only where the inbox did not hold the key a moment ago, so the
    writer does not read it again; a copy that came meanwhile is still a duplicate."""
    from pbm.dispatch import open_server
    from pbm.security import EarlyCheck

    harness.signup("alice", "bob")
    harness.challenge("knightpanic challenge alice bob")
    text = "knightpanic move 101 alice secret c1-e5"
    assert harness.run(text, sender="alice@example.org", key="copy-1").ok
    mails = len(harness.outbox_files())
    with open_server(harness.config) as server:
        stored = server.store.users.password_hash("alice")
        early = EarlyCheck("alice", "secret", stored, background=False)
        result = server.execute(build_request(text, "", "alice@example.org", "copy-1"), early)
    assert result.duplicate and not result.queued
    assert plies(harness.home) == ["c1-e5"]
    assert len(harness.outbox_files()) == mails


def test_groups_commit_unsynced_and_a_write_alone_synced(harness):
    """A group's COMMIT is made durable by the caller's sync (synchronous=NORMAL); a write
    alone syncs its own (FULL), whatever group came before it. Groups one after another set
    the level once."""
    from pbm.dispatch import open_server

    harness.signup("alice")
    with open_server(harness.config) as server:
        store = server.store
        set_levels = []
        store.conn.set_trace_callback(
            lambda sql: set_levels.append(sql) if sql.startswith("PRAGMA synchronous=") else None
        )

        def level():
            return store.conn.execute("PRAGMA synchronous").fetchone()[0]

        for _ in range(3):
            with store.group():
                assert level() == 1  # NORMAL
        assert set_levels == ["PRAGMA synchronous=NORMAL"]
        with store.write():
            assert level() == 2  # FULL
        with store.group():
            assert level() == 1
        with store.write():
            assert level() == 2
        store.conn.set_trace_callback(None)


def test_a_statement_journal_stays_in_memory(harness):
    """Every command runs in a savepoint, so SQLite keeps a statement journal for a
    statement that changes several pages (a queued mail and its indexes); kept on disk, it
    was a new file in /var/tmp, written and removed, for every command that mailed."""
    from pbm.dispatch import open_server

    harness.signup("alice")
    with open_server(harness.config) as server:
        assert server.store.conn.execute("PRAGMA temp_store").fetchone()[0] == 2  # MEMORY
