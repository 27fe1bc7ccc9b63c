"""The outside path of docs/writing-games.md, kept from rotting: examples/nim is built and
installed as a distribution of its own, its own tests pass (pbm.testing.mail's harness
among them), a whole game of it is played by mail through mail_handler.py, found by its
entry point like any plugin, its board mails carry its picture and its robot plays."""

import io
import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner
from PIL import Image, ImageColor

from pbm.cli import cli
from pbm.drawing import ORANGE
from tests.conftest import PBM, ROOT
from tests.mailpipe import inbox, send

EXAMPLE = ROOT / "examples" / "nim"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The folder pip installed the example into, from a copy: the tree stays clean."""
    work = tmp_path_factory.mktemp("example")
    source = work / "source"
    shutil.copytree(
        EXAMPLE,
        source,
        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", ".pytest_cache"),
    )
    target = work / "site"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--target",
            str(target),
            str(source),
        ],
        capture_output=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr.decode()
    return target


def with_example(env, installed):
    return dict(env, PYTHONPATH=os.pathsep.join([str(ROOT), str(installed)]))


def test_the_installed_package_carries_its_templates(installed):
    templates = installed / "pbm_nim" / "templates"
    assert sorted(p.name for p in templates.iterdir()) == ["board.txt", "help.txt"]
    [dist_info] = installed.glob("pbm_nim-*.dist-info")
    assert "[pbm]\nnim = pbm_nim" in (dist_info / "entry_points.txt").read_text()


def test_the_example_passes_its_own_tests(installed, project_env):
    # -P: the example is imported from where pip put it, not from the source folder.
    result = subprocess.run(
        [
            sys.executable,
            "-P",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            str(EXAMPLE / "tests"),
        ],
        env=with_example(project_env, installed),
        cwd=installed,
        capture_output=True,
        timeout=600,
    )
    output = result.stdout.decode()
    assert result.returncode == 0, output + result.stderr.decode()
    assert " passed" in output and "failed" not in output


def test_a_whole_game_of_the_example_by_mail(installed, project_env, tmp_path):
    env = with_example(project_env, installed)
    home = tmp_path / "home"
    assert CliRunner().invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    seen = set()
    send(env, "alice@example.org", "signup alice pw-alice")
    send(env, "bob@example.org", "signup bob pw-bob")
    inbox(home, seen)

    send(env, "carol@example.org", "help nim")
    [help_mail] = inbox(home, seen)["carol@example.org"]
    help_text = help_mail.get_body(("plain",)).get_content()
    assert help_mail["Subject"] == "Help nim"
    assert "-heaps=N   heaps on the table, 2 to 5 (default 3)" in help_text
    assert "The start position:\n\n  a  o                  1" in help_text

    send(env, "alice@example.org", "nim challenge alice bob -heaps=2")
    got = inbox(home, seen)
    for address in ("alice@example.org", "bob@example.org"):
        [mail] = got[address]
        assert mail["Subject"] == "Nim Board 101: alice vs bob"
        assert "Options: -heaps=2" in mail.get_body(("plain",)).get_content()

    send(env, "bob@example.org", "nim move 101 bob pw-bob a1")
    [refusal] = inbox(home, seen)["bob@example.org"]
    assert "It is not your move" in refusal.get_body(("plain",)).get_content()
    send(env, "alice@example.org", "nim move 101 alice pw-alice b4")
    [refusal] = inbox(home, seen)["alice@example.org"]
    assert 'Invalid move "b4": heap b has 3 stones' in refusal.get_body(("plain",)).get_content()

    for ply, (player, move) in enumerate([("alice", "b2"), ("bob", "a1"), ("alice", "b1")], 1):
        send(env, f"{player}@example.org", f"nim move 101 {player} pw-{player} {move}#{ply}")
        got = inbox(home, seen)
        assert sorted(got) == ["alice@example.org", "bob@example.org"]
        body = got["bob@example.org"][0].get_body(("plain",)).get_content()
        assert f"Last move: {move}" in body
    assert "Game won by alice." in body
    assert "(First took the last stone)" in body
    assert "  a                     0\n  b                     0" in body


def pbm(env, home, *words) -> str:
    """The pbm command in a process of its own, which finds the example by its entry point."""
    result = subprocess.run(
        [str(PBM), "--home", str(home), *words], env=env, capture_output=True, timeout=300
    )
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout.decode()


def test_the_example_draws_its_board_in_mail_and_has_a_robot(installed, project_env, tmp_path):
    env = with_example(project_env, installed)
    home = tmp_path / "home"
    pbm(env, home, "init")
    added = pbm(env, home, "robots", "add", "nimbot", "nim", "mcts", "--seconds", "0.2")
    assert added == "Robot nimbot plays nim with mcts, 0.2s a move.\n"
    assert "  nim mcts: Monte Carlo tree search on Nim's rules\n" in pbm(
        env, home, "robots", "list"
    )
    seen = set()
    send(env, "alice@example.org", "signup alice pw-alice")
    send(env, "alice@example.org", "html alice pw-alice on")
    inbox(home, seen)

    send(env, "alice@example.org", "nim challenge alice nimbot -heaps=2")
    [board] = inbox(home, seen)["alice@example.org"]
    [picture] = [part for part in board.walk() if part.get_content_type() == "image/png"]
    image = Image.open(io.BytesIO(picture.get_content())).convert("RGB")
    colours = {colour for _, colour in image.getcolors(maxcolors=1 << 16)}
    assert ImageColor.getrgb(ORANGE) in colours, "the heaps' discs"

    send(env, "alice@example.org", "nim move 101 alice pw-alice a1")
    inbox(home, seen)
    assert "nim move 101 nimbot <robot> b3#2" in pbm(env, home, "robots", "run")
    [end] = inbox(home, seen)["alice@example.org"]
    text = end.get_body(("plain",)).get_content()
    assert "Last move: b3" in text and "Game won by nimbot." in text
