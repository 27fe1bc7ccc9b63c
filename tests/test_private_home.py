"""The home is private whatever the umask (docs/security.md, issue 25): folders 0700, files
0600, from every writer (the CLI, the pipe, `pbm serve`, cron jobs, backups), and `pbm
check` names whatever others could read. Tried as another user where the tests run as
root: nobody can read a reset code out of the outbox."""

import logging
import os
import signal
import smtplib
import stat
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from pbm.cli import cli
from pbm.config import Config
from pbm.intake import alert_operator, process_message
from pbm.mailin import setup_logging
from pbm.private import shared_paths
from pbm.store import Store
from tests.conftest import GENEROUS_LIMITS, PBM, ROOT, start_serve
from tests.mailpipe import command_mail, pipe

UMASKS = [0o022, 0o000]
OPERATOR = "operator@example.org"


@contextmanager
def umask(mask):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def modes(top: Path) -> dict:
    """Path (relative to top) -> permission bits, for everything under top."""
    found = {".": stat.S_IMODE(top.stat().st_mode)}
    for path in top.rglob("*"):
        found[str(path.relative_to(top))] = stat.S_IMODE(path.lstat().st_mode)
    return found


def assert_private(top: Path, *expected):
    """Folders 0700 and files 0600, and each of `expected` there."""
    found = modes(top)
    wrong = {
        name: f"{mode:04o}"
        for name, mode in found.items()
        if mode != (0o700 if (top / name).is_dir() else 0o600)
    }
    assert wrong == {}, f"not private under {top}: {wrong}"
    assert set(expected) <= set(found), sorted(set(expected) - set(found))
    assert list(shared_paths(top)) == []


def pbm_in_process(home, *args):
    result = CliRunner().invoke(cli, ["--home", str(home), *args])
    assert result.exit_code == 0, result.output
    return result.output


@contextmanager
def own_log_handler():
    """setup_logging as a new process runs it: the pbm logger without handlers."""
    root = logging.getLogger("pbm")
    saved = root.handlers[:]
    root.handlers = []
    try:
        yield
    finally:
        for handler in root.handlers:
            handler.close()
        root.handlers = saved


@pytest.mark.parametrize("mask", UMASKS, ids=lambda m: f"umask {m:03o}")
def test_every_writer_keeps_the_home_private_in_process(tmp_path, mask):
    """pbm's own writers ask for private modes: true even in a process that did not set
    the umask (a script importing pbm, the tests' harness)."""
    home, restored, backups = tmp_path / "home", tmp_path / "restored", tmp_path / "a" / "b"
    with umask(mask), own_log_handler():
        pbm_in_process(home, "init")
        with open(home / "pbm.ini", "a") as ini:
            ini.write(GENEROUS_LIMITS + f"[server]\noperator_address = {OPERATOR}\n")
        for userid in ("alice", "bob"):
            pbm_in_process(home, "signup", userid, "secret", f"{userid}@example.org")
        pbm_in_process(home, "knightpanic", "challenge", "alice", "bob")
        config = Config.load(home)
        setup_logging(config)
        open_meanwhile = Store.open(home / "pbm.db")  # keeps -wal and -shm in place
        try:
            raw = command_mail("alice@example.org", "knightpanic move 101 alice secret c1-e5")
            assert process_message(raw, len(raw), None, config=config).consumed
            process_message(b"no mail at all", 14, None, config=config)  # logged
            alert_operator(home, "robot", "pbm: a robot failed", "it did")  # alert state
            pbm_in_process(home, "forgot", "bob")
            assert_private(
                home,
                "pbm.db-wal",
                "pbm.db-shm",
                "log/pbm.log",
                "log/alerts.json",
                "pbm.lock",
                "cache/templates",
            )
        finally:
            open_meanwhile.close()
        pbm_in_process(home, "cleanup")
        archive = pbm_in_process(home, "backup").split("backup written: ")[1].split()[0]
        pbm_in_process(home, "backup", str(backups))
        pbm_in_process(restored, "restore", archive)
    assert_private(home, "pbm.ini", "secret.key", "outbox/new", "backups")
    assert_private(restored, "pbm.db", "pbm.ini", "secret.key", "outbox/tmp")
    assert_private(tmp_path / "a", "b")
    assert len(list((home / "outbox" / "new").iterdir())) >= 5


def test_every_pbm_process_keeps_the_home_private_under_umask_000(tmp_path, project_env):
    """The `pbm` command and mail_handler.py set umask 077 first: what libraries create
    for them (SQLite's files, jinja2's cache) is private too."""
    home = Path(project_env["PBM_HOME"])

    def run(*args):
        result = subprocess.run(
            [str(PBM), *args], env=project_env, capture_output=True, umask=0, timeout=120
        )
        assert result.returncode == 0, result.stderr.decode()
        return result.stdout.decode()

    run("init")
    with open(home / "pbm.ini", "a") as ini:
        ini.write(GENEROUS_LIMITS)
    run("signup", "alice", "secret", "alice@example.org")
    run("signup", "bob", "secret", "bob@example.org")
    with umask(0):  # pipe() and start_serve() start their processes with the caller's
        assert pipe(project_env, command_mail("bob@example.org", "forgot alice")).returncode == 0
        process, port = start_serve(project_env, home)
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=30) as client:
            client.sendmail(
                "alice@example.org",
                ["pbm@localhost"],
                command_mail("alice@example.org", "knightpanic challenge alice bob"),
            )
        assert_private(home, "pbm.db-wal", "pbm.db-shm", "log/pbm.log")
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    run("cleanup")
    run("backup")
    run("outbox", "flush")
    assert_private(home, "pbm.db", "pbm.ini", "secret.key", "log/pbm.log", "backups")
    assert "is ready for mail" in run("check")


