"""Issue 25.4: confirmation that matches the proof. An address is confirmed for an account
only by mail whose origin it is (a signup, a right password, a valid reply token), or by
the operator at the terminal; mail held back by the unconfirmed-address cap is counted by
`pbm status` and told to the player in the next mail that reaches them."""

import json
import os
import random
import sqlite3
import subprocess
import sys

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbm.cli import cli
from tests.conftest import GENEROUS_LIMITS, ROOT, STRESS_FACTOR, Harness
from tests.replying import reply_mail
from tests.test_replies import board_state

ALICE, BOB = "alice@example.org", "bob@example.org"
CAP = "[limits]\nmails_to_unconfirmed_address_per_day = 3\n"


def signup_unconfirmed(harness, userid):
    """An account signed up by someone else (tester@example.org): its own address is
    registered but not confirmed."""
    harness.ok(f"signup {userid} secret {userid}@example.org", sender="tester@example.org")


def tally_reply(harness, address, move="1"):
    original = [m for m in harness.mails(address) if m["Reply-To"] is not None][-1]
    raw = reply_mail(original, address, move)
    result = harness.deliver(raw, envelope_recipients=[str(original["Reply-To"])]).result
    assert result.ok, harness.last_error_text(result)


def held(harness) -> int:
    with sqlite3.connect(harness.home / "pbm.db") as conn:
        return conn.execute("SELECT count(*) FROM held_mails").fetchone()[0]


def status_held(harness):
    text = CliRunner().invoke(cli, ["--home", str(harness.home), "status"]).output
    figures = json.loads(
        CliRunner().invoke(cli, ["--home", str(harness.home), "status", "--json"]).output
    )
    return text, figures["outbox"]["held_back"]


def test_operator_made_players_who_play_by_reply_get_every_board_mail(harness, clock):
    """Before: a player created by `pbm signup` who plays by reply never confirmed her
    address, and after the third mail of the day her board mails simply stopped."""
    harness.configure(CAP)
    clock("2026-08-01T10:00:00")
    for userid in ("alice", "bob"):
        harness.ok(f"signup {userid} secret {userid}@example.org", sender=None)
    harness.ok("tally challenge alice bob -target=100", sender=None)
    for _ in range(5):
        tally_reply(harness, ALICE)
        tally_reply(harness, BOB)
    # Account created, new board, ten moves.
    assert len(harness.mails(ALICE)) == 12 and len(harness.mails(BOB)) == 12
    assert held(harness) == 0


def test_a_reply_token_confirms_the_address_it_came_from(harness, clock):
    harness.configure(CAP)
    clock("2026-08-01T10:00:00")
    harness.signup("bob")  # from bob's address, which the challenge needs confirmed
    signup_unconfirmed(harness, "alice")
    harness.ok("tally challenge alice bob -target=100", sender=BOB)
    tally_reply(harness, ALICE)
    for _ in range(4):
        harness.ok("tally move 101 bob secret 1", sender=BOB)
        tally_reply(harness, ALICE)
    assert held(harness) == 0
    assert len(harness.mails(ALICE)) == 2 + 9, "account created, new board, nine moves"


def test_the_operator_vouches_for_added_addresses_a_stranger_does_not(harness, clock):
    harness.configure(CAP)
    clock("2026-08-01T10:00:00")
    harness.ok("signup alice secret alice@example.org", sender=None)
    harness.ok("add alice secret alice@work.example", sender=None)
    harness.ok("signup bob secret bob@example.org", sender="someone@example.net")
    with sqlite3.connect(harness.home / "pbm.db") as conn:
        proofs = set(conn.execute("SELECT userid, address FROM address_proofs"))
    assert {("alice", ALICE), ("alice", "alice@work.example")} <= proofs
    assert ("bob", BOB) not in proofs and ("bob", "someone@example.net") in proofs


def test_held_mail_is_counted_and_told_in_the_next_mail(harness, clock):
    harness.configure(CAP + "[mail]\nhtml = on\n")
    clock("2026-08-01T10:00:00")
    harness.signup("bob")
    signup_unconfirmed(harness, "alice")
    harness.ok("tally challenge bob alice -target=100", sender=BOB)
    for _ in range(5):
        harness.ok("tally move 101 bob secret 1", sender=BOB)
        harness.ok("tally move 101 alice secret 1", sender="alice@elsewhere.example")
    assert len(harness.new_mails(ALICE)) == 3, "of 12: account created, new board, ten moves"
    assert held(harness) == 9
    text, count = status_held(harness)
    assert count == 9 and "held back:  9 mails to unconfirmed addresses" in text
    clock("2026-08-02T10:00:01")
    harness.ok("tally move 101 bob secret 1", sender=BOB)
    [told] = harness.new_mails(ALICE)
    plain = " ".join(told.get_body(("plain",)).get_content().split())
    assert "9 mails for alice to alice@example.org were held back" in plain
    assert "send any command with your password from it, or answer a board mail" in plain
    html = told.get_body(("html",)).get_content()
    assert "9 mails for alice to alice@example.org were held back" in " ".join(html.split())
    assert held(harness) == 0 and status_held(harness)[1] == 0
    harness.ok("tally move 101 alice secret 1", sender="alice@elsewhere.example")
    harness.ok("tally move 101 bob secret 1", sender=BOB)
    later = [m.get_body(("plain",)).get_content() for m in harness.new_mails(ALICE)]
    assert later and all("held back" not in body for body in later), "told once"


