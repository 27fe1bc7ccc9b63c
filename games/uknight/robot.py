"""What the Uknight robot knows (issue 21): how far each player is from unification
(docs/spec/games/uknight.md §6), as a cut-off evaluation and as the order in which the
search tries moves. Random playouts almost never unite anyone, so without this the search
is blind; with it, the search is a best-first search over the estimated distance."""

import math

from games.uknight.engine import (
    AXE_FRIENDS,
    BLACK,
    MOVE,
    PASS,
    PHASE_TWO_AXES,
    REMOVE,
    VACANT,
    WHITE,
    UknightEngine,
)
from pbm.robots.mcts import Knowledge

HOPELESS = 99.0  # the distance of a player who has no stone left and so can never unite
JOIN = 3.0  # move_scores' worth of a group joined
AXE = 3.0  # and of an axe won in phase 1: worth a stone on its own
AXE_WAY = 2.0  # phase 1: placements per axe still missing for phase 2 (one and its approach)
TEMPO = 1.0  # the distance the player on move makes good before the other moves
SHARPNESS = 2.0  # the odds of a win go as the ratio of the distances to this power


def distance(engine: UknightEngine, seat: int) -> float:
    """An estimate of the turns the seat needs to unite: 0 when united.

    Phase 1 (stones are placed): the groups are joined to the largest one nearest first,
    each costing the cells between, filled stone by stone over cells a placement reaches
    now (a knight's move from an own stone), so that opponent stones and cells out of
    reach block a bridge; or, when cheaper, the axes phase 2 still lacks and then the
    jumps of phase 2. Phase 2 (stones move): every stone outside the largest group must
    jump to it, a knight's move covering three cells. The player on move is a tempo
    ahead (evaluate)."""
    tables = engine.tables
    own = engine.stones[seat]
    if not own:
        return HOPELESS
    grow = tables.grow
    main = grow(own & -own, own)
    if main == own:
        return 0.0
    rest = own & ~main
    # the largest group is the one to join the others to
    size = main.bit_count()
    while rest:
        group = grow(rest & -rest, rest)
        rest &= ~group
        if group.bit_count() > size:
            main, size = group, group.bit_count()
    vacant = tables.mask & ~(own | engine.stones[1 - seat])
    jumps = _jumps(tables, main, own & ~main, vacant)
    if engine.phase == 2:
        return jumps
    # Phase 1: by placements, or by the axes that start phase 2 and then by jumps.
    axes = (engine.doubles[0] | engine.doubles[1]).bit_count()
    missing = PHASE_TWO_AXES[engine.options["size"]] - axes
    placeable = 0
    knight_masks = tables.knight_masks
    for index in tables.indices(own):
        placeable |= knight_masks[index]
    passable = own | (placeable & vacant)
    return min(_bridges(tables, main, own & ~main, passable), jumps + AXE_WAY * missing)


def _jumps(tables, main: int, rest: int, vacant: int) -> float:
    """Phase 2: the knight moves that bring the stones of rest next to main: one for a
    stone with a vacant cell next to main a knight's move away, else one per three cells
    of the way and at least two."""
    adjacent, knight_masks = tables.adjacent, tables.knight_masks
    landing = adjacent(main) & vacant
    cost, front, ring = 0.0, main, 1
    while rest:
        front |= adjacent(front)
        reached = front & rest
        if reached:
            rest &= ~reached
            far = max(2, (ring + 1) // 3)
            for index in tables.indices(reached):
                cost += 1 if knight_masks[index] & landing else far
        ring += 1
    return cost


def _bridges(tables, main: int, rest: int, passable: int) -> float:
    """Phase 1: the placements that join the groups of rest to main, nearest first,
    over the passable cells only."""
    adjacent, grow = tables.adjacent, tables.grow
    blob, cost = main, 0.0
    while rest:
        front, gap = blob, 0
        while True:
            grown = (front | adjacent(front)) & passable
            gap += 1
            hit = grown & rest
            if hit or grown == front:
                break
            front = grown
        if not hit:
            return HOPELESS
        joined = grow(hit, rest)
        cost += gap
        blob |= joined
        rest &= ~joined
    return cost


def evaluate(engine: UknightEngine) -> list[float]:
    """Rewards for a cut-off playout: the nearer to unification than the opponent, the
    nearer to a sure win. The ratio of the distances, not their difference, so that a
    step ahead still counts when the opponent is far behind; the player on move is
    TEMPO nearer."""
    white, black = distance(engine, WHITE), distance(engine, BLACK)
    if engine.seat == WHITE:
        white = max(0.0, white - TEMPO)
    else:
        black = max(0.0, black - TEMPO)
    lead = math.log((black + 1) / (white + 1))
    white = 1 / (1 + math.exp(-SHARPNESS * lead))
    return [white, 1 - white]


def move_scores(engine: UknightEngine, moves: list) -> list[float]:
    """A quick guess of each move's progress towards the mover's unification, by the
    mover's groups it touches (no move is played): joining groups, bringing a stone
    next to the largest group, removing isolated stones, winning an axe in phase 1."""
    tables, seat = engine.tables, engine.seat
    own = engine.stones[seat]
    neighbours, owner = tables.neighbours, engine.owner
    group_of, sizes = {}, []
    rest = own
    while rest:
        group = tables.grow(rest & -rest, rest)
        rest &= ~group
        for index in tables.indices(group):
            group_of[index] = len(sizes)
        sizes.append(group.bit_count())
    main = max(range(len(sizes)), key=sizes.__getitem__) if sizes else -1
    near = engine.near[seat]
    axes_wanted = engine.phase == 1
    removed = 0
    if any(move.__class__ is tuple and move[0] == REMOVE for move in moves):
        removed = len(engine.qualifying(seat))

    def arrival(cell: int, leaving: int) -> float:
        touched = {group_of[n] for n in neighbours[cell] if owner[n] == seat and n != leaving}
        score = JOIN * len(touched) if touched else -JOIN
        if main in touched:
            score += 1
        return score

    scores = []
    for move in moves:
        score = 0.0
        if move.__class__ is tuple and move[0] == REMOVE:
            score += JOIN * removed
            move = move[1]
            if move is None:
                scores.append(score)
                continue
        if move == PASS:
            scores.append(-JOIN)  # never progress; two in a row draw
        elif move.__class__ is int:
            score += arrival(move, -1)
            if axes_wanted and near[move] >= AXE_FRIENDS:
                score += AXE
            scores.append(score)
        else:
            code, start, end = move
            if code == MOVE:
                if sizes[group_of[start]] > 1:
                    score += arrival(end, start) - JOIN
                else:  # a lone stone may need a hop or two to reach a group
                    score += max(0.0, arrival(end, start))
            elif owner[end] != VACANT:
                score += arrival(end, -1) + 1  # a capture
            else:
                score += arrival(end, -1)
            scores.append(score)
    return scores


def candidates(engine: UknightEngine, moves: list, rng) -> list:
    """The moves worth a look, in random order: those move_scores does not judge a step
    away from unification; a pass only when there is nothing else (two passes in a row
    draw). Random, not ranked: a bigger budget then weighs more of them."""
    scores = move_scores(engine, moves)
    kept = [move for move, score in zip(moves, scores) if score >= 0]
    if not kept:
        kept = [move for move in moves if move != PASS] or moves
    rng.shuffle(kept)
    return kept


KNOWLEDGE = Knowledge(evaluate=evaluate, playout_plies=0, candidates=candidates)
