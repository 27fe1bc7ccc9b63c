import sys

sys._called_from_test = True  # pbm loads no entry points under tests; we register games

import os
import socket
import subprocess
from pathlib import Path

import pytest

import games.knightline
import games.knightpanic
import games.knightvision
import games.lox
import games.uknight
from pbm.plugins import pm
from pbm.testing.mail import GENEROUS_LIMITS, Harness, body_of, error_text
from tests import toygame

ROOT = Path(__file__).resolve().parent.parent
# `make stress` sets PBM_STRESS=1: more processes, kills and fuzzing examples.
STRESS_FACTOR = 10 if os.environ.get("PBM_STRESS") else 1


def register(module, name):
    if pm.get_plugin(name) is None:
        pm.register(module, name=name)


for _module in (games.knightline, games.knightpanic, games.knightvision, games.lox, games.uknight):
    register(_module, _module.__name__.split(".")[-1])
register(toygame, "tally")

# The by-mail harness is pbm's own (pbm/testing/mail.py), as a plugin's tests use it.
__all__ = ["GENEROUS_LIMITS", "ROOT", "STRESS_FACTOR", "Harness", "body_of", "error_text"]


@pytest.fixture
def harness(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("PBM_HOME", str(home))
    monkeypatch.delenv("PBM_NOW", raising=False)
    return Harness(home)


@pytest.fixture
def clock(monkeypatch):
    """Set the server's clock: clock("2026-01-01T12:00:00")."""

    def set_time(moment: str):
        monkeypatch.setenv("PBM_NOW", moment)

    return set_time


@pytest.fixture
def project_env(tmp_path):
    """Environment for subprocesses: the project on the path, a fresh PBM_HOME."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)
    env["PBM_HOME"] = str(tmp_path / "home")
    env.pop("PBM_NOW", None)
    return env


@pytest.fixture
def challenged_home(project_env, tmp_path):
    """A home made by the CLI (the one PBM_HOME of project_env) where alice and bob, password
    `secret`, have Knight Panic board 101 and alice is on move: for tests that run pbm in a
    process of its own."""
    from click.testing import CliRunner

    from pbm.cli import cli

    home = tmp_path / "home"
    runner = CliRunner()
    assert runner.invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    (home / "pbm.ini").write_text(GENEROUS_LIMITS)
    for userid in ("alice", "bob"):
        runner.invoke(
            cli,
            ["--home", str(home), "--from", f"{userid}@example.org", "signup", userid, "secret"],
        )
    runner.invoke(cli, ["--home", str(home), "knightpanic", "challenge", "alice", "bob"])
    return home


PBM = Path(sys.executable).parent / "pbm"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_serve(env, home, stderr=subprocess.DEVNULL) -> tuple[subprocess.Popen, int]:
    """`pbm serve` for home on a free port of 127.0.0.1, once it says it listens."""
    port = free_port()
    process = subprocess.Popen(
        [str(PBM), "--home", str(home), "serve", "--port", str(port)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=stderr,
    )
    line = process.stdout.readline().decode()
    if "listening on 127.0.0.1" not in line:
        process.kill()
        _, err = process.communicate(timeout=30)
        raise AssertionError(f"pbm serve did not start: {line}{(err or b'').decode()}")
    return process, port
