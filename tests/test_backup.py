"""`pbm backup` and `pbm restore`: consistent copies made while mail goes on, checked
before they are put back; mail waits during a restore (README, "Backups")."""

import email
import email.policy
import os
import sqlite3
import stat
import subprocess
import sys
import tarfile
import threading
import time

import pytest
from click.testing import CliRunner

import games.knightpanic
from pbm.cli import cli
from pbm.config import Config
from pbm.failures import TransientError
from pbm.homelock import handling_mail, no_mail_handled
from pbm.store import Store
from pbm.testing import random_game
from tests.conftest import GENEROUS_LIMITS, ROOT, Harness
from tests.mailpipe import command_mail, pipe


def pbm(home, *args):
    result = CliRunner().invoke(cli, ["--home", str(home), *args])
    return result.exit_code, result.output


def initialised(home):
    assert pbm(home, "init")[0] == 0
    (home / "pbm.ini").write_text(GENEROUS_LIMITS)
    return home


def played_home(tmp_path):
    home = initialised(tmp_path / "home")
    for args in (
        ("signup", "alice", "secret", "alice@example.org"),
        ("signup", "bob", "secret", "bob@example.org"),
        ("knightpanic", "challenge", "alice", "bob"),
        ("knightpanic", "move", "101", "alice", "secret", "c1-e5"),
    ):
        code, output = pbm(home, *args)
        assert code == 0, output
    return home


def written_backup(home, *args):
    code, output = pbm(home, "backup", *args)
    assert code == 0, output
    return output.splitlines()[0].removeprefix("backup written: ")


def test_a_backup_is_one_private_dated_archive_of_database_ini_and_key(tmp_path, clock):
    clock("2026-03-01T10:00:00")
    home = played_home(tmp_path)
    path = written_backup(home)
    assert path == str(home / "backups" / "pbm-backup-20260301T100000Z.tar.gz")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with tarfile.open(path) as archive:
        assert sorted(archive.getnames()) == ["pbm.db", "pbm.ini", "secret.key"]
        assert archive.extractfile("secret.key").read() == (home / "secret.key").read_bytes()


def test_backup_keeps_the_last_n(tmp_path, clock):
    home = played_home(tmp_path)
    with open(home / "pbm.ini", "a") as ini:
        ini.write(f"[backup]\nkeep = 2\ndir = {tmp_path / 'elsewhere'}\n")
    made = []
    for minute in range(4):
        clock(f"2026-03-01T10:0{minute}:00")
        made.append(written_backup(home))
    left = sorted(p.name for p in (tmp_path / "elsewhere").iterdir())
    assert left == [os.path.basename(p) for p in made[-2:]]


def test_restore_into_a_new_home_gives_back_the_boards_and_the_key(tmp_path):
    home = played_home(tmp_path)
    path = written_backup(home)
    new_home = tmp_path / "new"
    code, output = pbm(new_home, "restore", path)
    assert code == 0, output
    assert "integrity_check: ok" in output and "secret.key restored" in output
    assert (new_home / "secret.key").read_bytes() == (home / "secret.key").read_bytes()
    assert stat.S_IMODE(os.stat(new_home / "secret.key").st_mode) == 0o600
    code, output = pbm(new_home, "knightpanic", "move", "101", "bob", "secret", "g7-e3")
    assert code == 0, output
    store = Store.open(new_home / "pbm.db")
    try:
        row = store.boards.get("knightpanic", 101)
        assert [p.text for p in store.boards.plies(row.id)] == ["c1-e5", "g7-e3"]
    finally:
        store.close()


def test_restore_overwrites_a_running_home_in_place(tmp_path):
    home = played_home(tmp_path)
    path = written_backup(home)
    assert pbm(home, "knightpanic", "move", "101", "bob", "secret", "g7-e3")[0] == 0
    open_elsewhere = Store.open(home / "pbm.db")  # as `pbm serve` holds it
    try:
        assert pbm(home, "restore", path)[0] == 0
        row = open_elsewhere.boards.get("knightpanic", 101)
        assert [p.text for p in open_elsewhere.boards.plies(row.id)] == ["c1-e5"]
    finally:
        open_elsewhere.close()


