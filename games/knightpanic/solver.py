"""The flat 4x4 game solved exhaustively, for the robot's perfect play there and for
`make strength`'s check of it (docs/robots.md).

Knight Panic has no move limit (docs/spec/games/knightpanic.md §9), so play can cycle and a
depth-first negamax would be wrong: the solve is retrograde. From a position it enumerates
every position reachable through the engine (about 740,000 from the start, 2.8 million
moves), then works back from the ended ones: a position is won when a move reaches one lost
for the opponent, lost when every move reaches one won for the opponent, and drawn (endless
play) when neither is ever shown. Positions are processed by distance, so a won position's
value is its shortest win and a lost one's its longest resistance. Solved values are kept
per process and per tiebreak option, so the start's solve serves every later position.
"""

from array import array

from pbm.engine import Engine

DRAW = 0  # a value: +d wins in d plies for the seat on move, -d loses in d plies, 0 a draw


def solvable(state) -> bool:
    options = state["options"]
    return options["size"] == 4 and not options["3d"]


def position_key(engine) -> int:
    """The position as the game's rules see it: whose knights stand where, who moves."""
    white = black = 0
    for point in engine.pieces[0]:
        white |= 1 << (point >> 3)
    for point in engine.pieces[1]:
        black |= 1 << (point >> 3)
    return white | black << 64 | engine.on_move << 128


_solved: dict[bool, dict[int, int]] = {}  # per mover_loses: position key -> value


def value(engine: Engine) -> int:
    """The exact value of a running 4x4 flat position for the seat on move."""
    table = _solved.setdefault(engine.options["mover_loses"], {})
    key = position_key(engine)
    if key not in table:
        _solve(engine, table)
    return table[key]


def best_move(engine: Engine):
    """A move keeping the best value there is: the quickest win, else a draw, else the
    longest resistance."""
    seat = engine.to_move()
    best, best_score = None, None
    for move in engine.legal_moves():
        after = engine.copy()
        after.play(move)
        outcome = after.outcome()
        if outcome is not None:
            score = 10_000 if outcome.winners == (seat,) else -10_000
        else:
            theirs = value(after)
            score = DRAW if theirs == DRAW else theirs + (1000 if theirs < 0 else -1000)
        if best_score is None or score > best_score:
            best, best_score = move, score
    return best


def _solve(root: Engine, table: dict[int, int]) -> None:
    """Adds to table the value of every running position reachable from root."""
    index = {position_key(root): 0}
    # a position's known value: a value of table, or an ended position's (0 plies to go)
    known: dict[int, tuple[int, int]] = {}  # index -> (won: 1 or -1, plies)
    parents, children = array("i"), array("i")
    frontier = [root]
    position_index = 0
    while frontier:
        following = []
        for position in frontier:
            here = index[position_key(position)]
            for move in position.legal_moves():
                after = position.copy()
                after.play(move)
                key = position_key_or_ended(after)
                there = index.get(key)
                if there is None:
                    position_index += 1
                    there = index[key] = position_index
                    outcome = after.outcome()
                    if outcome is not None:
                        won = 1 if outcome.winners == (after.on_move,) else -1
                        known[there] = (won, 0)
                    else:
                        solved = table.get(key)
                        if solved is None:
                            following.append(after)
                        elif solved != DRAW:
                            known[there] = (1 if solved > 0 else -1, abs(solved))
                        else:
                            known[there] = (0, 0)
                parents.append(here)
                children.append(there)
        frontier = following
    count = position_index + 1
    # predecessors, as one array sliced by offsets
    offsets = array("i", [0]) * (count + 1)
    for child in children:
        offsets[child + 1] += 1
    for i in range(count):
        offsets[i + 1] += offsets[i]
    filled = offsets[:-1]
    predecessors = array("i", [0]) * len(children)
    for parent, child in zip(parents, children):
        predecessors[filled[child]] = parent
        filled[child] += 1
    unanswered = array("i", [0]) * count  # moves not yet shown to lose
    for parent in parents:
        unanswered[parent] += 1
    result = array("b", [0]) * count
    plies = array("i", [0]) * count
    resolved = bytearray(count)
    layers: list[list[int]] = []
    for position, (won, distance) in known.items():
        resolved[position] = 1
        if won:
            result[position], plies[position] = won, distance
            while len(layers) <= distance:
                layers.append([])
            layers[distance].append(position)
    distance = 0
    while distance < len(layers):
        for position in layers[distance]:
            won = result[position]
            for parent in predecessors[offsets[position] : offsets[position + 1]]:
                if resolved[parent]:
                    continue
                if won < 0:  # a move to a lost position wins
                    result[parent] = 1
                else:
                    unanswered[parent] -= 1
                    if unanswered[parent]:
                        continue
                    result[parent] = -1
                resolved[parent] = 1
                plies[parent] = distance + 1
                if len(layers) == distance + 1:
                    layers.append([])
                layers[distance + 1].append(parent)
        distance += 1
    for key, position in index.items():
        if key < 0 or position in known:
            continue
        table[key] = result[position] * plies[position]


def position_key_or_ended(engine) -> int:
    """position_key, or a negative key for an ended position (never in the table)."""
    key = position_key(engine)
    return key if engine.outcome() is None else -key - 1
