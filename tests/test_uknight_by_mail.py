"""A complete Uknight game played by mail through mail_handler.py: pie swap, a pass, a win."""

from click.testing import CliRunner

from pbm.cli import cli
from tests.mailpipe import inbox, send

OPENING = "a3"  # alice's first placement as White; bob answers by swapping
# After the swap alice plays Black and moves first; bob, now White, unites White's stones.
BLACK_MOVES = "D4 D5 E4 C3 C2 E5 B4 A1 C4 A5 C5 D7 D6 pass".split()
WHITE_MOVES = "B2 C1 B3 D2 E2 B5 C6 C7 E8 F8 G9 F3 G4 H5".split()
PASSWORDS = {"alice": "pw-alice", "bob": "pw-bob"}


def move(env, userid, text):
    send(env, f"{userid}@example.org", f"uknight move 101 {userid} {PASSWORDS[userid]} {text}")


def test_full_uknight_game_by_mail(project_env, tmp_path):
    env = dict(project_env, PBM_LOAD_PLUGINS="uknight")
    home = tmp_path / "home"
    assert CliRunner().invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    seen = set()
    send(env, "alice@example.org", "signup alice pw-alice")
    send(env, "bob@example.org", "signup bob pw-bob")
    send(env, "alice@example.org", "uknight challenge alice bob -size=5")
    got = inbox(home, seen)
    new_board = got["alice@example.org"][-1]
    assert new_board["Subject"] == "Uknight Board 101: alice vs bob"
    body = new_board.get_body(("plain",)).get_content()
    assert "Options: -size=5" in body
    assert "Phase 1, axes 0 of 4 (White 0, Black 0)" in body
    # One text row per number line, labelled on both ends; letters above and below.
    assert (
        "\n".join(
            [
                "         E F G H I",
                "     9   . b . w .   9",
                "    8   w . . . . b   8",
                "   7   . . . . . . .   7",
                "  6   b . . . . . . w   6",
                " 5   . . . . . . . . .   5",
                "  4   w . . . . . . b   4",
                "   3   . . . . . . .   3",
                "    2   b . . . . w   2",
                "     1   . w . b .   1",
                "          A B C D E",
                "w b  White, Black stone",
                "W B  White, Black double (a stone with an axe)",
                "[ ]  the last move",
            ]
        )
        in body
    )

    move(env, "alice", "pass")
    [refusal] = inbox(home, seen)["alice@example.org"]
    assert "The first turn must be a placement" in refusal.get_body(("plain",)).get_content()

    move(env, "alice", f"{OPENING}#1")
    got = inbox(home, seen)
    assert got["bob@example.org"][0]["Subject"] == "Uknight Board 101: alice vs bob"
    assert (
        "Last move: White A3 (placed A3)"
        in got["bob@example.org"][0].get_body(("plain",)).get_content()
    )

    send(env, "bob@example.org", "uknight swap 101 bob pw-bob #2")
    got = inbox(home, seen)
    body = got["alice@example.org"][0].get_body(("plain",)).get_content()
    assert "bob has swapped sides." in body
    assert "   1 White (alice): A3\n   2 Black (bob): swap" in body
    assert "It is alice's turn." in body

    move(env, "alice", "D4,rem")
    [refusal] = inbox(home, seen)["alice@example.org"]
    assert "a removal can only come before the action" in refusal.get_body(("plain",)).get_content()

    plies = [("alice", black) for black in BLACK_MOVES]
    plies = [ply for pair in zip(plies, [("bob", white) for white in WHITE_MOVES]) for ply in pair]
    for number, (mover, text) in enumerate(plies, start=3):
        move(env, mover, f"{text}#{number}")
        got = inbox(home, seen)
        assert sorted(got) == ["alice@example.org", "bob@example.org"], (number, text)
        body = got[f"{mover}@example.org"][0].get_body(("plain",)).get_content()
        if text == "D7":
            assert "Last move: Black D7 (placed D7, which became a double)" in body
            assert "Phase 1, axes 1 of 4 (White 0, Black 1)" in body
        if text == "pass":
            assert "Last move: Black passed (a full pass)" in body

    for [mail] in got.values():
        assert mail["Subject"] == "Uknight Board 101: alice vs bob"
        body = mail.get_body(("plain",)).get_content()
        assert "Game won by bob." in body
        assert "(White's stones form a single group)" in body
        assert "Last move: White H5 (placed H5)" in body
        assert " 5   b w b b b . .[w].   5" in body, "H5 marked on the row labelled 5"
        assert "   1 White (alice): A3\n   2 Black (bob): swap" in body
        assert "  29 Black (alice): pass\n  30 White (bob): H5" in body

    move(env, "alice", "A2")
    [refusal] = inbox(home, seen)["alice@example.org"]
    assert "The game has ended" in refusal.get_body(("plain",)).get_content()