def repacked(tmp_path, source, change):
    """The backup at source with its database changed by change(path)."""
    work = tmp_path / "repack"
    work.mkdir()
    with tarfile.open(source) as archive:
        archive.extractall(work, filter="data")
    change(work / "pbm.db")
    target = tmp_path / "changed.tar.gz"
    with tarfile.open(target, "w:gz") as archive:
        for name in ("pbm.db", "pbm.ini", "secret.key"):
            archive.add(work / name, arcname=name)
    return str(target)


def damage(path):
    """Every page after the first loses its b-tree header: whatever the game left in
    them, integrity_check (or opening) sees the damage."""
    data = bytearray(path.read_bytes())
    for offset in range(4096, len(data), 4096):
        data[offset : offset + 64] = b"\xff" * 64
    path.write_bytes(bytes(data))


def add_future_migration(path):
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) "
        "VALUES ('pbm', 'm999_from_the_future', '2030-01-01')"
    )
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    "change,message",
    [
        (damage, "the backup's database"),
        (add_future_migration, "made by a newer pbm (migrations m999_from_the_future"),
    ],
)
def test_restore_refuses_a_bad_backup_and_leaves_the_home_alone(tmp_path, change, message):
    home = played_home(tmp_path)
    bad = repacked(tmp_path, written_backup(home), change)
    assert pbm(home, "knightpanic", "move", "101", "bob", "secret", "g7-e3")[0] == 0
    code, output = pbm(home, "restore", bad)
    assert code == 1 and message in output, output
    code, output = pbm(home, "knightpanic", "show", "101")
    assert "g7-e3" in output


def test_restore_refuses_an_archive_with_other_members(tmp_path):
    home = played_home(tmp_path)
    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as archive:
        archive.add(home / "pbm.ini", arcname="../pbm.ini")
    code, output = pbm(tmp_path / "new", "restore", str(evil))
    assert code == 1 and "is not a pbm backup" in output
    assert not (tmp_path / "pbm.ini").exists()


def test_restore_waits_for_mail_being_handled_and_mail_waits_for_a_restore(tmp_path):
    harness = Harness(tmp_path / "home")
    harness.signup("alice")
    path = written_backup(harness.home)
    with handling_mail(harness.home):
        code, output = pbm(harness.home, "restore", "--wait", "0", path)
    assert code == 75 and "mail is being handled" in output
    with no_mail_handled(harness.home, 0):
        outcome = harness.deliver(command_mail("alice@example.org", "help"))
    assert not outcome.consumed
    assert "a restore is under way" in outcome.cause.text


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_mails_handled_at_once_keep_a_restore_out_until_the_last_is_done(tmp_path):
    """`pbm serve` handles many mails at once on one descriptor of the lock file (issue 31):
    a restore waits while any of them is handled, and none is left open after the last."""
    home = tmp_path / "home"
    home.mkdir()
    before = open_descriptors()
    started, finish = threading.Barrier(9), threading.Event()

    def handle():
        with handling_mail(home):
            started.wait(30)
            finish.wait(30)

    mails = [threading.Thread(target=handle) for _ in range(8)]
    for mail in mails:
        mail.start()
    started.wait(30)
    assert open_descriptors() == before + 1, "one descriptor for all of them"
    with pytest.raises(TransientError, match="mail is being handled"):
        with no_mail_handled(home, 0):
            pass
    finish.set()
    for mail in mails:
        mail.join()
    assert open_descriptors() == before
    with no_mail_handled(home, 0):
        with pytest.raises(TransientError, match="a restore is under way"):
            with handling_mail(home):
                pass
        assert open_descriptors() == before + 1, "only the restore's own"
    with handling_mail(home):
        pass


