"""Monte Carlo tree search over the search contract (pbm/engine.py, docs/spec/server.md
§10.5): UCT for any number of seats, seeded and reproducible, within a time or playout
budget, with the tactics that pay in every game (take an immediate win, avoid a move that
hands the next player one) and hooks for what a game knows (docs/spec/server.md §11.7)."""

import json
import math
import random
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from ..engine import Engine
from ..game import Outcome

EXPLORATION = 1.0
MAX_PLAYOUT_PLIES = 1000  # games without a move limit (Knight Panic) must still end a playout
CLOCK_EVERY_PLIES = 32  # how often a playout looks at the clock
SEARCH_SHARE = 0.8  # of a timed budget; the rest is for the safety check of the move chosen


@dataclass(frozen=True)
class Knowledge:
    """What a game's robot may add to the search; every hook is optional.

    playout: picks a playout move from the legal ones (default: uniformly at random).
    solve: the exact reward vector of a position it can solve, else None.
    best_move: a move known to be best at the root (a solved endgame), else None; it is
        given the deadline of the move's budget and must return by then.
    evaluate: a reward vector for a playout cut off at playout_plies, else a draw share.
    can_win: whether a seat, were it on move in this position, would have a move that wins
        at once; with three or more seats it lets the safety check see the threats of the
        seats after the next one, which the next seat's move rarely answers.
    candidates: the moves a search node expands, the first first, given the legal ones;
        it may leave some out (default: all of them, in a random order); the safety check
        still looks at every move.
    root_moves: the root's moves worth searching, of its legal ones (default: all); given
        the deadline of the move's budget, it must return by then.
    """

    playout: Callable[[Engine, list, random.Random], Hashable] | None = None
    solve: Callable[[Engine], list[float] | None] | None = None
    best_move: Callable[[Engine, float | None], Hashable | None] | None = None
    evaluate: Callable[[Engine], list[float]] | None = None
    can_win: Callable[[Engine, int], bool] | None = None
    playout_plies: int = MAX_PLAYOUT_PLIES
    candidates: Callable[[Engine, list, random.Random], list] | None = None
    root_moves: Callable[[Engine, list, float | None], list] | None = None


NO_KNOWLEDGE = Knowledge()


@dataclass(frozen=True)
class Budget:
    """A move's budget: seconds of wall clock, playouts, or both (whichever ends first).
    A playout budget alone is reproducible on any machine; a timed one only for a seed
    and the same speed."""

    seconds: float | None = None
    playouts: int | None = None

    def __post_init__(self):
        if self.seconds is None and self.playouts is None:
            raise ValueError("a budget needs seconds or playouts")


@dataclass
class Choice:
    move: Hashable
    value: float  # the mover's expected reward from the search (1 = a sure win)
    playouts: int
    reason: str  # "only", "win", "solved" or "search"


def rewards(outcome: Outcome, seats: int) -> list[float]:
    """One reward per seat: the winners share 1; a draw (no winner) shares it among all."""
    share = outcome.winners or tuple(range(seats))
    return [1 / len(share) if seat in share else 0.0 for seat in range(seats)]


def wins(outcome: Outcome | None, seat: int | None) -> bool:
    return outcome is not None and outcome.winners == (seat,)


class _Node:
    __slots__ = ("move", "parent", "mover", "children", "untried", "visits", "total")

    def __init__(self, move, parent, mover):
        self.move = move
        self.parent = parent
        self.mover = mover  # the seat that made `move`; None at the root
        self.children: list[_Node] = []
        self.untried: list | None = None  # the moves not yet expanded, once visited
        self.visits = 0
        self.total = 0.0  # the mover's summed rewards


def immediate_win(engine: Engine, moves) -> Hashable | None:
    seat = engine.to_move()
    for move in moves:
        after = engine.copy()
        after.play(move)
        if wins(after.outcome(), seat):
            return move
    return None


