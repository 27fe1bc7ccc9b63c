"""A complete Lox game by mail through mail_handler.py: swap, refusals, a replacement, the win."""

from click.testing import CliRunner

from pbm.cli import cli
from tests.mailpipe import inbox, send

PASSWORDS = {"alice": "pw-alice", "bob": "pw-bob"}
# After alice's e5 and bob's swap, alice plays Blue (odd plies) and bob Red (even plies).
# Red builds column e; Blue's a4, a8, h1 and i4 come to see e4 and Blue replaces it (ply 13);
# Red goes round through d4 and d5 (ply 22), and the chain survives Blue's ply 23.
MOVES = "e5 swap a4 e1 a8 e2 h1 e3 c9 e4 i4 e6 xe4 e7 b2 e8 c2 e9 d2 d4 c3 d5 b4".split()
REFUSED = {
    14: (
        "XE4",
        'Invalid move "xe4": Red does not control e4, so Red cannot replace the Blue stone '
        "there: e4 sees Red e3, e5 and Blue a4, a8, h1, i4; e4 has 6 neighbours, so control "
        "takes 4 stones seen (more than half), and Red has 2",
    ),
    23: (
        "d9",
        'Invalid move "d9": Red controls d9, so Blue cannot place a stone there: d9 sees Red '
        "d5, e8, e9 and Blue c9; d9 has 4 neighbours, so control takes 3 stones seen (more "
        "than half)",
    ),
}


def command(userid, ply, move):
    if move == "swap":
        return f"lox swap 101 {userid} {PASSWORDS[userid]} #{ply}"
    return f"lox move 101 {userid} {PASSWORDS[userid]} {move}#{ply}"


def test_full_lox_game_by_mail(project_env, tmp_path):
    env = dict(project_env, PBM_LOAD_PLUGINS="lox")
    home = tmp_path / "home"
    assert CliRunner().invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    seen = set()
    for userid in PASSWORDS:
        send(env, f"{userid}@example.org", f"signup {userid} {PASSWORDS[userid]}")
    inbox(home, seen)

    send(env, "alice@example.org", "lox challenge alice bob -size=9 -control")
    got = inbox(home, seen)
    for address in ("alice@example.org", "bob@example.org"):
        [mail] = got[address]
        assert mail["Subject"] == "Lox Board 101: alice vs bob"
        body = mail.get_body(("plain",)).get_content()
        assert "Options: -control -size=9" in body
        assert "           9   . . . . . . . . .   9" in body

    for ply, move in enumerate(MOVES, start=1):
        # Before the swap alice is Red and moves at odd plies; after it she is Blue, still
        # on move at odd plies, since Blue moves after Red's first stone.
        mover, waiting = ("alice", "bob") if ply % 2 else ("bob", "alice")
        if ply in REFUSED:
            text, message = REFUSED[ply]
            send(env, f"{mover}@example.org", command(mover, ply, text))
            [refusal] = inbox(home, seen)[f"{mover}@example.org"]
            assert refusal["Subject"] == "Lox Board 101: alice vs bob"
            assert message in " ".join(refusal.get_body(("plain",)).get_content().split()), (
                "wrapped to the mail width"
            )

        send(env, f"{mover}@example.org", command(mover, ply, move))
        got = inbox(home, seen)
        assert sorted(got) == ["alice@example.org", "bob@example.org"]
        for [mail] in got.values():
            body = mail.get_body(("plain",)).get_content()
            if ply < len(MOVES):
                assert mail["Subject"] == "Lox Board 101: alice vs bob"
                assert f"It is {waiting}'s turn." in body
            if move == "swap":
                assert "bob has swapped sides." in body
                assert "Last move: Red e5" in body
            if ply == 13:
                assert "      4   B . . .[B]. . - B   4" in body, "Blue replaced e4"
            if ply == 22:
                assert "Game won" not in body, "a new chain must survive Blue's turn"
    body = mail.get_body(("plain",)).get_content()
    assert mail["Subject"] == "Lox Board 101: alice vs bob"
    assert "Game won by bob." in body
    assert "(Red's chain joins the top and bottom edges (rows 1 and 9))" in body
    assert "   1 Red (alice): e5\n   2 Blue (bob): swap\n   3 Blue (alice): a4\n" in body
    assert "  13 Blue (alice): xe4\n" in body and "  22 Red (bob): d5\n" in body
    assert "      4   B[B]. R B . . . B   4" in body
    assert "Red: top-bottom (rows 1 and 9), Blue: left-right (columns a and i)" in body
    assert "Last move: Blue b4" in body

    send(env, "bob@example.org", command("bob", 24, "a1"))
    [refusal] = inbox(home, seen)["bob@example.org"]
    assert "The game has ended" in refusal.get_body(("plain",)).get_content()