def read_as_nobody(paths) -> dict:
    """What user nobody gets from `cat` for each path: its text, or Permission denied.
    cat, since the tests' Python may live where nobody cannot run it (/root/.pyenv)."""
    found = {}
    for path in paths:
        result = subprocess.run(
            ["cat", str(path)],
            user="nobody",
            group="nogroup" if _group_exists("nogroup") else "nobody",
            extra_groups=[],
            capture_output=True,
            timeout=60,
            cwd="/",
        )
        if result.returncode == 0:
            found[str(path)] = result.stdout.decode(errors="replace")
        else:
            found[str(path)] = (
                "Permission denied"
                if b"Permission denied" in result.stderr
                else (result.stderr.decode())
            )
    return found


def _group_exists(name) -> bool:
    import grp

    try:
        grp.getgrnam(name)
    except KeyError:
        return False
    return True


def test_another_user_reads_no_reset_code_out_of_a_home_made_under_umask_022(project_env):
    """The issue's attack, as user nobody where the tests run as root (CI does); elsewhere
    the modes that stop it are checked."""
    with tempfile.TemporaryDirectory() as parent:
        Path(parent).chmod(0o755)  # the home's parent lets anyone through, as /srv does
        home = Path(parent) / "home"
        env = dict(project_env, PBM_HOME=str(home))
        with umask(0o022):
            init = subprocess.run([str(PBM), "init"], env=env, capture_output=True)
            assert init.returncode == 0
            (home / "pbm.ini").write_text(GENEROUS_LIMITS)
            subprocess.run([str(PBM), "signup", "bob", "secret", "bob@example.org"], env=env)
            assert pipe(env, command_mail("bob@example.org", "forgot bob")).returncode == 0
            public = Path(parent) / "public.txt"
            public.write_text("anyone may read this")
        mails = sorted((home / "outbox" / "new").iterdir())
        [reset] = [m for m in mails if b"Your reset code is:" in m.read_bytes()]
        secrets = [reset, home / "pbm.db", home / "pbm.ini", home / "secret.key"]
        if os.geteuid() != 0:
            assert_private(home, "pbm.db", "pbm.ini", "secret.key", "outbox/new")
            return
        read = read_as_nobody([public, *secrets])
        assert read[str(public)] == "anyone may read this"  # the test can tell a read
        assert {str(path): read[str(path)] for path in secrets} == {
            str(path): "Permission denied" for path in secrets
        }


def test_pbm_check_names_what_others_can_read_with_the_cure(tmp_path):
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    pbm_in_process(home, "init")
    with open(home / "pbm.ini", "a") as ini:
        ini.write(f"[backup]\ndir = {elsewhere}\n")
    pbm_in_process(home, "signup", "alice", "secret", "alice@example.org")
    pbm_in_process(home, "backup")
    home.chmod(0o755)
    (home / "pbm.db").chmod(0o644)
    (home / "pbm.ini").chmod(0o640)
    [mail] = (home / "outbox" / "new").iterdir()
    mail.chmod(0o604)
    elsewhere.chmod(0o750)
    result = CliRunner().invoke(cli, ["--home", str(home), "check"])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.startswith("problem:")]
    assert sorted(lines) == sorted(
        [
            f"problem: {home} is open to others (mode 0755, the home must be private) "
            f"-- chmod 700 {home}",
            f"problem: {home / 'pbm.db'} is open to others (mode 0644, the home must be "
            f"private) -- chmod 600 {home / 'pbm.db'}",
            f"problem: {home / 'pbm.ini'} is open to others (mode 0640, the home must be "
            f"private) -- chmod 600 {home / 'pbm.ini'}",
            f"problem: {mail} is open to others (mode 0604, the home must be private) "
            f"-- chmod 600 {mail}",
            f"problem: {elsewhere} is open to others (mode 0750, the home must be private) "
            f"-- chmod 700 {elsewhere}",
        ]
    )
    assert "others can read" in result.output and "is ready for mail" not in result.output
    for line in lines:  # the cure given is the cure
        subprocess.run(line.split(" -- ")[1].split(), check=True)
    result = CliRunner().invoke(cli, ["--home", str(home), "check"])
    assert result.exit_code == 0, result.output


def test_pbm_check_names_the_first_twenty_then_one_cure_for_all(tmp_path):
    home = tmp_path / "home"
    pbm_in_process(home, "init")
    for n in range(30):
        path = home / "outbox" / "cur" / f"old-{n:02d}.pbm"
        path.write_bytes(b"mail from before")
        path.chmod(0o644)
    result = CliRunner().invoke(cli, ["--home", str(home), "check"])
    lines = [line for line in result.output.splitlines() if line.startswith("problem:")]
    assert len(lines) == 21 and result.exit_code == 1
    assert lines[-1] == (
        f"problem: 10 more files and folders are open to others -- chmod -R go= {home}"
    )
    subprocess.run(["chmod", "-R", "go=", str(home)], check=True)
    assert CliRunner().invoke(cli, ["--home", str(home), "check"]).exit_code == 0


def test_install_sh_makes_the_home_private_before_pbm_init_runs():
    """deploy/install.sh (run for real by make e2e): the home is made 0700 for the pbm
    user, without the shell files of /etc/skel that others could read."""
    script = (ROOT / "deploy" / "install.sh").read_text().splitlines()
    make_home = "install -d -o pbm -g pbm -m 0700 /srv/pbm/home"
    assert make_home in script
    assert any("--no-create-home" in line for line in script if line.startswith("useradd"))
    assert script.index(make_home) < next(
        i for i, line in enumerate(script) if line.endswith("pbm init")
    )
