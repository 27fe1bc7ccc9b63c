"""`make e2e`: pbm behind a real Postfix on this machine, installed the README's way.

The session fixture installs Postfix (and cron, python3-venv) from the distribution when
missing, configures a throwaway instance on the loopback interface, runs deploy/install.sh
and deploy/postfix.sh exactly as the README tells an operator to, and on the way out stops
every daemon it started and restores every file it changed, whatever happened in between.
Needs root; refuses to touch a host that already has /srv/pbm or a `pbm` user.
"""

import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INSTALL_DIR = Path("/srv/pbm")
PBM_HOME = INSTALL_DIR / "home"
WORK = Path("/var/tmp/pbm-e2e")
MAILLOG = WORK / "maillog"
MAILDIRS = WORK / "mail"
JOURNAL = Path("/var/tmp/pbm-e2e.journal")
SERVER_DOMAIN = "games.example.org"
SERVER = f"pbm@{SERVER_DOMAIN}"
PLAYER_DOMAIN = "players.test"
PLAYERS = ("alice", "bob")
MAILBOXES = (*PLAYERS, "carol")  # carol plays in test_signed_mail.py
POSTFIX_FILES = ("main.cf", "master.cf", "transport", "transport.db")
PACKAGES = ("postfix", "cron", "python3-venv", "opendkim", "opendkim-tools")
DKIM_KEYS = Path("/etc/dkimkeys")
DKIM_RECORD = DKIM_KEYS / "pbm.txt"
OPENDKIM_PID = Path("/run/opendkim/opendkim.pid")
NOBODY = 65534
# Long enough for a slow machine; the busy timeout of the database alone is 30 seconds.
DELIVERY_DEADLINE_SECONDS = 180

# The test instance: loopback only, players' mail in Maildirs, a log file instead of syslog.
# deploy/postfix.sh then adds the server's own routing on top, as on a real host.
MAIN_CF = f"""\
compatibility_level = 3.6
myhostname = mx.{SERVER_DOMAIN}
mydomain = {SERVER_DOMAIN}
myorigin = $myhostname
mydestination = $myhostname, localhost
inet_interfaces = loopback-only
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
alias_maps =
alias_database =
biff = no
append_dot_mydomain = no
smtputf8_enable = no
maillog_file = {MAILLOG}
virtual_mailbox_domains = {PLAYER_DOMAIN}
virtual_mailbox_base = {MAILDIRS}
virtual_mailbox_maps = texthash:{WORK}/mailboxes
virtual_uid_maps = static:{NOBODY}
virtual_gid_maps = static:{NOBODY}
"""


def run(*argv, check=True, **kwargs):
    result = subprocess.run(argv, text=True, capture_output=True, **kwargs)
    if check and result.returncode:
        raise AssertionError(
            f"{' '.join(argv)} exited {result.returncode}\n{result.stdout}{result.stderr}"
        )
    return result


def as_pbm(*argv, check=False, **kwargs):
    return run(
        "runuser", "-u", "pbm", "--", "env", f"PBM_HOME={PBM_HOME}", *argv, check=check, **kwargs
    )


def postfix_running() -> bool:
    return (
        shutil.which("postfix") is not None
        and run("postfix", "status", check=False).returncode == 0
    )


def missing_packages():
    return [p for p in PACKAGES if run("dpkg", "-s", p, check=False).returncode != 0]


def install_packages(packages, journal):
    """apt-get install without letting the packages start their daemons."""
    policy = Path("/usr/sbin/policy-rc.d")
    if not policy.exists():
        policy.write_text("#!/bin/sh\nexit 101\n")
        policy.chmod(0o755)
        journal.add("remove", str(policy))
    subprocess.run(
        ["debconf-set-selections"],
        input="postfix postfix/main_mailer_type select No configuration\n",
        text=True,
        check=True,
    )
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages],
        check=True,
        env=env,
    )


def keep_file(path: Path, journal):
    """Put `path` back as it was (or remove it) at the end."""
    if path.exists():
        backup = WORK / "backup" / path.name
        backup.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, backup)
        journal.add("restore", str(path), str(backup))
    else:
        journal.add("remove", str(path))


def port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


def copy_source():
    """The checkout as an operator would have it in /srv/pbm: no venv, no local state."""
    shutil.copytree(
        ROOT,
        INSTALL_DIR,
        symlinks=True,
        ignore=shutil.ignore_patterns(
            ".git",
            ".venv",
            ".demo-home",
            "__pycache__",
            ".pytest_cache",
            ".hypothesis",
            "*.egg-info",
            "build",
        ),
    )


class Journal:
    """Every change this run makes to the host, with how to undo it, kept on disk so that
    a run killed halfway is undone by the next one before it starts."""

    def __init__(self, path: Path):
        self.path = path
        self.steps = json.loads(path.read_text()) if path.exists() else []

    def add(self, action: str, *args) -> list:
        step = [action, *args]
        self.steps.append(step)
        self._save()
        return step

    def discard(self, step: list):
        """The change was undone on the spot."""
        self.steps.remove(step)
        self._save()

    def _save(self):
        partial = self.path.with_suffix(".partial")
        partial.write_text(json.dumps(self.steps))
        partial.replace(self.path)

    def undo(self) -> list[str]:
        failures = []
        while self.steps:
            action, *args = step = self.steps[-1]
            try:
                UNDO[action](*args)
            except Exception as error:  # every earlier change must still be undone
                failures.append(f"{step}: {error}")
            self.discard(step)
        self.path.unlink(missing_ok=True)
        return failures


