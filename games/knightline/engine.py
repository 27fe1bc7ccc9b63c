"""Knight Line's rules as a mutable position (pbm/engine.py): the one implementation the
plugin contract and search both go through.

Representation. A cell (x, y) is the int (x + R) * W + (y + R): the occupied cells form one
8-connected set through the origin of at most 91 cells (3 x 30 tiles and the grey one,
docs/spec/games/knightline.md §1), so with R = 96 no cell the rules look at ever leaves the
square and neighbours, knight's moves and lines are plain additions; sorting cells sorts
them by (x, y), the order of the move lists. `owner` maps each occupied cell to its seat
(GREY for the grey tile) and `height` each stack to its height; `frontier` is the set of
empty cells touching an occupied one, kept up to date as stacks appear, so a destination is
legal when it is in it (docs/spec/games/knightline.md §4.1); `movable` lists each seat's
stacks of two tiles or more, the only ones that can move. A move is the int (source << 8 |
knight direction << 5 | K), a set-up turn cell << 8 (K = 0), a pass the string "pass"; the
text is built only in move_text.
"""

import functools

from pbm.engine import Engine

from .notation import CELL_RE, MOVE_RE, cell_text, leading_cell_text, move_text

WHITE, BLACK, RED = 0, 1, 2
PLAYER_NAMES = ("White", "Black", "Red")
LINE_LENGTH = 4
R = 96
W = 2 * R + 1
GREY = 3
PASS = "pass"
# Sorted by (dx, dy), which sorts the destinations of one source by cell.
KNIGHT_STEPS = ((-2, -1), (-2, 1), (-1, -2), (-1, 2), (1, -2), (1, 2), (2, -1), (2, 1))
KNIGHT_OFFSETS = tuple(dx * W + dy for dx, dy in KNIGHT_STEPS)
KNIGHT_DIRECTIONS = tuple(
    (offset, direction << 5) for direction, offset in enumerate(KNIGHT_OFFSETS)
)
NEIGHBOUR_OFFSETS = tuple(dx * W + dy for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy)
LINE_STEPS = (W, 1, W + 1, W - 1)  # (1, 0), (0, 1), (1, 1), (1, -1), the order lines are judged in
COUNT_BITS = 31
COUNT_TEXTS = tuple(str(count) for count in range(COUNT_BITS + 1))


def cell_index(x: int, y: int) -> int:
    return (x + R) * W + y + R


def cell_of(index: int) -> tuple[int, int]:
    return index // W - R, index % W - R


@functools.cache
def _prefix(source: int, offset: int) -> str:
    """The text of a move from source by a knight's offset, up to its count."""
    return move_text(cell_of(source), cell_of(source + offset), "")