def test_cleanup_forgets_notes_no_mail_could_carry(harness, clock):
    harness.configure(CAP)
    clock("2026-08-01T10:00:00")
    for n in range(5):
        harness.ok(f"signup farm{n} secret victim@target.example", sender=f"f{n}@evil.example")
    assert held(harness) == 2
    clock("2026-09-01T10:00:00")
    assert CliRunner().invoke(cli, ["--home", str(harness.home), "cleanup"]).exit_code == 0
    assert held(harness) == 0


def test_operator_made_players_playing_by_reply_through_the_mail_pipe(project_env, challenged_home):
    """challenged_home's players were made by `pbm signup` at the terminal."""
    home = challenged_home
    (home / "pbm.ini").write_text(GENEROUS_LIMITS + CAP)
    harness = Harness.__new__(Harness)
    harness.home, harness.seen = home, set()
    rng = random.Random(4)
    address = {"alice": ALICE, "bob": BOB}
    for _ in range(4):
        position, game, _ = board_state(harness, "knightpanic", 101)
        userid = position.holders[position.to_move()]
        move = rng.choice(sorted(game.legal_moves(position.state, position.to_move())))
        original = [m for m in harness.mails(address[userid]) if m["Reply-To"] is not None][-1]
        env = dict(project_env, ORIGINAL_RECIPIENT=str(original["Reply-To"]))
        run = subprocess.run(
            [sys.executable, str(ROOT / "mail_handler.py")],
            input=reply_mail(original, address[userid], move),
            env=env,
            cwd=ROOT,
            capture_output=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stderr.decode()
    assert board_state(harness, "knightpanic", 101)[0].plies_made == 4
    # Account created, new board, four moves.
    assert len(harness.mails(ALICE)) == 6 and len(harness.mails(BOB)) == 6


@settings(
    max_examples=12 * STRESS_FACTOR,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    moves=st.integers(1, 10),
    replies_from=st.none() | st.integers(0, 9),
    cap=st.integers(1, 4),
)
def test_generated_days_every_mail_is_delivered_or_held_and_told(
    tmp_path_factory, moves, replies_from, cap
):
    """Hypothesis: bob moves by password; alice (signed up by someone else) moves by password
    from another address, or from some move on by reply from her own. Every board mail to her
    address is delivered or held; held ones stop once she replies, and the next day's first
    mail tells exactly how many."""
    harness = Harness(tmp_path_factory.mktemp("confirm") / "home")
    harness.configure(f"[limits]\nmails_to_unconfirmed_address_per_day = {cap}\n")
    try:
        os.environ["PBM_NOW"] = "2026-08-01T10:00:00"
        harness.signup("bob")
        signup_unconfirmed(harness, "alice")
        harness.ok("tally challenge bob alice -target=100", sender=BOB)
        confirmed = False
        for n in range(moves):
            harness.ok("tally move 101 bob secret 1", sender=BOB)
            # She can answer only a mail she got: none of the latest may be held back.
            if replies_from is not None and n >= replies_from and (confirmed or not held(harness)):
                tally_reply(harness, ALICE)
                confirmed = True
            else:
                harness.ok("tally move 101 alice secret 1", sender="alice@elsewhere.example")
        made = 2 + 2 * moves  # account created, new board, the moves
        delivered = len(harness.new_mails(ALICE))
        holding = held(harness)
        assert delivered + holding == made
        if not confirmed:
            assert delivered == min(made, cap)
        os.environ["PBM_NOW"] = "2026-08-02T10:00:01"
        harness.ok("tally move 101 bob secret 1", sender=BOB)
        [told] = harness.new_mails(ALICE)
        body = " ".join(told.get_content().split())
        if holding:
            plural = "s" if holding != 1 else ""
            assert f"{holding} mail{plural} for alice to alice@example.org" in body
        else:
            assert "held back" not in body
        assert held(harness) == 0
    finally:
        os.environ.pop("PBM_NOW", None)