# -- the restore drill of the README, under load -----------------------------------------

BOARDS, PLIES = 4, 8


def scripts():
    game = games.knightpanic.KnightPanic()
    options = game.parse_options({"size": "6"}, 2)
    found, seed = [], 0
    while len(found) < BOARDS:
        moves, _ = random_game(game, options, 2, seed, max_plies=PLIES)
        if len(moves) == PLIES:
            found.append(moves)
        seed += 1
    return found


def acknowledged_tags(home) -> set[str]:
    """The moves whose board mail is already written: the comment names each."""
    tags = set()
    for path in (home / "outbox" / "new").iterdir():
        mail = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
        if "\nOriginal message follows:\n" in mail.get_content():  # an error's quote
            continue
        tags.update(
            line[len("msg ") :]
            for line in mail.get_content().splitlines()
            if line.startswith("msg ")
        )
    return tags


def test_restore_drill_finds_every_move_acknowledged_before_the_backup(tmp_path, project_env):
    home = initialised(tmp_path / "home")
    for b in range(BOARDS):
        for userid in (f"w{b}", f"b{b}"):
            assert pbm(home, "signup", userid, "pw" + userid, f"{userid}@drill.example")[0] == 0
        assert pbm(home, "knightpanic", "challenge", f"w{b}", f"b{b}", "-size=6")[0] == 0
    boards = scripts()
    some_played = threading.Barrier(BOARDS + 1, timeout=600)  # no hang if a worker dies
    failures = []

    def play(b):
        number, players = 101 + b, (f"w{b}", f"b{b}")
        for ply, move in enumerate(boards[b], start=1):
            mover = players[(ply - 1) % 2]
            raw = command_mail(
                f"{mover}@drill.example",
                f"knightpanic move {number} {mover} pw{mover} {move}#{ply}",
                f"msg b{number}-p{ply}\n",
            )
            result = pipe(project_env, raw)
            for _ in range(20):  # as an MTA does: a mail that must wait (75) comes again
                if result.returncode != 75:
                    break
                time.sleep(0.5)
                result = pipe(project_env, raw)
            if result.returncode != 0:
                failures.append(result.stderr.decode()[-500:])
            if ply == 2:
                some_played.wait()

    workers = [threading.Thread(target=play, args=(b,)) for b in range(BOARDS)]
    for worker in workers:
        worker.start()
    some_played.wait()  # every board has moves; the rest keep arriving during the backup
    before = acknowledged_tags(home)
    backup = subprocess.run(
        [sys.executable, "-c", "from pbm.cli import cli; cli()", "--home", str(home), "backup"],
        env=project_env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    for worker in workers:
        worker.join()
    assert backup.returncode == 0, backup.stderr
    assert failures == []
    assert len(before) >= 2 * BOARDS
    archive = backup.stdout.splitlines()[0].removeprefix("backup written: ")

    new_home = tmp_path / "restored"
    code, output = pbm(new_home, "restore", archive)
    assert code == 0, output
    store = Store.open(new_home / "pbm.db")
    try:
        assert store.integrity_check() == "ok"
        restored = {}
        for b in range(BOARDS):
            row = store.boards.get("knightpanic", 101 + b)
            texts = [p.text for p in store.boards.plies(row.id)]
            assert texts == boards[b][: len(texts)], "a board is one committed state, not torn"
            restored.update({f"b{101 + b}-p{ply}": text for ply, text in enumerate(texts, 1)})
    finally:
        store.close()
    missing = sorted(before - set(restored))
    assert missing == [], "every move acknowledged before the backup started is restored"
    assert Config.load(new_home).get("limits.commands_per_hour") == "1000000"
    print(
        f"\ndrill: {len(before)} moves acknowledged before the backup, "
        f"{len(restored)} in the backup, {BOARDS * PLIES} played in all"
    )
