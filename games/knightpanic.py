"""Knight Panic (Cameron Browne, 2009): move chess knights, trap one of the opponent's.

Coordinates are doubled (spec section 1): files a c e g i k m and ranks 1 3 5 ... name
the cells; a point is stored as [X, Y, level] with X = letter - 'a', Y = number - 1.
"""

import re

from pbm import hookimpl
from pbm.game import BaseGame, MoveError, OptionError, Outcome, format_option

WHITE, BLACK = 0, 1
SYMBOLS = ("o", "x")
KNIGHT_STEPS = ((2, 4), (4, 2), (-2, 4), (-4, 2), (2, -4), (4, -2), (-2, -4), (-4, -2))
MOVE_RE = re.compile(r"([a-z])(\d{1,2})-([a-z])(\d{1,2})")

SETUP_ROWS = {  # White's rows from the bottom; Black's mirror them
    4: ["oooo"],
    5: ["ooooo", "o...o"],
    6: ["oooooo", "oo..oo", "o....o"],
    7: ["ooooooo", "oo...oo", "o.....o"],
}

# (default, other) for each pair of flags; the options dict keeps the "other" flag.
FLAG_PAIRS = (("2d", "3d"), ("mover_wins", "mover_loses"), ("lose_no_move", "win_no_move"))


def cell_name(x: int, y: int) -> str:
    return f"{chr(ord('a') + x)}{y + 1}"


