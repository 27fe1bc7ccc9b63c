"""Joins racing (docs/spec/server.md §11.9): join mails from more players than a tournament
waits for, each sent twice as two different mails (and once more as a duplicate delivery),
piped into mail_handler.py processes eight at once. Each join runs in a write transaction of
its own, so afterwards no player is seated twice, the tournament started once with exactly
the players it waited for, every pair of a division has its two boards and no more, and
everyone who joined got one start mail. `make stress` runs it bigger (PBM_STRESS=1)."""

import email
import email.policy
import itertools
import random
from collections import Counter

from click.testing import CliRunner

from pbm.cli import cli
from pbm.store import Store
from tests.conftest import GENEROUS_LIMITS, STRESS_FACTOR
from tests.mailpipe import command_mail, pipe_at_once

SEATS = 12 if STRESS_FACTOR == 1 else 40  # the players the tournament waits for
LATE = 3 if STRESS_FACTOR == 1 else 10  # more who try to join
WORKERS = 8


def test_racing_joins_never_seat_a_player_twice_and_start_it_once(project_env, tmp_path):
    home = tmp_path / "home"
    runner = CliRunner()
    assert runner.invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    (home / "pbm.ini").write_text(GENEROUS_LIMITS)
    players = [f"j{i}" for i in range(SEATS + LATE)]
    for userid in players:
        result = runner.invoke(
            cli, ["--home", str(home), "signup", userid, "pw" + userid, f"{userid}@race.example"]
        )
        assert result.exit_code == 0, result.output
    created = runner.invoke(
        cli,
        ["--home", str(home), "tournament", "create", "race", "knightpanic", f"--players={SEATS}"]
        + ["--largest=5"],
    )
    assert created.exit_code == 0, created.output
    numbers = itertools.count()
    mails = []
    for userid in players:
        subject = f"tournament join race {userid} pw{userid}"
        for _ in range(2):  # two mails of the same join
            raw = command_mail(
                f"{userid}@race.example", subject, message_id=f"<join-{next(numbers)}@race>"
            )
            mails.append(raw)
        mails.append(raw)  # and the second delivered twice
    random.Random(30).shuffle(mails)
    pipe_at_once(project_env, mails, WORKERS)

    store = Store.open(home / "pbm.db")
    try:
        assert store.integrity_check() == "ok"
        record = store.tournaments.get("race")
        assert record.status == "running"
        entrants = store.tournaments.entrants(record.id)
        seated = [e.userid for e in entrants]
        assert len(seated) == len(set(seated)) == SEATS
        assert all(e.division is not None for e in entrants)
        boards = store.tournaments.boards(record.id)
        for division in {e.division for e in entrants}:
            members = {e.userid for e in entrants if e.division == division}
            pairs = Counter((b.white, b.black) for b in boards if b.division == division)
            assert pairs == {
                (white, black): 1 for white in members for black in members if white != black
            }
            for b in boards:
                if b.division == division:
                    assert store.boards.seat_userids(b.board_id) == [b.white, b.black]
        assert len(store.boards.all()) == len(boards)
    finally:
        store.close()
    start_mails = Counter()
    for path in (home / "outbox" / "new").iterdir():
        mail = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
        if mail["Subject"] == "Tournament race has started: your boards":
            start_mails[str(mail["To"])] += 1
    assert start_mails == {f"{userid}@race.example": 1 for userid in seated}
