"""The boards and refusals a player receives by mail (issue 16): every game marks the last
move in brackets without moving a label or a cell, labels every row on both ends, and
explains its symbols in a legend under the board; refusals say how to write a move."""

import pytest

from tests.conftest import body_of
from tests.mailpipe import command_mail


def mail(harness, userid, subject):
    """One command mail through process_message, as the pipe delivers it; the mails sent
    back to the sender."""
    harness.deliver(command_mail(f"{userid}@example.org", subject))
    return [body_of(message) for message in harness.new_mails(f"{userid}@example.org")]


def board_lines(body, first, count):
    lines = body.split("\n")
    start = lines.index(first)
    return lines[start : start + count]


@pytest.fixture
def players(harness):
    harness.signup("alice", "bob")
    harness.new_mails()
    return harness


def test_uknight_marks_the_last_move_on_the_row_that_bears_its_number(players):
    mail(players, "alice", "uknight challenge alice bob")
    [body] = mail(players, "alice", "uknight move 101 alice secret e3")
    # Each letter at an end of its line: F-K over the top row, A-F under the bottom row.
    assert board_lines(body, "          F G H I J K", 17) == [
        "          F G H I J K",
        "     11   . b . . w .   11",
        "    10   w . . . . . b   10",
        "    9   . . . . . . . .   9",
        "   8   . . . . . . . . .   8",
        "  7   b . . . . . . . . w   7",
        " 6   . . . . . . . . . . .   6",
        "  5   w . . . . . . . . b   5",
        "   4   . . . . . . . . .   4",
        "    3   . . . .[w]. . .   3",
        "     2   b . . . . . w   2",
        "      1   . w . . b .   1",
        "           A B C D E F",
        "w b  White, Black stone",
        "W B  White, Black double (a stone with an axe)",
        "[ ]  the last move",
        "Last move: White E3 (placed E3)",
    ]


def test_a_mark_in_the_first_column_moves_no_label_and_no_cell(players):
    mail(players, "alice", "knightvision challenge alice bob -size=9")
    mail(players, "alice", "knightvision move 101 alice secret c3")
    [body] = mail(players, "bob", "knightvision move 101 bob secret a3")
    lines = board_lines(body, "       a b c d e f g h i", 17)
    assert lines == [
        "       a b c d e f g h i",
        "   1   . . . . . . . . .   1",
        "    2   . . . . . . . . .   2",
        "     3  [b]. w . . . . . .   3",
        "      4   . . . . . . . . .   4",
        "       5   . . . . . . . . .   5",
        "        6   . . . . . . . . .   6",
        "         7   . . . . . . . . .   7",
        "          8   . . . . . . . . .   8",
        "           9   . . . . . . . . .   9",
        "                a b c d e f g h i",
        "w b  White, Black knight",
        "W B  White, Black stack (a knight with an axe)",
        "[ ]  the last move",
        "White (w W) joins top-bottom: rows 1 and 9",
        "Black (b B) joins left-right: columns a and i",
        "Last move: Black a3",
    ]
    # Two blanks stay after the label, and a3 stands where a row's first cell always does.
    assert lines[3].index("b") == lines[2].index(".") + 1 == lines[4].index(".") - 1


def test_lox_control_marks_do_not_look_like_stones(players):
    mail(players, "alice", "lox challenge alice bob -size=9 -control")
    mail(players, "alice", "lox move 101 alice secret a2")
    mail(players, "bob", "lox move 101 bob secret i9")
    [body] = mail(players, "alice", "lox move 101 alice secret e1")
    assert board_lines(body, "       a b c d e f g h i", 18) == [
        "       a b c d e f g h i",
        "   1   + . . .[R]. . . .   1",
        "    2   R . . . . . . . .   2",
        "     3   . . . . . . . . .   3",
        "      4   . . . . . . . . .   4",
        "       5   . . . . . . . . .   5",
        "        6   . . . . . . . . .   6",
        "         7   . . . . . . . . .   7",
        "          8   . . . . . . . . .   8",
        "           9   . . . . . . . . B   9",
        "                a b c d e f g h i",
        "R B  Red, Blue stone",
        "+ -  empty cell controlled by Red, Blue (the other may not place there)",
        ".    empty cell",
        "[ ]  the last move",
        "Red: top-bottom (rows 1 and 9), Blue: left-right (columns a and i)",
        "Last move: Red e1",
        "To move: Blue",
    ]


def test_knight_panic_marks_where_the_knight_left_and_arrived(players):
    mail(players, "alice", "knightpanic challenge alice bob")
    [body] = mail(players, "alice", "knightpanic move 101 alice secret a1-c5")
    assert board_lines(body, "      a c e g", 9) == [
        "      a c e g",
        "  7   x x x x   7",
        "  5   .[o]. .   5",
        "  3   . . . .   3",
        "  1  [.]o o o   1",
        "      a c e g",
        "o x  White, Black knight",
        "[ ]  the last move (from and to)",
        "Last move: White a1-c5",
    ]


def test_knight_panic_explains_doubled_coordinates_and_suggests_moves(players):
    mail(players, "alice", "knightpanic challenge alice bob")
    [refusal] = mail(players, "alice", "knightpanic move 101 alice secret b1-c3")
    assert (
        '"b1" is not a cell of this board; the files are a c e g and the ranks 1 3 5 7. '
        "Coordinates are doubled: the chess files a b c d are a c e g here and the chess "
        "ranks 1 2 3 4 are 1 3 5 7, so chess b1-c3 is c1-e5 here. Your knight on c1 can "
        "play, nearest first: c1-e5, c1-g3, c1-a5"
    ) in " ".join(refusal.split())


def test_knight_line_marks_the_move_and_lists_cells_one_way(players):
    mail(players, "alice", "knightline challenge alice bob")
    [body] = mail(players, "alice", "knightline move 101 alice secret 0,0/2,1/1")
    assert board_lines(body, "       -1   0   1   2   3", 9) == [
        "       -1   0   1   2   3",
        "   2    .   .   .   .   .   2",
        "   1    .   .   . [W1]  .   1",
        "   0    .[W19]B20   .   .   0",
        "  -1    .   .   .   .   .  -1",
        "       -1   0   1   2   3",
        "W B  White, Black stack; the number is its height",
        "[ ]  the last move (from and to)",
        "Last move: White 0,0/2,1/1",
    ]
    [refusal] = mail(players, "bob", "knightline move 101 bob secret 1,0/0,2/5")
    assert "from 1,0 you can move to (-1,-1), (-1,1), (2,2) or (3,1)" in " ".join(refusal.split())


def test_a_move_list_cut_to_its_last_rows_says_how_many_moves_went_before(players):
    """Board mails of running games show the last move_rows rows (docs/spec/server.md
    §5.5); a line above them counts the moves left out."""
    from tests.test_replies import board_state

    players.ok("knightpanic challenge alice bob", sender="alice@example.org")
    for ply in range(1, 11):
        position, game, _ = board_state(players, "knightpanic", 101)
        seat = position.to_move()
        move = min(game.legal_moves(position.state, seat))
        userid = position.holders[seat]
        players.ok(f"knightpanic move 101 {userid} secret {move}", sender=f"{userid}@example.org")
        body = body_of(players.mails("bob@example.org")[-1])
        if ply <= 8:
            assert "earlier move" not in body and "\n   1 " in body
        else:
            assert "\n ... 2 earlier moves\n   3 " in body
    shown = players.ok("knightpanic show 101").queued[0][1].body
    assert "earlier moves" not in shown and "\n   1 " in shown
