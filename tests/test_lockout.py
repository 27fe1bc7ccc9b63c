"""Issue 25.3: no stranger can lock a player out. Limits and locks key on the origin (From);
what other origins run up never locks the owner's addresses; a valid reply token is never
refused for a password lock; a command refused by a limit is answered, and refused commands
do not extend the lock (docs/spec/server.md §7)."""

import os
import sqlite3

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import GENEROUS_LIMITS, STRESS_FACTOR, Harness
from tests.mailpipe import pipe
from tests.replying import reply_mail
from tests.test_origin import ALICE, raw_mail

OTHER = "other@evil.example"
# pbm's own defaults, not the tests' generous ones.
DEFAULT_LIMITS = (
    "[limits]\ncommands_per_hour = 60\nfailed_logins_per_hour = 5\n"
    "failed_logins_per_account_per_hour = 20\n"
)
LIST_LINES = "\n".join(["list"] * 31)


def plies(harness) -> int:
    with sqlite3.connect(harness.home / "pbm.db") as conn:
        return conn.execute("SELECT count(*) FROM moves").fetchone()[0]


def latest_token_mail(harness, address):
    return [m for m in harness.mails(address) if m["Reply-To"] is not None][-1]


def reply(harness, address, answer, sender=None):
    original = latest_token_mail(harness, address)
    raw = reply_mail(original, sender or address, answer)
    return harness.deliver(raw, envelope_recipients=[str(original["Reply-To"])])


def game(harness):
    harness.signup("alice", "bob")
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    harness.new_mails()


def test_the_issues_list_flood_with_reply_to_alice_no_longer_stops_her(harness, clock):
    """Measured in the issue: two `multiple` mails of 31 `list` lines with Reply-To: alice
    from another From made alice's own moves vanish for an hour."""
    harness.configure(DEFAULT_LIMITS)
    game(harness)
    clock("2026-06-01T10:00:00")
    for _ in range(2):
        raw = raw_mail("multiple", headers=[("Reply-To", ALICE)], body=LIST_LINES, sender=OTHER)
        harness.deliver(raw)
    assert harness.new_mails(ALICE) == [], "nothing went to alice"
    assert harness.run("knightpanic move 101 alice secret c1-e5", sender=ALICE).ok
    assert plies(harness) == 1
    harness.ok("knightpanic move 101 bob secret g7-e3", sender="bob@example.org")
    assert reply(harness, ALICE, "a1-c5").result.ok, "and by reply token"
    assert plies(harness) == 3


def test_six_wrong_passwords_sent_with_reply_to_alice_do_not_lock_her(harness, clock):
    harness.configure(DEFAULT_LIMITS)
    game(harness)
    clock("2026-06-01T10:00:00")
    for n in range(6):
        raw = raw_mail(
            f"knightpanic move 101 alice wrong{n} c1-e5",
            headers=[("Reply-To", ALICE)],
            sender=OTHER,
        )
        harness.deliver(raw)
    assert harness.run("knightpanic move 101 alice secret c1-e5", sender=ALICE).ok


def test_a_forged_from_locks_only_the_password_a_reply_token_still_plays(harness, clock):
    """Without a DMARC verdict a forged From alice cannot be told from alice: its wrong
    passwords count against her own address (a guesser gets no unlimited tries). Her reply
    token proves she reads her mail: no lock refuses it."""
    harness.configure(DEFAULT_LIMITS)
    game(harness)
    clock("2026-06-01T10:00:00")
    for n in range(6):
        harness.refused(f"knightpanic move 101 alice wrong{n} c1-e5", sender=ALICE)
    error = harness.refused("knightpanic move 101 alice secret c1-e5", sender=ALICE)
    assert "Too many failed password attempts for alice" in error
    outcome = reply(harness, ALICE, "c1-e5")
    assert outcome.result.ok and plies(harness) == 1
    # So does a reply to her reset mail.
    harness.new_mails()
    harness.ok("forgot alice", sender=ALICE)
    [reset_mail] = [m for m in harness.new_mails(ALICE) if m["Reply-To"] is not None]
    raw = reply_mail(reset_mail, ALICE, "n3wpass")
    outcome = harness.deliver(raw, envelope_recipients=[str(reset_mail["Reply-To"])])
    assert outcome.result.ok, [m.body for _, m in outcome.result.queued]


