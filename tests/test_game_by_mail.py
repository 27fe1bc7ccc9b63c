"""A complete Knight Panic game played by mail, from challenge to win, through mail_handler.py."""

import subprocess
import sys

import pytest
from click.testing import CliRunner

from pbm.cli import cli
from tests.conftest import ROOT
from tests.mailpipe import inbox, send

MOVES = ["c1-a5", "a7-c3", "g1-e5", "c7-a3", "e5-a7", "a3-c7", "a5-c1", "c7-e3", "e1-c5"]


@pytest.mark.parametrize("size", [4])
def test_full_game_by_mail(project_env, tmp_path, size):
    home = tmp_path / "home"
    assert CliRunner().invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    seen = set()
    send(project_env, "alice@example.org", "signup alice pw-alice")
    send(project_env, "Bob <bob@example.org>", "signup bob pw-bob")
    got = inbox(home, seen)
    assert [m["Subject"] for m in got["alice@example.org"]] == ["Account alice created"]
    assert [m["Subject"] for m in got["bob@example.org"]] == ["Account bob created"]

    send(project_env, "alice@example.org", "knightpanic challenge alice bob")
    got = inbox(home, seen)
    for address in ("alice@example.org", "bob@example.org"):
        [mail] = got[address]
        assert mail["Subject"] == "KnightPanic Board 101: alice vs bob"

    passwords = {"alice": "pw-alice", "bob": "pw-bob"}
    for ply, move in enumerate(MOVES, start=1):
        mover, waiting = ("alice", "bob") if ply % 2 else ("bob", "alice")
        # A stale or out-of-turn mail first: refused to the sender only, nothing changes.
        send(
            project_env,
            f"{waiting}@example.org",
            f"knightpanic move 101 {waiting} {passwords[waiting]} {move}",
        )
        got = inbox(home, seen)
        assert list(got) == [f"{waiting}@example.org"]
        assert got[f"{waiting}@example.org"][0]["Subject"] == "KnightPanic Board 101: alice vs bob"
        assert (
            "It is not your move"
            in got[f"{waiting}@example.org"][0].get_body(("plain",)).get_content()
        )

        send(
            project_env,
            f"{mover}@example.org",
            f"knightpanic move 101 {mover} {passwords[mover]} {move}#{ply}",
            body=f"ply {ply}",
        )
        got = inbox(home, seen)
        assert sorted(got) == ["alice@example.org", "bob@example.org"]
        for [mail] in got.values():
            body = mail.get_body(("plain",)).get_content()
            assert f"{mover} writes:\nply {ply}" in body
            if ply < len(MOVES):
                assert mail["Subject"] == "KnightPanic Board 101: alice vs bob"
                assert f"It is {waiting}'s turn." in body
            else:
                assert mail["Subject"] == "KnightPanic Board 101: alice vs bob"
                assert "Game won by alice." in body
                assert "(Black's knight on g7 cannot move)" in body
                assert "   9 e1-c5" in body and "   1 c1-a5      2 a7-c3" in body
                assert "  5   .[o]. .   5" in body and "  1   o o[.].   1" in body
                assert "Game ended......" in body

    send(project_env, "bob@example.org", "knightpanic move 101 bob pw-bob a3-c7")
    [refusal] = inbox(home, seen)["bob@example.org"]
    assert "The game has ended" in refusal.get_body(("plain",)).get_content()


def test_the_demo_plays_to_the_win(tmp_path, project_env):
    env = dict(project_env, PBM_HOME=str(tmp_path / "demo"))
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "demo.py")],
        env=env,
        cwd=ROOT,
        capture_output=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr.decode()
    output = result.stdout.decode()
    assert "Game won by alice." in output
    assert "wonderland" not in output and "builder1" not in output
    # Every move is a reply: no move command is sent, each reply goes to a +token address.
    assert "knightpanic move" not in output.replace("knightpanic move 101 alice <password>", "")
    assert output.count("replies to pbm+") == 9
    assert "bob writes:\n    Your a7 knight looks lonely." in output
