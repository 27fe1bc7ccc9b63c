"""The banks of a correspondence clock derive from the move log alone (docs/spec/server.md
§9.5): each ply charges its mover what it recorded, a move, pass or swap gains the
increment up to the cap, a swap exchanges the banks with the seats, and so taking plies back
(undo, a withdrawal's restart) gives their time back."""

from typing import NamedTuple

from pbm.timebank import ClockTerms, banks_after, banks_by_ply

DAY, HOUR = 86400, 3600


class Ply(NamedTuple):
    seat: int
    kind: str
    clock_charged: int | None


TERMS = ClockTerms(3 * DAY, 12 * HOUR, 4 * DAY)
PLIES = [
    Ply(0, "move", DAY),  # 72h - 24h + 12h = 60h
    Ply(1, "swap", 2 * HOUR),  # 72h - 2h + 12h = 82h, then the seats exchange banks
    Ply(0, "move", HOUR),  # 82h - 1h + 12h = 93h
    Ply(1, "resign", 0),  # a departure gains nothing (and out of turn is charged nothing)
]


def test_each_ply_charges_its_mover_and_a_swap_exchanges_the_banks():
    assert banks_after(TERMS, 2, PLIES[:1]) == [60 * HOUR, 72 * HOUR]
    assert banks_after(TERMS, 2, PLIES[:2]) == [82 * HOUR, 60 * HOUR]
    assert banks_after(TERMS, 2, PLIES) == [93 * HOUR, 60 * HOUR]
    # What the web view shows per ply: the bank each mover was left with.
    assert banks_by_ply(TERMS, 2, PLIES) == [60 * HOUR, 82 * HOUR, 93 * HOUR, 60 * HOUR]


def test_taking_plies_back_gives_their_time_back():
    """Undo marks plies undone and the banks are read from the live ones: the mover of the
    ply taken back has the bank they had before it."""
    after = banks_after(TERMS, 2, PLIES[:3])
    taken_back = banks_after(TERMS, 2, PLIES[:2])
    assert after[0] - taken_back[0] == 12 * HOUR - HOUR  # its charge back, its gain gone
    assert banks_after(TERMS, 2, []) == [72 * HOUR, 72 * HOUR]  # a restart: every bank full


def test_the_increment_holds_at_the_cap():
    free = [Ply(0, "move", 0), Ply(1, "move", 0), Ply(0, "pass", 0), Ply(1, "move", 0)]
    free += [Ply(0, "move", 0)]  # 72h + 3 x 12h would be 108h: held at 96h
    assert banks_after(TERMS, 2, free) == [96 * HOUR, 96 * HOUR]
