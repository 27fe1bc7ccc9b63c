"""`make e2e`: pbm behind a real Postfix on this machine, installed the README's way.

The session fixture installs Postfix (and cron, python3-venv) from the distribution when
missing, configures a throwaway instance on the loopback interface, runs deploy/install.sh
and deploy/postfix.sh exactly as the README tells an operator to, and on the way out stops
every daemon it started and restores every file it changed, whatever happened in between.
Needs root; refuses to touch a host that already has /srv/pbm or a `pbm` user.
"""

import os
import pwd
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INSTALL_DIR = Path("/srv/pbm")
PBM_HOME = INSTALL_DIR / "home"
WORK = Path("/var/tmp/pbm-e2e")
MAILLOG = WORK / "maillog"
MAILDIRS = WORK / "mail"
SERVER_DOMAIN = "games.example.org"
SERVER = f"pbm@{SERVER_DOMAIN}"
PLAYER_DOMAIN = "players.test"
PLAYERS = ("alice", "bob")
POSTFIX_FILES = ("main.cf", "master.cf", "transport", "transport.db")
PACKAGES = ("postfix", "cron", "python3-venv")
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
        raise AssertionError(f"{' '.join(argv)} exited {result.returncode}\n{result.stdout}{result.stderr}")
    return result


def as_pbm(*argv, check=False, **kwargs):
    return run("runuser", "-u", "pbm", "--", "env", f"PBM_HOME={PBM_HOME}", *argv, check=check, **kwargs)


def postfix_running() -> bool:
    return shutil.which("postfix") is not None and run("postfix", "status", check=False).returncode == 0


def missing_packages():
    return [p for p in PACKAGES if run("dpkg", "-s", p, check=False).returncode != 0]


def install_packages(packages, undo):
    """apt-get install without letting the packages start their daemons."""
    policy = Path("/usr/sbin/policy-rc.d")
    if not policy.exists():
        policy.write_text("#!/bin/sh\nexit 101\n")
        policy.chmod(0o755)
        undo.append(policy.unlink)
    subprocess.run(
        ["debconf-set-selections"], input="postfix postfix/main_mailer_type select No configuration\n",
        text=True, check=True,
    )
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages], check=True, env=env)


def keep_file(path: Path, undo):
    """Put `path` back as it was (or remove it) at the end."""
    if path.exists():
        backup = WORK / "backup" / path.name
        backup.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, backup)
        undo.append(lambda: shutil.copy2(backup, path))
    else:
        undo.append(lambda: path.unlink(missing_ok=True))


def port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


def copy_source():
    """The checkout as an operator would have it in /srv/pbm: no venv, no local state."""
    shutil.copytree(
        ROOT, INSTALL_DIR, symlinks=True,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", ".demo-home", "__pycache__", ".pytest_cache", ".hypothesis", "*.egg-info", "build",
        ),
    )


def run_undo(undo):
    failures = []
    for step in reversed(undo):
        try:
            step()
        except Exception as error:  # every later step must still run
            failures.append(f"{getattr(step, '__name__', step)}: {error}")
    return failures


@pytest.fixture(scope="session")
def mail_host():
    if os.geteuid() != 0:
        pytest.fail("make e2e needs root: it installs Postfix and creates the pbm user")
    for sign, what in ((INSTALL_DIR.exists(), str(INSTALL_DIR)), (_user_exists("pbm"), "a pbm user")):
        if sign:
            pytest.fail(f"this host already has {what}; make e2e only runs where it can clean up after itself")
    undo = []
    try:
        shutil.rmtree(WORK, ignore_errors=True)
        WORK.mkdir(parents=True)
        undo.append(lambda: shutil.rmtree(WORK, ignore_errors=True))
        missing = missing_packages()
        if missing:
            install_packages(missing, undo)
        was_running = postfix_running()
        if was_running:
            run("postfix", "stop")
            undo.append(lambda: run("postfix", "start"))
        assert port_is_free(25) and port_is_free(2525), "ports 25 and 2525 must be free"
        for name in POSTFIX_FILES:
            keep_file(Path("/etc/postfix") / name, undo)
        Path("/etc/postfix/main.cf").write_text(MAIN_CF)
        # Services outside a chroot need no copies of /etc files under the spool.
        run("postconf", "-F", "*/*/chroot = n")
        MAILDIRS.mkdir()
        os.chown(MAILDIRS, NOBODY, NOBODY)
        (WORK / "mailboxes").write_text("".join(f"{p}@{PLAYER_DOMAIN} {p}/\n" for p in PLAYERS))
        MAILLOG.touch()
        run("postfix", "check")
        run("postfix", "start")
        undo.append(lambda: run("postfix", "stop", check=False))

        copy_source()
        undo.append(lambda: shutil.rmtree(INSTALL_DIR, ignore_errors=True))
        undo.append(lambda: run("userdel", "pbm", check=False) if _user_exists("pbm") else None)
        run("sh", str(INSTALL_DIR / "deploy" / "install.sh"))
        with open(PBM_HOME / "pbm.ini", "a", encoding="utf-8") as ini:
            ini.write("\n" + (INSTALL_DIR / "deploy" / "pbm.ini").read_text())
        run("sh", str(INSTALL_DIR / "deploy" / "postfix.sh"))
        yield undo
    finally:
        failures = run_undo(undo)
        if failures:
            print("cleanup failed:", *failures, sep="\n  ")


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
            pytest.fail(f"gave up waiting for {what}\n--- mail log ---\n{MAILLOG.read_text()[-4000:]}")
        time.sleep(0.2)
