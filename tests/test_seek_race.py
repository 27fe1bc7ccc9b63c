"""Open seeks racing (docs/spec/server.md §11.2): seek mails from many players piped into
mail_handler.py processes, eight at once. Matching happens inside each seek's write
transaction, so afterwards no player was paired with themselves, no pair of seeks started
two boards, no seek was lost (each player's boards and open seeks add up to what they
asked for), and no two open seeks that match were left unpaired. `make stress` runs it
bigger (PBM_STRESS=1)."""

import email
import email.policy
import json
import random

from click.testing import CliRunner

from pbm.cli import cli
from pbm.seeking import Seeker, find_group, terms_key
from pbm.store import Store
from tests.conftest import GENEROUS_LIMITS, STRESS_FACTOR
from tests.mailpipe import command_mail, pipe_at_once

PLAYERS = 16 if STRESS_FACTOR == 1 else 120
WORKERS = 8
TERMS = ["", "-size=6", "-size=6 --time=3d+24h"]


def test_racing_seeks_pair_each_seek_once_and_never_a_player_with_themselves(project_env, tmp_path):
    home = tmp_path / "home"
    runner = CliRunner()
    assert runner.invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    (home / "pbm.ini").write_text(GENEROUS_LIMITS)
    rng = random.Random(29)
    wanted = {}
    mails = []
    for i in range(PLAYERS):
        userid = f"s{i}"
        result = runner.invoke(
            cli, ["--home", str(home), "signup", userid, "pw" + userid, f"{userid}@race.example"]
        )
        assert result.exit_code == 0, result.output
        count, terms = rng.choice([1, 1, 2, 3]), rng.choice(TERMS)
        wanted[userid] = count
        subject = f"knightpanic seek {userid} pw{userid} {count} {terms}".strip()
        raw = command_mail(f"{userid}@race.example", subject, message_id=f"<seek-{i}@race.example>")
        # Each mail twice: a duplicate delivery must not seek twice.
        mails += [raw, raw]
    rng.shuffle(mails)
    pipe_at_once(project_env, mails, WORKERS)

    store = Store.open(home / "pbm.db")
    try:
        assert store.integrity_check() == "ok"
        rows = store.boards.of_game("knightpanic")
        boards = {row.number: store.boards.seat_userids(row.id) for row in rows}
        seeks = {userid: store.seeks.get("knightpanic", userid) for userid in wanted}
        for number, seats in boards.items():
            assert len(seats) == 2 and seats[0] != seats[1], (
                f"board {number} pairs a player with themselves"
            )
            row = store.boards.get("knightpanic", number)
            assert {seeks[u].options["size"] for u in seats} == {json.loads(row.options)["size"]}
        for userid, count in wanted.items():
            seated = sum(userid in seats for seats in boards.values())
            assert seated + seeks[userid].seeking == count, f"{userid}'s seeks do not add up"
        still = [
            Seeker(u, terms_key(s.options, s.server_options), 1600, None)
            for u, s in seeks.items()
            if s.seeking > 0
        ]
        assert find_group(still, 2) is None, "two open seeks that match were left unpaired"
    finally:
        store.close()
    # Each board was mailed once to each of its two players.
    new_board_mails = {}
    for path in (home / "outbox" / "new").iterdir():
        mail = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
        if "Paired by open seeks." in mail.get_content():
            key = (str(mail["Subject"]), str(mail["To"]))
            if "A new KnightPanic board" in mail.get_content():
                new_board_mails[key] = new_board_mails.get(key, 0) + 1
    assert len(new_board_mails) == 2 * len(boards)
    assert set(new_board_mails.values()) == {1}
    assert len(boards) >= PLAYERS // 4, "the race paired players"
