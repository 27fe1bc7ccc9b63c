"""Robots (docs/spec/server.md §11.7): the search, and robot accounts playing by mail."""

import email
import email.policy
import random
import re
import signal
import smtplib
import time

import pytest
from click.testing import CliRunner

from games.knightline import KnightLine
from games.knightpanic import KnightPanic, solver
from games.lox import Lox
from pbm import hookimpl
from pbm.boards import Board
from pbm.cli import cli
from pbm.config import Config
from pbm.context import Context
from pbm.dispatch import open_server
from pbm.game import Outcome
from pbm.plugins import pm
from pbm.request import Request
from pbm.robots import Robot, get_robots
from pbm.robots.mcts import Budget, immediate_win, is_safe, proven_lost, rewards, search
from pbm.robots.runner import decide, pending_tasks, run_robots
from tests.conftest import GENEROUS_LIMITS, start_serve
from tests.mailpipe import inbox, send
from tests.test_serve import command, outbox


def engine_of(game, seats=2, seed=1, **options):
    full = {**{o.name: o.default for o in game.options}, **options}
    return game.engine(game.initial_state(full, seats, seed))


def random_positions(game, seats=2, count=200, seed=7, **options):
    """Positions reached by random play, the game still going."""
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        engine = engine_of(game, seats, **options)
        for _ in range(rng.randrange(0, 40)):
            if engine.outcome() is not None:
                break
            moves = engine.legal_moves()
            engine.play(moves[rng.randrange(len(moves))])
        if engine.outcome() is None:
            found.append(engine)
    return found


# -- the search --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "game, seats, options",
    [(KnightPanic(), 2, {"size": 5}), (Lox(), 2, {"size": 9}), (KnightLine(), 3, {})],
)
def test_a_seed_and_a_playout_budget_give_the_same_search(game, seats, options):
    engine = engine_of(game, seats, **options)
    first = search(engine, seats, Budget(playouts=60), random.Random(11))
    again = search(engine, seats, Budget(playouts=60), random.Random(11))
    assert first == again
    assert first.playouts == 60
    assert first.move in engine.legal_moves()


def test_the_search_takes_an_immediate_win():
    game = KnightPanic()
    checked = 0
    for engine in random_positions(game, size=5):
        moves = engine.legal_moves()
        winning = [m for m in moves if immediate_win(engine, [m]) is not None]
        if winning and len(winning) < len(moves):
            choice = search(engine, 2, Budget(playouts=20), random.Random(1))
            assert choice.move in winning
            checked += 1
    assert checked >= 5


def test_the_search_blocks_an_immediate_loss_where_it_can():
    game = KnightPanic()
    checked = 0
    for engine in random_positions(game, size=5, count=300):
        moves = engine.legal_moves()
        if immediate_win(engine, moves) is not None:
            continue
        safe = [m for m in moves if is_safe(engine, m, None)]
        if safe and len(safe) < len(moves):
            choice = search(engine, 2, Budget(playouts=20), random.Random(2))
            assert choice.move in safe
            checked += 1
    assert checked >= 5


def test_three_players_of_knight_line_play_a_whole_game():
    engine = engine_of(KnightLine(), 3)
    rng = random.Random(3)
    movers = set()
    while engine.outcome() is None:
        movers.add(engine.to_move())
        engine.play(search(engine, 3, Budget(playouts=8), rng).move)
    assert movers == {0, 1, 2}
    assert sum(rewards(engine.outcome(), 3)) == pytest.approx(1)


def test_a_draw_shares_the_reward_and_a_win_takes_it():
    assert rewards(Outcome(winners=()), 3) == [1 / 3] * 3
    assert rewards(Outcome(winners=(1,)), 3) == [0, 1, 0]


def test_a_robot_resigns_only_a_position_it_proves_lost():
    game = KnightPanic()
    proven = 0
    for engine in random_positions(game, size=4, count=300, seed=9):
        seat = engine.to_move()
        lost = proven_lost(engine, seat, 2)
        every_move_loses = all(not is_safe(engine, m, None) for m in engine.legal_moves())
        assert lost == every_move_loses
        proven += lost
    assert proven >= 1
    assert not proven_lost(engine_of(game, size=4), 0, 2)


def test_every_built_in_game_has_a_robot():
    robots = get_robots()
    assert {game for game, _ in robots} == {
        "knightline",
        "knightpanic",
        "knightvision",
        "lox",
        "uknight",
    }
    assert all(name == "mcts" for _, name in robots)


# -- robot accounts ----------------------------------------------------------------------


def pbm(home, *words):
    return CliRunner().invoke(cli, ["--home", str(home), *words])


def board_position(home, number, game="knightpanic"):
    with open_server(Config.load(home)) as server:
        ctx = Context(server, Request(text="test"), None, {})
        board = Board(ctx, server.store.boards.get(game, number))
        return board.row.status, board.position, board.vote()