def test_a_command_over_the_limit_is_answered_and_refused_ones_do_not_extend_it(harness, clock):
    harness.configure("[limits]\ncommands_per_hour = 3\n")
    clock("2026-06-01T10:00:00")
    for _ in range(3):
        harness.ok("help games", sender=ALICE)
    harness.new_mails()
    clock("2026-06-01T10:30:00")
    first = harness.refused("help games", sender=ALICE)
    assert "Too many requests from alice@example.org; try again after 2026-06-01 11:00 UTC" in (
        " ".join(first.split())
    )
    for minute in ("40", "50", "59"):
        clock(f"2026-06-01T10:{minute}:00")
        later = harness.refused("help games", sender=ALICE)
        assert "try again after 2026-06-01 11:00 UTC" in " ".join(later.split()), (
            "each refused command is answered, and refusals do not extend the limit"
        )
    clock("2026-06-01T11:00:01")
    harness.ok("help games", sender=ALICE)


def test_refused_password_attempts_do_not_extend_the_lock(harness, clock):
    harness.configure(DEFAULT_LIMITS)
    game(harness)
    clock("2026-06-01T10:00:00")
    for n in range(6):
        harness.refused(f"knightpanic move 101 alice wrong{n} c1-e5", sender=OTHER)
    for minute in ("20", "40", "59"):
        clock(f"2026-06-01T10:{minute}:00")
        assert "Too many failed password attempts" in harness.refused(
            "knightpanic move 101 alice wrong c1-e5", sender=OTHER
        )
    clock("2026-06-01T11:00:01")
    assert "Invalid password entered" in harness.refused(
        "knightpanic move 101 alice wrong c1-e5", sender=OTHER
    )


def test_the_list_flood_through_the_mail_pipe(project_env, challenged_home):
    home = challenged_home
    (home / "pbm.ini").write_text(GENEROUS_LIMITS + DEFAULT_LIMITS)
    env = dict(project_env)

    def deliver(raw):
        run = pipe(env, raw)
        assert run.returncode == 0, run.stderr.decode()

    for _ in range(2):
        deliver(raw_mail("multiple", headers=[("Reply-To", ALICE)], body=LIST_LINES, sender=OTHER))
    deliver(raw_mail("knightpanic move 101 alice secret c1-e5"))
    harness = Harness.__new__(Harness)
    harness.home, harness.seen = home, set()
    assert plies(harness) == 1
    to_alice = harness.mails(ALICE)
    assert to_alice and all("List of games" not in m["Subject"] for m in to_alice)


ACTIONS = st.sampled_from(["flood", "guess", "guess with reply-to", "own list"])


@settings(
    max_examples=15 * STRESS_FACTOR,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(actions=st.lists(ACTIONS, max_size=12), minutes=st.lists(st.integers(0, 4), max_size=12))
def test_generated_strangers_never_keep_alice_from_her_own_address(
    tmp_path_factory, actions, minutes
):
    """Hypothesis: whatever other origins send in an hour (floods, wrong passwords, with or
    without Reply-To: alice), alice's own command from her address runs while she is within
    her own limits."""
    harness = Harness(tmp_path_factory.mktemp("lockout") / "home")
    # Alice's own within the hour: her signup and challenge, two lists, then the vacation.
    harness.configure(
        "[limits]\ncommands_per_hour = 5\nfailed_logins_per_hour = 2\n"
        "failed_logins_per_account_per_hour = 3\n"
    )
    os.environ["PBM_NOW"] = "2026-06-01T10:00:00"
    try:
        game(harness)
        for n, action in enumerate(actions):
            moment = sum(minutes[: n + 1])
            os.environ["PBM_NOW"] = f"2026-06-01T10:{moment:02d}:00"
            headers = [("Reply-To", ALICE)] if action != "guess" else []
            if action == "flood":
                harness.deliver(raw_mail("multiple", headers, "list\nlist\nlist", sender=OTHER))
            elif action.startswith("guess"):
                harness.deliver(raw_mail(f"vacation alice wrong{n}", headers, sender=OTHER))
            elif actions[:n].count("own list") < 2:
                assert harness.run("list", sender=ALICE).ok
        os.environ["PBM_NOW"] = "2026-06-01T10:59:00"
        result = harness.run("vacation alice secret", sender=ALICE)
        assert result.ok, harness.last_error_text(result)
    finally:
        os.environ.pop("PBM_NOW", None)
