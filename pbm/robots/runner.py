"""Moving the robots (docs/spec/server.md §11.7): find the boards where a robot is on move or
asked to vote, decide outside any transaction on the replayed position, and submit the
decision as the robot's own command through the dispatcher, in a transaction of its own,
with the `#n` guard. `pbm robots run` (cron) and `pbm serve`'s robot thread share it."""

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..boards import Board
from ..context import Context
from ..replies import TOKEN_PASSWORD, Grant
from ..request import Request, Result
from ..store import RobotRecord
from . import get_robots
from .mcts import Budget

log = logging.getLogger("pbm.robots")
OVERRUN_FACTOR = 1.1  # a move may take its budget and a tenth more before it is reported


@dataclass(frozen=True)
class RobotTask:
    """One thing a robot must do on one board, as the board stood when it was read."""

    robot: RobotRecord
    board_id: int
    number: int
    move_number: int
    kind: str  # "move", or "vote" to answer a pending draw or undo proposal
    seat: int
    seats: int
    state: object
    vote_kind: str | None = None

    @property
    def key(self) -> tuple:
        return (self.robot.userid, self.board_id, self.move_number, self.kind)


@dataclass
class RunReport:
    commands: list[str] = field(default_factory=list)  # what the robots sent
    failures: list[str] = field(default_factory=list)  # what went wrong, one line each


def report_to_operator(home, kind: str, line: str) -> None:
    """The operator's mail about a failing robot, at most once an hour per robot and cause."""
    # deferred: intake is the pipe's module; only a failure needs its alert
    from ..intake import alert_operator

    body = (
        f"{line}\n\nThe robot's boards wait; their clocks nag and forfeit it as any player "
        "(pbm cleanup). See log/pbm.log, then `pbm robots list`.\n"
    )
    alert_operator(home, kind, "pbm: a robot failed", body)


def pending_tasks(server) -> list[RobotTask]:
    """What the robots must do now, read in one snapshot of the database."""
    store = server.store
    tasks = []
    with store.snapshot():
        ctx = Context(server, Request(text="robots"), None, {})
        for robot, row in store.robots.boards():
            board = Board(ctx, row)
            position = board.position
            playing = board.playing_seats_of(robot.userid)
            if not playing or position.outcome() is not None:
                continue
            vote = board.vote()
            common = dict(
                robot=robot,
                board_id=row.id,
                number=row.number,
                move_number=position.move_number,
                seats=position.seats,
                state=position.state,
            )
            if vote is not None and not set(playing) <= set(vote.accepted):
                tasks.append(RobotTask(kind="vote", seat=playing[0], vote_kind=vote.kind, **common))
            elif position.to_move() in playing:
                tasks.append(RobotTask(kind="move", seat=position.to_move(), **common))
    return tasks


def decide(server, task: RobotTask) -> str:
    """The robot's command for a task: its move (or a proven resignation), or its vote."""
    robot_name, game_name = task.robot.robot, task.robot.game
    robot = get_robots().get((game_name, robot_name))
    if robot is None:
        raise LookupError(f'no robot "{robot_name}" for {game_name} is installed')
    engine = server.games[game_name].engine(task.state)
    # Seeded by the position: the same board at the same move gets the same search.
    rng = random.Random(f"{game_name}/{task.number}/{task.move_number}/{task.robot.userid}")
    head = f"{game_name} {{}} {task.number} {task.robot.userid} {TOKEN_PASSWORD}"
    if task.kind == "vote":
        accept = robot.accepts(task.vote_kind, engine, task.seat, task.seats, rng)
        return head.format("accept" if accept else "reject")
    choice = robot.choose(engine, task.seats, Budget(seconds=task.robot.seconds), rng)
    # Only a search that found no good move asks for the proof, which takes time of its own.
    if choice.value == 0 and robot.resigns(engine, task.seat, task.seats):
        return head.format("resign") + f" #{task.move_number}"
    return head.format("move") + f" {engine.move_text(choice.move)}#{task.move_number}"


def run_robots(
    server,
    submit: Callable[[str, Grant], Result],
    report_failure: Callable[[str, str], None],
    seconds: float,
    stopping: Callable[[], bool] = lambda: False,
) -> RunReport:
    """Do every pending robot task once, within about `seconds` (a move under way is let
    finish). A move refused because the board moved on meanwhile is dropped and decided
    again; any other refusal or exception is a failure, reported once per task, and leaves
    the board to its clocks like any player's silence."""
    report = RunReport()
    deadline = time.monotonic() + seconds
    tried = set()
    while time.monotonic() < deadline and not stopping():
        # One read for many tasks; a task gone stale meanwhile is refused and read again.
        tasks = [task for task in pending_tasks(server) if task.key not in tried]
        if not tasks:
            break
        for task in tasks:
            if time.monotonic() >= deadline or stopping():
                break
            tried.add(task.key)
            _carry_out(server, task, submit, report_failure, report)
    return report


def _carry_out(server, task: RobotTask, submit, report_failure, report: RunReport) -> None:
    userid = task.robot.userid
    where = f"{task.robot.game} board {task.number} move {task.move_number}"
    started = time.monotonic()
    try:
        text = decide(server, task)
    except Exception as error:
        log.exception("robot %s failed on %s", userid, where)
        line = f"robot {userid} failed on {where}: {type(error).__name__}: {error}"
        report.failures.append(line)
        report_failure(f"robot-error:{userid}", line)
        return
    spent = time.monotonic() - started
    if task.kind == "move" and spent > task.robot.seconds * OVERRUN_FACTOR:
        line = (
            f"robot {userid} took {spent:.1f}s on {where}, over its budget of "
            f"{task.robot.seconds:g}s"
        )
        log.warning(line)
        report.failures.append(line)
        report_failure(f"robot-overrun:{userid}", line)
    grant = Grant(task.robot.game, task.number, userid, task.move_number)
    result = submit(text, grant)
    report.commands.append(text.replace(TOKEN_PASSWORD, "<robot>"))
    if result.ok:
        return
    if _moved_on(server, task):
        log.info("robot %s: %s moved on before its move; deciding again", userid, where)
        return
    answer = " ".join(mail.body for mail in result.printed).strip()
    line = f"robot {userid} was refused on {where}: {answer[:500]}"
    log.error(line)
    report.failures.append(line)
    report_failure(f"robot-refused:{userid}", line)


def _moved_on(server, task: RobotTask) -> bool:
    with server.store.snapshot():
        return len(server.store.boards.plies(task.board_id)) + 1 != task.move_number
