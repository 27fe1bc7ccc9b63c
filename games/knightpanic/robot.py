"""Knight Panic's robot (docs/robots.md): perfect play from the exhaustive solve on the 4x4
boards (flat and 3D), when its budget can hold the solve or it is done already; elsewhere
Monte Carlo tree search after a search for a forced trap. Imported only for robot work."""

import time
from dataclasses import replace

from pbm.robots import Knowledge, Robot
from pbm.robots.mcts import forced_win, immediate_win

from . import solver

# How deep the robot looks for a forced trap off the solved board: a move and its answers.
FORCED_TRAP_PLIES = 3
# The time a solve of a 4x4 game from its start is given at least, flat and 3D: they took
# 4 to 6 s and 17 to 22 s on a shared two-core machine (docs/robots.md). A timed move with
# less time left plays the search instead; the solve gives up at SOLVE_SHARE of what is
# left, in case the machine is slower still, so that the move stays within its budget.
SOLVE_SECONDS = {False: 8.0, True: 40.0}
SOLVE_SHARE = 0.8
VOTE_SECONDS = 10.0  # a vote has no budget of its own: the default move budget's


def can_solve(engine, deadline: float | None) -> bool:
    """Whether a 4x4 position's value is at hand: known already, or solved now because
    the budget has no deadline or one far enough away."""
    if not solver.solvable(engine.state()):
        return False
    if solver.known(engine) or deadline is None:
        return solver.solve(engine)
    now = time.perf_counter()
    left = deadline - now
    return left >= SOLVE_SECONDS[engine.options["3d"]] and solver.solve(
        engine, now + left * SOLVE_SHARE
    )


def best_move(engine, deadline):
    if can_solve(engine, deadline):
        if solver.value(engine) == solver.DRAW:
            return None  # the search chooses among the drawing moves (root_moves)
        return solver.best_move(engine)
    return forced_win(engine, FORCED_TRAP_PLIES, deadline)


def root_moves(engine, moves, deadline):
    """The moves after which the opponent has no forced trap within 3 plies (a move after
    which each of our replies leaves it an immediate trap), when there are such moves.
    It takes at most half the time left, the rest is the search's; the moves not yet
    looked at by then are kept. On a solved board in a drawn position (best_move left it
    to the search): the moves keeping the draw, for the search to find the one an
    opponent most likely goes wrong after, as perfect play cannot win a drawn game."""
    if _solved(engine):
        return solver.drawing_moves(engine)
    if deadline is not None:
        now = time.perf_counter()
        deadline = now + (deadline - now) / 2
    seat = engine.to_move()
    kept = []
    for number, move in enumerate(moves):
        if deadline is not None and time.perf_counter() > deadline:
            kept.extend(moves[number:])
            break
        after = engine.copy()
        after.play(move)
        if after.winner == seat or after.winner is None and not _forces_trap(after, deadline):
            kept.append(move)
    return kept or moves


def _forces_trap(position, deadline) -> bool:
    """Whether the seat on move has a move after which every reply allows it an
    immediate trap (False, too, when the deadline comes first)."""
    seat = position.to_move()
    for move in position.legal_moves():
        if deadline is not None and time.perf_counter() > deadline:
            return False
        after = position.copy()
        after.play(move)
        if after.winner is not None:
            if after.winner == seat:
                return True
            continue
        for reply in after.legal_moves():
            answered = after.copy()
            answered.play(reply)
            if answered.winner is None:
                if immediate_win(answered, answered.legal_moves()) is None:
                    break
            elif answered.winner != seat:
                break
        else:
            return True
    return False


def playout(engine, moves, rng):
    # Players who trap a knight when they can make the playouts' verdicts about threats
    # true; uniformly random ones walk past most traps.
    seat = engine.to_move()
    for move in moves:
        after = engine.copy()
        after.play(move)
        if after.winner == seat:
            return move
    return moves[rng.randrange(len(moves))]


def solved_share(value: int) -> float:
    """A solved value as the mover's expected reward: a win 1, a draw 1/2, a loss 0."""
    return 1.0 if value > 0 else 0.0 if value < 0 else 0.5


class KnightPanicRobot(Robot):
    """On a solved board its move's value, its resignation and its votes come from the
    solve's exact value, not from the search (which reports a solved move as a sure win)."""

    def choose(self, engine, seats, budget, rng):
        choice = super().choose(engine, seats, budget, rng)
        if choice.reason != "win" and _solved(engine):
            return replace(choice, value=solved_share(solver.value(engine)))
        return choice

    def resigns(self, engine, seat, seats) -> bool:
        if engine.to_move() == seat and _solved(engine):
            return solver.value(engine) < 0  # the solve is the proof
        return super().resigns(engine, seat, seats)

    def accepts(self, kind, engine, seat, seats, rng) -> bool:
        """A draw is accepted on a 4x4 board exactly when the solve gives the robot's
        seat no win: a draw by endless play, or a loss."""
        deadline = time.perf_counter() + VOTE_SECONDS
        if kind == "draw" and engine.outcome() is None and can_solve(engine, deadline):
            mover_value = solver.value(engine)
            return (mover_value if engine.to_move() == seat else -mover_value) <= 0
        return super().accepts(kind, engine, seat, seats, rng)


def _solved(engine) -> bool:
    return solver.solvable(engine.state()) and solver.known(engine)


ROBOT = KnightPanicRobot(
    game="knightpanic",
    name="mcts",
    description="perfect play from an exhaustive solve on the 4x4 boards, flat and 3D; "
    "elsewhere Monte Carlo tree search after a 3-ply search for a forced trap",
    knowledge=Knowledge(best_move=best_move, playout=playout, root_moves=root_moves),
)