def is_safe(
    engine: Engine,
    move,
    deadline: float | None,
    later_seats: tuple[int, Callable[[Engine, int], bool]] | None = None,
) -> bool:
    """False when the move loses at once or the next seat then has an immediately winning
    reply; True when not, or when the deadline comes first. With later_seats (the number of
    seats and a game's can_win) the seats after the next one must have no such move either."""
    seat = engine.to_move()
    after = engine.copy()
    after.play(move)
    outcome = after.outcome()
    if outcome is not None:
        return seat in outcome.winners or not outcome.winners
    mover = after.to_move()
    for reply in after.legal_moves():
        if deadline is not None and time.perf_counter() > deadline:
            return True
        answered = after.copy()
        answered.play(reply)
        if wins(answered.outcome(), mover):
            return False
    if later_seats is not None:
        seats, can_win = later_seats
        for later in range(seats):
            if later not in (seat, mover) and can_win(after, later):
                return False
    return True


def search(
    engine: Engine,
    seats: int,
    budget: Budget,
    rng: random.Random,
    knowledge: Knowledge = NO_KNOWLEDGE,
) -> Choice:
    """The move for the seat on move. Never longer than the budget's seconds, but for one
    playout or safety check already under way, which looks at the clock as it goes."""
    started = time.perf_counter()
    deadline = started + budget.seconds if budget.seconds is not None else None
    moves = engine.legal_moves()
    if not moves:
        raise ValueError("the game is over: there is no move to choose")
    if len(moves) == 1:
        return Choice(moves[0], 0.5, 0, "only")
    winning = immediate_win(engine, moves)
    if winning is not None:
        return Choice(winning, 1.0, 0, "win")
    if knowledge.best_move is not None:
        best = knowledge.best_move(engine, deadline)
        if best is not None:
            return Choice(best, 1.0, 0, "solved")
    if knowledge.root_moves is not None:
        moves = knowledge.root_moves(engine, moves, deadline)
    # The search stops early enough to leave the rest of the budget to the safety check.
    search_deadline = None if budget.seconds is None else started + budget.seconds * SEARCH_SHARE
    root = _Node(None, None, None)
    root.untried = _expansion_order(engine, moves, rng, knowledge)
    playouts = 0
    while budget.playouts is None or playouts < budget.playouts:
        if search_deadline is not None and time.perf_counter() >= search_deadline:
            break
        if not _iterate(root, engine.copy(), seats, rng, knowledge, search_deadline):
            break
        playouts += 1
    ranked = sorted(root.children, key=lambda child: (child.visits, child.total), reverse=True)
    expanded = {child.move for child in ranked}
    unexplored = [move for move in root.untried if move not in expanded]
    # the moves candidates left out come last, so that the safety check still finds them
    listed = expanded.union(unexplored)
    unexplored += [move for move in moves if move not in listed]
    # Safe against every later seat if any move is, else safe against the next seat.
    checks = [lambda move: is_safe(engine, move, deadline)]
    can_win = knowledge.can_win
    if can_win is not None and seats > 2:
        checks.insert(0, lambda move: is_safe(engine, move, deadline, (seats, can_win)))
    for safe in checks:
        for child in ranked:
            if safe(child.move):
                return Choice(child.move, child.total / child.visits, playouts, "search")
        for move in unexplored:
            if safe(move):
                return Choice(move, 0.5, playouts, "search")
    best = ranked[0].move if ranked else moves[0]
    return Choice(best, 0.0, playouts, "search")


def _iterate(root, engine, seats, rng, knowledge, deadline) -> bool:
    """One selection, expansion, playout and backup; False when the clock ran out."""
    node = root
    while True:
        if node.untried is None:
            node.untried = _expansion_order(engine, engine.legal_moves(), rng, knowledge)
        if node.untried or not node.children:
            break
        node = _select(node)
        engine.play(node.move)
    if node.untried:
        move = node.untried.pop()
        child = _Node(move, node, engine.to_move())
        node.children.append(child)
        engine.play(move)
        node = child
    result = _playout(engine, seats, rng, knowledge, deadline)
    if result is None:
        return False
    while node is not None:
        node.visits += 1
        if node.mover is not None:
            node.total += result[node.mover]
        node = node.parent
    return True


def _expansion_order(engine, moves, rng, knowledge) -> list:
    """The moves a node will expand, the last first (they are popped)."""
    if knowledge.candidates is None:
        untried = list(moves)
        rng.shuffle(untried)
        return untried
    return knowledge.candidates(engine, moves, rng)[::-1]