class KnightPanic(BaseGame):
    name = "knightpanic"
    display_name = "KnightPanic"
    player_names = ("White", "Black")
    min_players = 2
    max_players = 2

    # -- options -------------------------------------------------------------------

    def parse_options(self, raw, players):
        options = {"size": 4, "3d": False, "mover_loses": False, "win_no_move": False}
        for name, value in raw.items():
            shown = format_option(name, value)
            if name == "size":
                if value is True or not re.fullmatch(r"\d+", value) or not 4 <= int(value) <= 7:
                    raise self._option_error(shown, "size must be from 4 to 7")
                options["size"] = int(value)
                continue
            pair = next((p for p in FLAG_PAIRS if name in p), None)
            if pair is None:
                raise self._option_error(
                    shown,
                    "unknown option; the options are -size=N, -2d or -3d, "
                    "-mover_wins or -mover_loses, -win_no_move or -lose_no_move",
                )
            if value is not True:
                raise self._option_error(shown, f"-{name} takes no value")
            if all(flag in raw for flag in pair):
                raise self._option_error(shown, f"give only one of -{pair[0]} and -{pair[1]}")
            options[pair[1]] = name == pair[1]
        if options["3d"]:
            raise self._option_error("-3d", "the 3D variant is not available on this server yet")
        return options

    def _option_error(self, shown, reason):
        return OptionError(f'Invalid {self.display_name} parameter "{shown}": {reason}')

    # -- state ---------------------------------------------------------------------

    def initial_state(self, options, players, seed):
        n = options["size"]
        pieces = []
        for row_index, row in enumerate(SETUP_ROWS[n]):
            for column, mark in enumerate(row):
                if mark == "o":
                    pieces.append([2 * column, 2 * row_index, 1, WHITE])
                    pieces.append([2 * column, 2 * (n - 1 - row_index), 1, BLACK])
        return {
            "options": options,
            "pieces": sorted(pieces),
            "to_move": WHITE,
            "last": None,
            "winner": None,
            "reason": "",
        }

    def to_move(self, state):
        return None if state["winner"] is not None else state["to_move"]

    def outcome(self, state):
        if state["winner"] is None:
            return None
        return Outcome(winners=(state["winner"],), reason=state["reason"])

    # -- geometry ------------------------------------------------------------------

    @staticmethod
    def _span(state) -> int:
        return 2 * state["options"]["size"] - 2

    def _on_board(self, state, x, y) -> bool:
        return 0 <= x <= self._span(state) and 0 <= y <= self._span(state) and x % 2 == y % 2 == 0

    @staticmethod
    def _occupancy(state) -> dict:
        return {(x, y): seat for x, y, _level, seat in state["pieces"]}

    def _targets(self, state, occupied, x, y):
        for dx, dy in KNIGHT_STEPS:
            tx, ty = x + dx, y + dy
            if self._on_board(state, tx, ty) and (tx, ty) not in occupied:
                yield tx, ty

    def _immobile(self, state, occupied, seat) -> list[str]:
        return [
            cell_name(x, y)
            for (x, y), owner in sorted(occupied.items())
            if owner == seat and next(self._targets(state, occupied, x, y), None) is None
        ]

    # -- moves ---------------------------------------------------------------------

    def _cell(self, state, letter, number) -> tuple[int, int]:
        x, y = ord(letter) - ord("a"), int(number) - 1
        if not self._on_board(state, x, y):
            raise MoveError(
                f'"{letter}{number}" is not a cell of this board; the files are '
                f"{' '.join(self.files(state))} and the ranks {' '.join(self.ranks(state))}"
            )
        return x, y

    def parse_move(self, state, seat, text):
        match = MOVE_RE.fullmatch(text.strip().lower())
        if not match:
            raise MoveError(
                f'Invalid move "{text}": write the knight\'s start and end cells as from-to, '
                "e.g. a1-c5"
            )
        start = self._cell(state, match.group(1), match.group(2))
        end = self._cell(state, match.group(3), match.group(4))
        occupied = self._occupancy(state)
        canonical = f"{cell_name(*start)}-{cell_name(*end)}"
        if occupied.get(start) != seat:
            raise MoveError(
                f'Invalid move "{canonical}": there is no {self.player_names[seat]} knight on '
                f"{cell_name(*start)}"
            )
        if (end[0] - start[0], end[1] - start[1]) not in KNIGHT_STEPS:
            raise MoveError(
                f'Invalid move "{canonical}": a knight moves two squares one way and one the '
                "other; write from-to, e.g. a1-c5"
            )
        if end in occupied:
            raise MoveError(f'Invalid move "{canonical}": {cell_name(*end)} is occupied')
        return canonical

    def legal_moves(self, state, seat):
        if self.to_move(state) != seat:
            return []
        occupied = self._occupancy(state)
        return [
            f"{cell_name(x, y)}-{cell_name(tx, ty)}"
            for (x, y), owner in sorted(occupied.items())
            if owner == seat
            for tx, ty in self._targets(state, occupied, x, y)
        ]

    def apply_move(self, state, seat, move):
        match = MOVE_RE.fullmatch(move)
        start = (ord(match.group(1)) - 97, int(match.group(2)) - 1)
        end = (ord(match.group(3)) - 97, int(match.group(4)) - 1)
        pieces = sorted(
            [end[0], end[1], level, owner] if (x, y) == start else [x, y, level, owner]
            for x, y, level, owner in state["pieces"]
        )
        new = dict(state, pieces=pieces, to_move=1 - seat, last=move)
        occupied = self._occupancy(new)
        theirs = self._immobile(new, occupied, 1 - seat)
        mine = self._immobile(new, occupied, seat)
        if theirs and (not mine or not new["options"]["mover_loses"]):
            new["winner"] = seat
            new["reason"] = self._trapped(1 - seat, theirs)
        elif mine:
            new["winner"] = 1 - seat
            new["reason"] = self._trapped(seat, mine)
        return new

    def _trapped(self, seat, cells) -> str:
        where = " and ".join(cells)
        knights = "knight" if len(cells) == 1 else "knights"
        return f"{self.player_names[seat]}'s {knights} on {where} cannot move"

    # -- display ---------------------------------------------------------------------

    def files(self, state) -> list[str]:
        return [chr(ord("a") + x) for x in range(0, self._span(state) + 1, 2)]

    def ranks(self, state) -> list[str]:
        return [str(y + 1) for y in range(0, self._span(state) + 1, 2)]

    def board_rows(self, state) -> list[tuple[str, str]]:
        """(rank label, row of symbols) from the top (Black's side) down."""
        occupied = self._occupancy(state)
        rows = []
        for y in range(self._span(state), -1, -2):
            cells = [
                SYMBOLS[occupied[(x, y)]] if (x, y) in occupied else "."
                for x in range(0, self._span(state) + 1, 2)
            ]
            rows.append((str(y + 1), " ".join(cells)))
        return rows

    def options_summary(self, options) -> str:
        tiebreak = "the opponent" if options["mover_loses"] else "the mover"
        return f"{options['size']}x{options['size']} board; a double trap is won by {tiebreak}"


@hookimpl
def register_games(register):
    register(KnightPanic())
