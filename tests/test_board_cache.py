"""Boards kept between commands (pbm/boardcache.py): a server that stays open, as `pbm
serve`'s writer does, keeps the positions it committed; it must never serve a stale one,
whoever else writes the database (another connection, the mail pipe in another process)
and whatever is rolled back."""

import signal
import smtplib
import subprocess
import sys
from contextlib import ExitStack

import pytest

from pbm.boards import Board
from pbm.context import Context
from pbm.dispatch import open_server
from pbm.mailin import build_request
from pbm.request import Request
from tests.conftest import GENEROUS_LIMITS, ROOT, start_serve
from tests.test_serve import command, outbox

PLAYERS = ("alice", "bob")


def fresh_view(config, number=101):
    """The board as a server that kept nothing replays it from the log: its state line, its
    moves and its position."""
    with open_server(config) as server:
        return view_of(server, number)


def view_of(server, number):
    ctx = Context(server, Request(text="lox show"), None, {})
    board = Board(ctx, server.store.boards.get("lox", number))
    position = board.position
    return (
        position.state,
        list(position.holders),
        list(position.statuses),
        list(position.time_used),
        [tuple(p) for p in position.plies],
        board.row.status,
    )


def next_move(config, number=101, pick=0):
    """(userid on move, a legal move) of the board, read afresh."""
    with open_server(config) as server:
        ctx = Context(server, Request(text="lox show"), None, {})
        board = Board(ctx, server.store.boards.get("lox", number))
        seat = board.position.to_move()
        moves = sorted(board.game.legal_moves(board.position.state, seat))
        return board.position.holders[seat], moves[pick % len(moves)]


def play(server, userid, text, number=101):
    request = build_request(
        f"lox move {number} {userid} secret {text}", "", f"{userid}@example.org"
    )
    return server.execute(request)


@pytest.fixture
def home(harness):
    harness.signup(*PLAYERS)
    harness.challenge("lox challenge alice bob -size=9")
    return harness


def test_a_kept_board_follows_every_other_writer_and_every_rollback(home):
    config = home.config
    with ExitStack() as stack:
        kept = stack.enter_context(open_server(config))

        def check():
            assert view_of(kept, 101) == fresh_view(config)

        # The kept server plays, then another connection, then the kept one again: it must
        # see the other's ply (it is that player's turn only after it).
        for _ in range(3):
            userid, move = next_move(config)
            assert play(kept, userid, move).ok
            check()
            userid, move = next_move(config)
            with open_server(config) as other:
                assert play(other, userid, move).ok
            check()

        # A refused move rolls its savepoint back; the board kept is the committed one.
        userid, _ = next_move(config)
        assert not play(kept, userid, "z99").ok
        check()

        # A group that fails after a move is rolled back whole; another writer then plays
        # a different move at the same ply (its log row takes the id the rolled-back one
        # had): the kept server must play after that move, not after the rolled-back one.
        userid, first = next_move(config, pick=0)
        with pytest.raises(RuntimeError):
            with kept.batch() as batch:
                assert batch.run(lambda: play(kept, userid, first)).ok
                raise RuntimeError("the group's sync failed")
        _, other_move = next_move(config, pick=1)
        assert other_move != first
        with open_server(config) as other:
            assert play(other, userid, other_move).ok
        check()
        opponent, reply = next_move(config)
        assert play(kept, opponent, reply).ok
        check()

        # An undo accepted on another connection sets plies aside: fewer live plies.
        userid, _ = next_move(config)
        other_player = next(p for p in PLAYERS if p != userid)
        assert play(kept, other_player, "undo").ok
        with open_server(config) as other:
            assert play(other, userid, "accept").ok
        check()
        userid, move = next_move(config)
        assert play(kept, userid, move).ok
        check()

        # A draw agreed on the kept server finishes the board.
        userid, _ = next_move(config)
        assert play(kept, userid, "propose").ok
        other_player = next(p for p in PLAYERS if p != userid)
        assert play(kept, other_player, "accept").ok
        check()
        assert fresh_view(config)[-1] == "finished"


@pytest.fixture
def serving(project_env, tmp_path):
    from click.testing import CliRunner

    from pbm.cli import cli

    home = tmp_path / "home"
    runner = CliRunner()
    assert runner.invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    (home / "pbm.ini").write_text(GENEROUS_LIMITS)
    for userid in PLAYERS:
        runner.invoke(
            cli,
            ["--home", str(home), "--from", f"{userid}@example.org", "signup", userid, "secret"],
        )
    for _ in range(2):
        runner.invoke(
            cli,
            ["--home", str(home), "--from", "alice@example.org", "lox", "challenge"]
            + list(PLAYERS)
            + ["-size=9"],
        )
    process, port = start_serve(project_env, home)
    yield home, port, project_env
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=20) == 0


def test_pbm_serve_sees_the_moves_the_pipe_makes_on_its_boards(serving):
    """Alice's moves go to `pbm serve` over SMTP, Bob's through mail_handler.py in processes
    of their own, on two boards in turn: every move is legal only on the position that
    follows the other writer's last ply, and the last board mails of both writers show the
    board as a fresh replay of its log does."""
    from pbm.config import Config

    home, port, env = serving
    config = Config.load(home)
    for _ in range(6):
        for number in (101, 102):
            userid, move = next_move(config, number)
            subject = f"lox move {number} {userid} secret {move}"
            if userid == "alice":
                with smtplib.SMTP("127.0.0.1", port, timeout=30) as client:
                    client.send_message(command(subject, sender="alice@example.org"))
            else:
                raw = command(subject, sender="bob@example.org").as_bytes()
                subprocess.run(
                    [sys.executable, str(ROOT / "mail_handler.py")],
                    input=raw,
                    env=env,
                    cwd=ROOT,
                    check=True,
                    timeout=60,
                )
    mails = outbox(home)
    assert not [m for m in mails if "Error" in m["Subject"] or "error" in m["Subject"]]
    for number in (101, 102):
        plies = fresh_view(config, number)[4]
        assert len(plies) == 6
        last = [m for m in mails if f"Board {number}" in m["Subject"]][-1].get_content()
        assert f"): {plies[-1][4]}" in last
