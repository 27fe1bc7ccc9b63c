"""Three-player Knight Line games by mail, from signup to the end, through mail_handler.py."""

import pytest
from click.testing import CliRunner

from pbm.cli import cli
from tests.mailpipe import inbox, send
from tests.test_knightline import RED_WILDCARD_LINE, THREE_PLAYER_DRAW

PLAYERS = ("alice", "bob", "carol")
ADDRESSES = [f"{userid}@example.org" for userid in PLAYERS]


@pytest.fixture
def knightline_env(project_env):
    return dict(project_env, PBM_LOAD_PLUGINS="knightline")


def sign_up_and_challenge(env, home, seen, options):
    assert CliRunner().invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    for userid in PLAYERS:
        send(env, f"{userid}@example.org", f"signup {userid} pw-{userid}")
    inbox(home, seen)
    send(env, "alice@example.org", f"knightline challenge alice bob carol {options}".strip())
    got = inbox(home, seen)
    assert sorted(got) == ADDRESSES
    for address in ADDRESSES:
        [mail] = got[address]
        assert mail["Subject"] == "KnightLine Board 101: alice vs bob vs carol"
        assert (
            "A new KnightLine board (101) has been started."
            in mail.get_body(("plain",)).get_content()
        )


DRAW_RATINGS = [f"{userid}'s rating stays at 1600 (provisional)." for userid in PLAYERS]
RED_WIN_RATINGS = [
    "alice's rating went down from 1600 to 1500 (provisional).",
    "bob's rating went down from 1600 to 1500 (provisional).",
    "carol's rating went up from 1600 to 1700 (provisional).",
]


@pytest.mark.parametrize(
    "options,moves,refusal,state_line,reason,ratings,board_row",
    [
        (
            "",
            THREE_PLAYER_DRAW,
            "there is no White stack on 5,5",
            "Game was a tie.",
            "(White cannot move: a draw)",
            DRAW_RATINGS,
            "  -1    .  B7  R1[R15] W1  B4   .   .  -1",
        ),
        (
            "-wildcard",
            RED_WILDCARD_LINE,
            "this is your set-up turn",
            "Game won by carol.",
            "(Red made a line of 4 from 0,0 to 3,0)",
            RED_WIN_RATINGS,
            "   0    .   .  W4  B2   G  R3  R2 [R7]  .   0",
        ),
    ],
    ids=["draw", "red-wins-with-the-wildcard"],
)
def test_full_three_player_game_by_mail(
    knightline_env, tmp_path, options, moves, refusal, state_line, reason, ratings, board_row
):
    home = tmp_path / "home"
    seen = set()
    sign_up_and_challenge(knightline_env, home, seen, options)

    # Out of turn, and an illegal move on turn: refused to the sender only.
    send(knightline_env, "carol@example.org", f"knightline move 101 carol pw-carol {moves[0]}")
    send(knightline_env, "alice@example.org", "knightline move 101 alice pw-alice 5,5/6,7/1")
    got = inbox(home, seen)
    assert sorted(got) == ["alice@example.org", "carol@example.org"]
    assert "It is not your move" in got["carol@example.org"][0].get_body(("plain",)).get_content()
    assert got["alice@example.org"][0]["Subject"] == "KnightLine Board 101: alice vs bob vs carol"
    assert refusal in got["alice@example.org"][0].get_body(("plain",)).get_content()

    for ply, move in enumerate(moves, start=1):
        mover, following = PLAYERS[(ply - 1) % 3], PLAYERS[ply % 3]
        send(
            knightline_env,
            f"{mover}@example.org",
            f"knightline move 101 {mover} pw-{mover} {move}#{ply}",
            body=f"ply {ply}",
        )
        got = inbox(home, seen)
        assert sorted(got) == ADDRESSES, f"ply {ply}: one mail to each player"
        for _address, [mail] in got.items():
            body = mail.get_body(("plain",)).get_content()
            assert f"{mover} writes:\nply {ply}" in body
            if ply < len(moves):
                assert mail["Subject"] == "KnightLine Board 101: alice vs bob vs carol"
                assert f"It is {following}'s turn." in body
            else:
                assert mail["Subject"] == "KnightLine Board 101: alice vs bob vs carol"
                # docs/spec/server.md §8.2: against the mean of the other two, all new, so
                # provisional.
                assert f"{state_line}\n{reason}\n" + "\n".join(ratings) in body
                assert board_row in body
                assert "   White" in body and "Red" in body
                assert "Game ended......" in body

    send(knightline_env, "alice@example.org", f"knightline move 101 alice pw-alice {moves[0]}")
    [late] = inbox(home, seen)["alice@example.org"]
    assert "The game has ended" in late.get_body(("plain",)).get_content()