def _select(node):
    log_visits = math.log(node.visits)
    return max(
        node.children,
        key=lambda child: (
            child.total / child.visits + EXPLORATION * math.sqrt(log_visits / child.visits)
            if child.visits
            else math.inf
        ),
    )


def _playout(engine, seats, rng, knowledge, deadline) -> list[float] | None:
    """The reward vector of one playout from here; None when the clock ran out."""
    if knowledge.solve is not None and engine.outcome() is None:
        solved = knowledge.solve(engine)
        if solved is not None:
            return solved
    for ply in range(knowledge.playout_plies):
        outcome = engine.outcome()
        if outcome is not None:
            return rewards(outcome, seats)
        if deadline is not None and ply % CLOCK_EVERY_PLIES == CLOCK_EVERY_PLIES - 1:
            if time.perf_counter() >= deadline:
                return None
        moves = engine.legal_moves()
        if knowledge.playout is not None:
            engine.play(knowledge.playout(engine, moves, rng))
        else:
            engine.play(moves[rng.randrange(len(moves))])
    outcome = engine.outcome()
    if outcome is not None:
        return rewards(outcome, seats)
    if knowledge.evaluate is not None:
        return knowledge.evaluate(engine)
    return [1 / seats] * seats


def forced_win(
    engine: Engine, plies: int, deadline: float | None = None, node_limit: int = 200000
) -> Hashable | None:
    """A move of the seat on move that wins by force within `plies` plies in a two-seat
    game (every reply of the opponent still loses in time), else None; None too when the
    proof would pass node_limit positions or the deadline. Memoised on the positions'
    states."""
    seat = engine.to_move()
    memo: dict = {}
    budget = [node_limit]

    def won(position: Engine, depth: int) -> bool | None:
        """Whether `seat` wins by force from here within depth plies; None: out of budget."""
        outcome = position.outcome()
        if outcome is not None:
            return outcome.winners == (seat,)
        if depth == 0:
            return False
        key = (_state_key(position.state()), depth)
        if key in memo:
            return memo[key]
        budget[0] -= 1
        if budget[0] < 0 or (deadline is not None and time.perf_counter() > deadline):
            return None
        ours = position.to_move() == seat
        verdict = not ours
        for move in position.legal_moves():
            after = position.copy()
            after.play(move)
            result = won(after, depth - 1)
            if result is None:
                return None
            if result == ours:
                verdict = ours
                break
        memo[key] = verdict
        return verdict

    for move in engine.legal_moves():
        after = engine.copy()
        after.play(move)
        result = won(after, plies - 1)
        if result is None:
            return None
        if result:
            return move
    return None


def _state_key(state) -> str:
    return json.dumps(state, sort_keys=True, separators=(",", ":"))


def proven_lost(
    engine: Engine, seat: int, seats: int, depth: int = 2, node_limit: int = 20000
) -> bool:
    """True only when every move of `seat` loses by force within `depth` plies: each of its
    moves loses at once or lets a later seat win at once (or, deeper, leads to such a
    position). False when unsure, when the search would pass node_limit positions, or on a
    draw: a robot resigns only what this proves (docs/spec/server.md §11.7)."""
    budget = [node_limit]

    def lost(position: Engine, plies: int) -> bool | None:
        outcome = position.outcome()
        if outcome is not None:
            return bool(outcome.winners) and seat not in outcome.winners
        if plies == 0:
            return False
        budget[0] -= 1
        if budget[0] < 0:
            return None
        mover = position.to_move()
        results = []
        for move in position.legal_moves():
            after = position.copy()
            after.play(move)
            if mover != seat:
                # another seat takes an immediate win of its own; deeper, only a two-seat
                # game's opponent can be counted on to choose what hurts us
                if wins(after.outcome(), mover):
                    return True
                if seats != 2:
                    continue
            verdict = lost(after, plies - 1)
            if verdict is None:
                return None
            if mover == seat and not verdict:
                return False
            if mover != seat and verdict:
                return True
            results.append(verdict)
        return mover == seat and bool(results)

    if engine.to_move() != seat:
        return False
    return lost(engine.copy(), depth) is True