def legal_text(home, number):
    _, position, _ = board_position(home, number)
    engine = KnightPanic().engine(position.state)
    moves = engine.legal_moves()
    # a move that does not hand the robot a win at once, where there is one
    safe = [move for move in moves if is_safe(engine, move, None)] or moves
    return engine.move_text(safe[0]), position.move_number


def test_robot_accounts_are_added_listed_and_removed(harness):
    home = harness.home
    result = pbm(home, "robots", "add", "Robo", "knightpanic", "mcts", "--seconds", "2")
    assert result.exit_code == 0, result.output
    listing = pbm(home, "robots", "list").output
    assert "robo: knightpanic mcts, 2s a move" in listing
    assert "lox mcts:" in listing
    assert "taken" in pbm(home, "robots", "add", "robo", "lox", "mcts").output
    assert 'No robot "deep"' in pbm(home, "robots", "add", "r2", "lox", "deep").output
    with open_server(harness.config) as server:
        assert server.store.users.addresses("robo") == []
        assert server.store.users.password_hash("robo").startswith("$argon2")
    assert pbm(home, "robots", "remove", "robo").exit_code == 0
    assert "No robot accounts." in pbm(home, "robots", "list").output


def test_a_robot_plays_a_whole_game_by_mail(project_env, tmp_path):
    home = tmp_path / "home"
    assert pbm(home, "init").exit_code == 0
    assert (
        pbm(home, "robots", "add", "robo", "knightpanic", "mcts", "--seconds", "0.1").exit_code == 0
    )
    seen = set()
    send(project_env, "alice@example.org", "signup alice pw-alice")
    send(project_env, "alice@example.org", "knightpanic challenge alice robo")
    got = inbox(home, seen)
    assert list(got) == ["alice@example.org"]
    for _ in range(60):
        status, position, _ = board_position(home, 101)
        if status != "active":
            break
        if position.holders[position.to_move()] == "alice":
            text, number = legal_text(home, 101)
            send(
                project_env,
                "alice@example.org",
                f"knightpanic move 101 alice pw-alice {text}#{number}",
            )
        else:
            result = pbm(home, "robots", "run")
            assert result.exit_code == 0, result.output
            # One line a move, whole: no other output runs into it (issue 27).
            assert re.fullmatch(r"knightpanic move 101 robo <robot> \S+#\d+\n", result.output)
        got = inbox(home, seen)
        assert list(got) == ["alice@example.org"]  # the robot gets no mail
        assert "KnightPanic Board 101" in got["alice@example.org"][-1]["Subject"]
    assert status == "finished"
    with open_server(Config.load(home)) as server:
        alice = server.store.ratings.get("knightpanic", "alice")
        robo = server.store.ratings.get("knightpanic", "robo")
        assert alice.games == robo.games == 1
        assert alice.rating != robo.rating
        assert server.store.outbox.count_to_user("robo", ("board", "new_board"), "2000") == 0


def test_a_stale_robot_move_is_refused_and_decided_again(harness, monkeypatch):
    # The robot plays White on the flat 4x4 board, which the solve proves lost: with the
    # solve of an earlier test at hand it would resign at once and never race a move.
    monkeypatch.setattr(solver, "_solved", {})
    harness.signup("alice")
    assert (
        pbm(
            harness.home, "robots", "add", "robo", "knightpanic", "mcts", "--seconds", "0.1"
        ).exit_code
        == 0
    )
    harness.challenge("knightpanic challenge robo alice", by="alice")
    answers = []
    with open_server(harness.config) as server:

        def racing_submit(text, grant):
            if not answers:
                # Another runner moves the robot first, and alice answers at once.
                [task] = pending_tasks(server)
                assert server.execute_for_robot(decide(server, task), grant).ok
                move, number = legal_text(harness.home, 101)
                harness.ok(f"knightpanic move 101 alice secret {move}#{number}")
            result = server.execute_for_robot(text, grant)
            answers.append((result.ok, " ".join(m.body for m in result.printed)))
            return result

        failures = []
        report = run_robots(server, racing_submit, lambda kind, line: failures.append(line), 60)
    assert answers[0][0] is False and "received as move #3" in answers[0][1]
    assert answers[1][0] is True
    assert len(report.commands) == 2
    # (a loaded machine may make a move overrun its budget: that is reported, not refused)
    assert [line for line in failures if "over its budget" not in line] == []
    _, position, _ = board_position(harness.home, 101)
    assert position.move_number == 4


class BrokenRobot(Robot):
    def choose(self, engine, seats, budget, rng):
        raise RuntimeError("the broken robot broke")


class BrokenRobotPlugin:
    @staticmethod
    @hookimpl
    def register_robots(register):
        register(BrokenRobot(game="knightpanic", name="broken"))


@pytest.fixture
def broken_robot():
    pm.register(BrokenRobotPlugin, name="broken-robot")
    yield
    pm.unregister(name="broken-robot")


