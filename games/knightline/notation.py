"""Knight Line's move notation (docs/spec/games/knightline.md §7): cells as x,y, moves as
FROM/TO/K, set-up turns as a single cell."""

import re

NUMBER = r"([+-]?\d{1,6})"


def cell_pattern(group: int) -> str:
    """x,y with optional, balanced parentheses; group is the number of its "(" group."""
    return rf"(\()?{NUMBER},{NUMBER}(?({group})\))"


CELL_RE = re.compile(cell_pattern(1))
MOVE_RE = re.compile(rf"{cell_pattern(1)}/{cell_pattern(4)}/\+?(\d{{1,6}})")
MISSING_K_RE = re.compile(rf"{cell_pattern(1)}/{cell_pattern(4)}/?")


def cell_text(cell) -> str:
    return f"{cell[0]},{cell[1]}"


def leading_cell_text(cell) -> str:
    """A move text may not start with "-" (server contract), so a cell left of x=0 that
    opens a move is written in parentheses: (-1,0)/1,1/3."""
    return f"({cell_text(cell)})" if cell[0] < 0 else cell_text(cell)


def move_text(source, destination, count) -> str:
    return f"{leading_cell_text(source)}/{cell_text(destination)}/{count}"