def _stop_process(pid: int):
    """Stop the pbm user's process `pid` (after a crash, only if that is still what it is)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        owner = int(status.split("\nUid:\t", 1)[1].split()[0])
        if owner != pwd.getpwnam("pbm").pw_uid:
            return
        os.kill(pid, signal.SIGTERM)
    except (OSError, KeyError, IndexError):
        return
    for _ in range(300):
        if (
            not Path(f"/proc/{pid}").exists()
            or "State:\tZ" in Path(f"/proc/{pid}/status").read_text()
        ):
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)


def _stop_daemon(pid_file: str):
    """Stop the daemon whose pid the file holds (OpenDKIM), and wait for it to go."""
    try:
        pid = int(Path(pid_file).read_text().split()[0])
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError, IndexError):
        return
    for _ in range(300):
        if not Path(f"/proc/{pid}").exists():
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)


UNDO = {
    "restore": lambda path, backup: shutil.copy2(backup, path),
    "remove": lambda path: Path(path).unlink(missing_ok=True),
    "remove tree": lambda path: shutil.rmtree(path, ignore_errors=True),
    "run": lambda *argv: run(*argv, check=False),
    "stop process": _stop_process,
    "stop daemon": _stop_daemon,
}


def _interrupted(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_configure(config):
    # Killed by a timeout, the run still undoes its changes on the way out.
    signal.signal(signal.SIGTERM, _interrupted)


def pytest_collection_modifyitems(session, config, items):
    """The replication drill runs last: it kills the home's processes, removes the home and
    restores it from the replica three times, so the tests that share the installation
    (test_mail_server.py, then test_signed_mail.py) run on the home as they made it."""
    items.sort(key=lambda item: item.path.name == "test_replication_drill.py")


@pytest.fixture(scope="session")
def mail_host():
    if os.geteuid() != 0:
        pytest.fail("make e2e needs root: it installs Postfix and creates the pbm user")
    journal = Journal(JOURNAL)
    try:
        # A run killed halfway left its journal: undo what it did before looking at the host.
        journal.undo()
        for sign, what in (
            (INSTALL_DIR.exists(), str(INSTALL_DIR)),
            (_user_exists("pbm"), "a pbm user"),
        ):
            if sign:
                pytest.fail(
                    f"this host already has {what}; make e2e only runs where it can clean up after itself"
                )
        journal.add("remove tree", str(WORK))
        shutil.rmtree(WORK, ignore_errors=True)
        WORK.mkdir(parents=True)
        missing = missing_packages()
        if missing:
            install_packages(missing, journal)
        if postfix_running():
            journal.add("run", "postfix", "start")
            run("postfix", "stop")
        assert port_is_free(25) and port_is_free(2525), "ports 25 and 2525 must be free"
        for name in POSTFIX_FILES:
            keep_file(Path("/etc/postfix") / name, journal)
        Path("/etc/postfix/main.cf").write_text(MAIN_CF)
        # Services outside a chroot need no copies of /etc files under the spool.
        run("postconf", "-F", "*/*/chroot = n")
        MAILDIRS.mkdir()
        os.chown(MAILDIRS, NOBODY, NOBODY)
        (WORK / "mailboxes").write_text("".join(f"{p}@{PLAYER_DOMAIN} {p}/\n" for p in MAILBOXES))
        MAILLOG.touch()
        run("postfix", "check")

        journal.add("remove tree", str(INSTALL_DIR))
        copy_source()
        journal.add("run", "userdel", "pbm")
        run("sh", str(INSTALL_DIR / "deploy" / "install.sh"))
        with open(PBM_HOME / "pbm.ini", "a", encoding="utf-8") as ini:
            ini.write("\n" + (INSTALL_DIR / "deploy" / "pbm.ini").read_text())
        # Stopped before the user goes: no pipe may still run as pbm by then.
        journal.add("run", "postfix", "stop")
        run("postfix", "start")
        run("sh", str(INSTALL_DIR / "deploy" / "postfix.sh"))
        sign_with_opendkim(journal)
        yield journal
    finally:
        failures = journal.undo()
        if failures:
            print("cleanup failed:", *failures, sep="\n  ")


def sign_with_opendkim(journal):
    """deploy/dkim.sh as the README says, then OpenDKIM started as its unit would (this
    host may have no systemd), stopped at the end before its files go."""
    keep_file(Path("/etc/opendkim.conf"), journal)
    for name in ("pbm.private", "pbm.txt"):
        journal.add("remove", str(DKIM_KEYS / name))
    run("sh", str(INSTALL_DIR / "deploy" / "dkim.sh"))
    if not OPENDKIM_PID.parent.exists():
        journal.add("remove tree", str(OPENDKIM_PID.parent))
        run("install", "-d", "-o", "opendkim", "-g", "opendkim", str(OPENDKIM_PID.parent))
    journal.add("stop daemon", str(OPENDKIM_PID))
    run("opendkim", "-x", "/etc/opendkim.conf")
    wait_for(lambda: not port_is_free(8891), "OpenDKIM to listen on 127.0.0.1:8891", 30)


def dkim_public_record() -> bytes:
    """The DKIM record the milter's key asks for, as DNS would give it (no DNS here)."""
    sys.path.insert(0, str(ROOT))
    from pbm.dnsrecords import public_key_value

    return f"v=DKIM1; k=rsa; p={public_key_value(DKIM_RECORD.read_text())}".encode()


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def wait_for(condition, what: str, deadline=DELIVERY_DEADLINE_SECONDS):
    """Poll until `condition()` is true; mail through a real MTA arrives when it arrives."""
    end = time.monotonic() + deadline
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            pytest.fail(
                f"gave up waiting for {what}\n--- mail log ---\n{MAILLOG.read_text()[-4000:]}"
            )
        time.sleep(0.2)