def test_a_failing_robot_is_reported_and_left_to_the_clocks(harness, clock, broken_robot):
    harness.configure("[server]\noperator_address = op@example.org\n")
    harness.signup("alice")
    clock("2026-03-01T12:00:00")
    assert pbm(harness.home, "robots", "add", "robo", "knightpanic", "broken").exit_code == 0
    harness.challenge("knightpanic challenge robo alice --nagtime=1 --forfeittime=2", by="alice")
    for _ in range(2):
        result = pbm(harness.home, "robots", "run")
        assert result.exit_code == 0
        assert "robot robo failed on knightpanic board 101 move 1" in result.output
    alerts = sorted((harness.home / "outbox" / "new").glob("alert-*"))
    assert len(alerts) == 1  # at most once an hour per cause
    alert = email.message_from_bytes(alerts[0].read_bytes(), policy=email.policy.default)
    assert alert["To"] == "op@example.org"
    assert "RuntimeError: the broken robot broke" in " ".join(alert.get_content().split())
    status, position, _ = board_position(harness.home, 101)
    assert status == "active" and position.move_number == 1
    clock("2026-03-04T12:00:00")
    assert pbm(harness.home, "cleanup").exit_code == 0
    with open_server(harness.config) as server:
        [row] = server.store.boards.of_user("alice") or [None]
        # A robot that never moved withdraws, as a silent player does: the board is removed.
        assert row is None
    assert "robo" in " ".join(m.get_content() for m in harness.new_mails("alice@example.org"))


def test_a_robot_rejects_an_undo_and_answers_a_draw_by_its_search(harness):
    harness.signup("alice")
    assert (
        pbm(
            harness.home, "robots", "add", "robo", "knightpanic", "mcts", "--seconds", "0.1"
        ).exit_code
        == 0
    )
    harness.challenge("knightpanic challenge alice robo -size=5")
    move, number = legal_text(harness.home, 101)
    harness.ok(f"knightpanic move 101 alice secret {move}#{number}")
    assert pbm(harness.home, "robots", "run").exit_code == 0
    harness.new_mails()
    harness.ok("knightpanic undo 101 alice secret")
    assert "knightpanic reject 101 robo" in pbm(harness.home, "robots", "run").output
    _, _, vote = board_position(harness.home, 101)
    assert vote is None
    [mail] = harness.new_mails("alice@example.org")[-1:]
    assert "robo has rejected the undo request" in mail.get_content()

    harness.ok("knightpanic propose 101 alice secret")
    _, position, _ = board_position(harness.home, 101)
    with open_server(harness.config) as server:
        [task] = pending_tasks(server)
        expected = decide(server, task).split()[1]
    output = pbm(harness.home, "robots", "run").output
    assert f"knightpanic {expected} 101 robo" in output
    status, _, vote = board_position(harness.home, 101)
    assert vote is None
    assert (status == "finished") == (expected == "accept")
    robot = get_robots()[("knightpanic", "mcts")]
    value_rng = random.Random(f"knightpanic/101/{position.move_number}/robo")
    engine = KnightPanic().engine(position.state)
    assert robot.accepts("draw", engine, 1, 2, value_rng) == (expected == "accept")


def test_robots_in_pbm_serve_move_without_blocking_the_writer(project_env, tmp_path):
    home = tmp_path / "home"
    assert pbm(home, "init").exit_code == 0
    (home / "pbm.ini").write_text(GENEROUS_LIMITS)
    for userid in ("alice", "bob"):
        assert (
            pbm(home, "--from", f"{userid}@example.org", "signup", userid, "secret").exit_code == 0
        )
    # A long search on the largest flat Knight Panic board: the writer must not wait for it.
    assert (
        pbm(home, "robots", "add", "robo", "knightpanic", "mcts", "--seconds", "8").exit_code == 0
    )
    process, port = start_serve(project_env, home)
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=30) as client:
            client.send_message(command("knightpanic challenge robo alice -size=7"))
            # The robot is on move and searching; another player's command is answered.
            code, _ = client.docmd("NOOP")
            assert code == 250
            refused = client.send_message(command("knightpanic challenge alice bob"))
            assert refused == {}
            _, position, _ = board_position(home, 101)
            assert position.move_number == 1  # the robot's search is still under way
            _, position, _ = board_position(home, 102)
            assert position.move_number == 1
        for _ in range(600):  # the mail is delivered just after the robot's move commits
            subjects = [m["Subject"] for m in outbox(home) if m["To"] == "alice@example.org"]
            if subjects.count("KnightPanic Board 101: robo vs alice") == 2:
                break
            time.sleep(0.1)
        assert subjects.count("KnightPanic Board 101: robo vs alice") == 2
        _, position, _ = board_position(home, 101)
        assert [ply.userid for ply in position.plies] == ["robo"]
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
