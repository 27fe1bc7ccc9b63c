"""A KnightVision game played by mail through mail_handler.py: the swap, a stack, an axe
flying over a friend to capture, refusals with their reasons, and a chain that survives
the opponent's turn."""

from click.testing import CliRunner

from pbm.cli import cli
from tests.mailpipe import inbox, send

PASSWORDS = {"alice": "pw-alice", "bob": "pw-bob"}

# (ply, sender, move). After bob's swap at ply 2, bob plays White and alice Black.
PLIES = [
    (1, "alice", "e5"),
    (2, "bob", "swap"),
    (3, "alice", "h7"),
    (4, "bob", "f2"),
    (5, "alice", "i9"),
    (6, "bob", "d8"),
    (7, "alice", "f6"),
    (8, "bob", "d5"),
    (9, "alice", "g5"),
    (10, "bob", "e7"),
    (11, "alice", "i4"),
    (12, "bob", "g3"),
    (13, "alice", "i5"),
    (14, "bob", "f1"),
    (15, "alice", "G8+"),
    (16, "bob", "e4"),
    (17, "alice", "h2"),
    (18, "bob", "e6"),
    (19, "alice", "h3"),
    (20, "bob", "f3"),
    (21, "alice", "h5"),
    (22, "bob", "d9"),
    (23, "alice", "G8-G3"),
]

# (before ply, sender, move, what the error mail says)
REFUSALS = {
    2: ("bob", "e5", 'Invalid move "e5": e5 is not vacant: it holds White\'s knight on e5'),
    5: ("alice", "swap", "You can only swap after move number 1"),
    13: (
        "alice",
        "g8+",
        'Invalid move "g8+": a stack needs three of your pieces at a '
        "knight's move, and g8 has 2 (f6 and i9); write g8 to place a knight",
    ),
    23: (
        "alice",
        "g8-g2",
        'Invalid move "g8-g2": the axe cannot pass White\'s knight on g3; '
        "it can capture it with g8xg3",
    ),
}

FINAL_BOARD = """\
       a b c d e f g h i
   1   . . . . . w . . .   1
    2   . . . . . w . b .   2
     3   . . . . . w[b]b .   3
      4   . . . . w . . . b   4
       5   . . . w w . b b b   5
        6   . . . . w b . . .   6
         7   . . . . w . . b .   7
          8   . . . w . .[b]. .   8
           9   . . . w . . . . b   9
                a b c d e f g h i
w b  White, Black knight
W B  White, Black stack (a knight with an axe)
[ ]  the last move
White (w W) joins top-bottom: rows 1 and 9
Black (b B) joins left-right: columns a and i
Last move: Black g8xg3"""


def command(userid, move, guard=""):
    if move == "swap":
        return f"knightvision swap 101 {userid} {PASSWORDS[userid]} {guard}".rstrip()
    return f"knightvision move 101 {userid} {PASSWORDS[userid]} {move}{guard}"


def test_a_game_with_the_swap_by_mail(project_env, tmp_path):
    env = dict(project_env, PBM_LOAD_PLUGINS="knightvision")
    home = tmp_path / "home"
    assert CliRunner().invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    seen = set()
    send(env, "alice@example.org", "signup alice pw-alice")
    send(env, "bob@example.org", "signup bob pw-bob")
    inbox(home, seen)

    send(env, "alice@example.org", "knightvision challenge alice bob -size=9")
    got = inbox(home, seen)
    for address in ("alice@example.org", "bob@example.org"):
        [mail] = got[address]
        assert mail["Subject"] == "KnightVision Board 101: alice vs bob"
        body = mail.get_body(("plain",)).get_content()
        assert "Options: -size=9" in body
        assert "           9   . . . . . . . . .   9" in body

    for ply, userid, move in PLIES:
        if ply in REFUSALS:
            refused_userid, refused_move, reason = REFUSALS[ply]
            send(env, f"{refused_userid}@example.org", command(refused_userid, refused_move))
            got = inbox(home, seen)
            assert list(got) == [f"{refused_userid}@example.org"]
            [error] = got[f"{refused_userid}@example.org"]
            assert error["Subject"] == "KnightVision Board 101: alice vs bob"
            assert reason in " ".join(
                error.get_body(("plain",)).get_content().split()
            )  # the mail wraps at 76

        send(env, f"{userid}@example.org", command(userid, move, f"#{ply}"))
        got = inbox(home, seen)
        assert sorted(got) == ["alice@example.org", "bob@example.org"]
        for [mail] in got.values():
            body = mail.get_body(("plain",)).get_content()
            if ply == 2:
                assert "bob has swapped sides." in body
                assert "   1 White (alice): e5\n   2 Black (bob): swap" in body
                assert "  1   . . . . . . . . .   1" in body and "   5   . . . .[w]" in body
            if ply < len(PLIES):
                waiting = "alice" if userid == "bob" else "bob"
                assert mail["Subject"] == "KnightVision Board 101: alice vs bob"
                assert f"It is {waiting}'s turn." in body
            else:
                assert mail["Subject"] == "KnightVision Board 101: alice vs bob"
                assert "Game won by bob." in body
                assert "(White's chain joins the top and bottom edges)" in body
                assert (
                    "  21 Black (alice): h5\n  22 White (bob): d9\n  23 Black (alice): g8xg3"
                    in body
                )
                assert FINAL_BOARD in body

    send(env, "bob@example.org", command("bob", "c3"))
    [refusal] = inbox(home, seen)["bob@example.org"]
    assert "The game has ended" in refusal.get_body(("plain",)).get_content()