class KnightLineEngine(Engine):
    __slots__ = (
        "options",
        "players",
        "stack",
        "grey",
        "owner",
        "height",
        "frontier",
        "movable",
        "placed",
        "on_move",
        "out",
        "last",
        "winners",
        "reason",
        "lines_of",
    )

    @classmethod
    def from_state(cls, state) -> "KnightLineEngine":
        self = cls.__new__(cls)
        options = state["options"]
        self.options = options
        self.players = state["players"]
        self.stack = options["stack"]
        self.owner, self.height = {}, {}
        self.movable = [[] for _ in range(self.players)]
        self.placed = [0] * self.players
        self.grey = None
        if state["grey"] is not None:
            self.grey = cell_index(*state["grey"])
            self.owner[self.grey] = GREY
        for x, y, seat, height in state["stacks"]:
            cell = cell_index(x, y)
            self.owner[cell], self.height[cell] = seat, height
            self.placed[seat] += 1
            if height >= 2:
                self.movable[seat].append(cell)
        owner = self.owner
        self.frontier = {
            cell + offset
            for cell in owner
            for offset in NEIGHBOUR_OFFSETS
            if cell + offset not in owner
        }
        self.on_move = state["to_move"]
        self.out = frozenset(state["out"])
        # The last move stays the text the state gave until a move replaces it.
        self.last = tuple(state["last"]) if state["last"] is not None else None
        self.winners = tuple(state["winners"]) if state["winners"] is not None else None
        self.reason = state["reason"]
        wild = options["wildcard"]
        # The owners that count for a seat's line (docs/spec/games/knightline.md §5): the grey
        # tile too with -wildcard.
        self.lines_of = tuple((seat, GREY) if wild else (seat,) for seat in range(self.players))
        return self

    def copy(self) -> "KnightLineEngine":
        other = KnightLineEngine.__new__(KnightLineEngine)
        other.options = self.options
        other.players = self.players
        other.stack = self.stack
        other.grey = self.grey
        other.owner = self.owner.copy()
        other.height = self.height.copy()
        other.frontier = self.frontier.copy()
        other.movable = [cells[:] for cells in self.movable]
        other.placed = self.placed[:]
        other.on_move = self.on_move
        other.out = self.out
        other.last = self.last
        other.winners = self.winners
        other.reason = self.reason
        other.lines_of = self.lines_of
        return other

    # -- the search contract ---------------------------------------------------------

    def to_move(self) -> int | None:
        return self.on_move

    def outcome(self):
        from pbm.game import Outcome

        if self.winners is None:
            return None
        return Outcome(winners=self.winners, reason=self.reason)

    def legal_moves(self) -> list:
        seat = self.on_move
        if seat is None:
            return []
        moves = self.moves_of(seat)
        return moves if moves else [PASS]

    def moves_of(self, seat) -> list:
        """The seat's moves, unordered, without the pass."""
        if self.grey is not None and not self.placed[seat]:
            owner = self.owner
            return [
                cell << 8
                for cell in (self.grey + offset for offset in NEIGHBOUR_OFFSETS)
                if cell not in owner
            ]
        frontier, height = self.frontier, self.height
        moves = []
        # docs/spec/games/knightline.md §4.2: White's first move in a two-player game moves
        # one tile.
        restricted = self.players == 2 and seat == WHITE and self.placed[WHITE] == 1
        extend = moves.extend
        for source in self.movable[seat]:
            first, last = (source << 8) + 1, (source << 8) + (2 if restricted else height[source])
            for offset, direction in KNIGHT_DIRECTIONS:
                if source + offset in frontier:
                    extend(range(first + direction, last + direction))
        return moves

    def has_move(self, seat) -> bool:
        if self.grey is not None and not self.placed[seat]:
            owner = self.owner
            return any(self.grey + offset not in owner for offset in NEIGHBOUR_OFFSETS)
        frontier = self.frontier
        for source in self.movable[seat]:
            for offset in KNIGHT_OFFSETS:
                if source + offset in frontier:
                    return True
        return False

    def play(self, move) -> None:
        self.play_as(self.on_move, move)

    def play_as(self, seat, move) -> None:
        self.last = (seat, move)
        if move == PASS:
            if self.has_move(seat):
                # The core passes for a seat that still has a move only once it has resigned
                # or forfeited: from now on it is out and never stops the game.
                self.out = self.out | {seat}
            self.advance(seat)
            return
        owner, height = self.owner, self.height
        count = move & COUNT_BITS
        source = move >> 8
        if count:
            destination = source + KNIGHT_OFFSETS[(move >> 5) & 7]
            left = height[source] - count
            height[source] = left
            if left == 1:
                self.movable[seat].remove(source)
        else:
            destination, count = source, self.stack
        owner[destination] = seat
        height[destination] = count
        self.placed[seat] += 1
        if count >= 2:
            self.movable[seat].append(destination)
        frontier = self.frontier
        frontier.discard(destination)
        for offset in NEIGHBOUR_OFFSETS:
            if destination + offset not in owner:
                frontier.add(destination + offset)
        if not self.judge_line(seat, destination):
            self.advance(seat)

    def longest_line(self, seat, cell):
        """(first cell, last cell, length, step) of the longest line of 4 or more of the
        seat's through cell (docs/spec/games/knightline.md §5), the first of the row, column
        and diagonals on a tie; None when there is none."""
        counts = self.lines_of[seat]
        best = None
        for step in LINE_STEPS:
            low, high = self._beyond_run(cell, step, counts)
            length = (high - low) // step - 1
            if length >= LINE_LENGTH and (best is None or length > best[2]):
                best = (low + step, high - step, length, step)
        return best

    def judge_line(self, seat, cell) -> bool:
        """End the game if the new stack on cell is in a line of 4 or more of the mover's."""
        best = self.longest_line(seat, cell)
        if best is None:
            return False
        start, end, length, _ = best
        self.on_move, self.winners = None, (seat,)
        self.reason = (
            f"{PLAYER_NAMES[seat]} made a line of {length} from "
            f"{cell_text(cell_of(start))} to {cell_text(cell_of(end))}"
        )
        return True

    def line_move(self, moves, seat=None):
        """One of moves (those of seat, by default the seat on move) that makes a line and
        wins, else None; cheap enough for a playout, as it looks at each destination once and
        plays nothing."""
        counts = self.lines_of[self.on_move if seat is None else seat]
        looked = set()
        for move in moves:
            if move == PASS:
                continue
            count, source = move & COUNT_BITS, move >> 8
            cell = source + KNIGHT_OFFSETS[(move >> 5) & 7] if count else source
            if cell in looked:
                continue
            looked.add(cell)
            for step in LINE_STEPS:
                low, high = self._beyond_run(cell, step, counts)
                if (high - low) // step - 1 >= LINE_LENGTH:
                    return move
        return None

    def _beyond_run(self, cell, step, counts) -> tuple[int, int]:
        """The first cells on either side of cell, along step, that hold no stack counting
        for the line (counts: the owners whose stacks count for the mover's lines)."""
        get = self.owner.get
        low = cell - step
        while get(low) in counts:
            low -= step
        high = cell + step
        while get(high) in counts:
            high += step
        return low, high

    def advance(self, mover) -> None:
        """Give the turn to the next seat, or end a game nobody can go on with
        (docs/spec/games/knightline.md §4.3)."""
        following = (mover + 1) % self.players
        if following in self.out or self.has_move(following):
            self.on_move = following
        elif self.players == 3:
            self.on_move, self.winners = None, ()
            self.reason = f"{PLAYER_NAMES[following]} cannot move: a draw"
        elif self.has_move(mover):
            self.on_move = following  # a forced pass, which legal_moves offers
        else:
            self.on_move, self.winners = None, (BLACK,)
            self.reason = "neither player can move: a blocked game goes to Black"

    # -- texts and states --------------------------------------------------------------

    def move_text(self, move) -> str:
        if move == PASS:
            return PASS
        count, source = move & COUNT_BITS, move >> 8
        if not count:
            return leading_cell_text(cell_of(source))
        destination = source + KNIGHT_OFFSETS[(move >> 5) & 7]
        return move_text(cell_of(source), cell_of(destination), count)

    def move_texts_of(self, seat) -> list[str]:
        """The move texts of moves_of(seat) in the order of the sorted moves (by source,
        direction, count): the moves of one stack in one direction share their text up to
        the count."""
        if self.grey is not None and not self.placed[seat]:
            return [self.move_text(move) for move in sorted(self.moves_of(seat))]
        frontier, height = self.frontier, self.height
        restricted = self.players == 2 and seat == WHITE and self.placed[WHITE] == 1
        texts = []
        extend = texts.extend
        for source in sorted(self.movable[seat]):
            counts = COUNT_TEXTS[1 : 2 if restricted else height[source]]
            for offset in KNIGHT_OFFSETS:  # in the order of their direction numbers
                if source + offset in frontier:
                    extend(map(_prefix(source, offset).__add__, counts))
        return texts

    def last_text(self, move) -> str:
        return move if isinstance(move, str) else self.move_text(move)

    @staticmethod
    def parse_text(text):
        """The move of a canonical move text (as parse_move gives it) or "pass"."""
        if text == PASS:
            return PASS
        match = MOVE_RE.fullmatch(text)
        if match is None:
            match = CELL_RE.fullmatch(text)
            return cell_index(int(match[2]), int(match[3])) << 8
        source = cell_index(int(match[2]), int(match[3]))
        step = (int(match[5]) - int(match[2])) * W + int(match[6]) - int(match[3])
        return (source << 8) | (KNIGHT_OFFSETS.index(step) << 5) | int(match[7])

    def state(self):
        owner = self.owner
        stacks = [[*cell_of(cell), owner[cell], self.height[cell]] for cell in sorted(self.height)]
        last = self.last
        return {
            "options": self.options,
            "players": self.players,
            "stacks": stacks,
            "grey": list(cell_of(self.grey)) if self.grey is not None else None,
            "to_move": self.on_move,
            "out": sorted(self.out),
            "last": None if last is None else [last[0], self.last_text(last[1])],
            "winners": None if self.winners is None else list(self.winners),
            "reason": self.reason,
        }
