"""Boards kept between commands (issue 31): a long-lived server (`pbm serve`'s writer) plays
one move after another on the same boards, and reading a board's whole move log back and
replaying it from its snapshot was a tenth of every move. The move log stays the truth:
a board kept is used only when the log it was replayed from is still the board's log.

What identifies a board's log is its live plies' count and their highest row id
(Boards.log_mark). Rows of the move log are never deleted or changed but for being set
aside (undone), and a new row's id is above every id in the table, so once a set of plies
has been committed the same count and highest id can only mean the same plies. That holds
only for committed plies: an insert rolled back frees its id for the next one. So a board
is kept only from a commit on: what a transaction loads or plays is staged, and the
store's commit publishes it (Store.listeners); any rollback, a savepoint's too, drops
everything staged. Another process (the mail pipe, the command line) writing the same
database changes the mark of every board it plays on, so its moves are read, not missed.
"""

from collections import OrderedDict
from typing import NamedTuple

from .position import Position

BOARDS_KEPT = 256  # a few hundred boards in play at once; each keeps its log and state
DRAWINGS_KEPT = 64  # text boards and pictures of the last states drawn


class KeptBoard(NamedTuple):
    mark: tuple[int, int | None]  # the log's live plies and their highest row id
    options: str  # as stored: the replay depends on them, the seed and the seats
    seed: int
    seat_userids: tuple[str, ...]
    position: Position


class BoardCache:
    """Positions of boards as committed, by board id, for the Board of the next command."""

    def __init__(self, store, size: int = BOARDS_KEPT):
        self.store = store
        self.size = size
        self.kept: OrderedDict[int, KeptBoard] = OrderedDict()
        self.staged: dict[int, KeptBoard] = {}
        store.listeners.append(self)

    def position(self, row, seat_userids: list[str]) -> Position | None:
        """A copy of the board's position when the one kept was replayed from the very log
        the board has now; None otherwise (the caller replays the log)."""
        kept = self.staged.get(row.id) or self.kept.get(row.id)
        if kept is None:
            return None
        if (
            kept.options != row.options
            or kept.seed != row.seed
            or kept.seat_userids != tuple(seat_userids)
            or kept.mark != self.store.boards.log_mark(row.id)
        ):
            return None
        return kept.position.copy()

    def stage(self, row, seat_userids: list[str], position: Position) -> None:
        """The board's position as it stands in this transaction, kept from its commit on."""
        self.staged[row.id] = KeptBoard(
            self.store.boards.log_mark(row.id),
            row.options,
            row.seed,
            tuple(seat_userids),
            position.copy(),
        )

    # -- Store.listeners ----------------------------------------------------------------

    def committed(self) -> None:
        for board_id, kept in self.staged.items():
            self.kept[board_id] = kept
            self.kept.move_to_end(board_id)
        self.staged.clear()
        while len(self.kept) > self.size:
            self.kept.popitem(last=False)

    def rolled_back(self) -> None:
        self.staged.clear()


class Drawings(OrderedDict):
    """Boards drawn, as text and as pictures, by state (its id: each entry holds its state,
    so no other state can have that id while it is kept), perspective and view; shared by
    the commands of one server, so that a state is drawn once however many recipients and
    commands show it (summary.py, htmlmail.py). States are never changed in place."""

    def __init__(self, size: int = DRAWINGS_KEPT):
        super().__init__()
        self.size = size

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)


def view_of(game, perspective):
    """The perspective a drawing depends on: none for a game that shows every reader the
    same board (BaseGame.same_view_for_all)."""
    return None if game.same_view_for_all else perspective
