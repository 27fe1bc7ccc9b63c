"""Issue 25.6: reset codes a stranger cannot cancel. A `forgot` leaves the codes already
mailed valid (at most three pending, each used once, each for its hour); an account gets at
most one reset mail per `reset_mail_window_minutes`, whoever asks (docs/spec/server.md
§3.2.3)."""

import os
import re

import sqlite_utils
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbm.clock import parse_stamp
from pbm.commands.recovery import code_digest
from pbm.config import Config
from pbm.store import Store, core_migrations
from tests.conftest import STRESS_FACTOR, Harness, body_of
from tests.mailpipe import command_mail, pipe
from tests.replying import reply_mail

BOB = "bob@example.org"
STRANGER = "stranger@evil.example"
CODE_RE = re.compile(r"Your reset code is: (\S+)")


def reset_mails(harness):
    return [m for m in harness.new_mails(BOB) if m["Reply-To"] is not None]


def code_of(mail) -> str:
    return CODE_RE.search(body_of(mail)).group(1)


def test_a_strangers_forgot_does_not_cancel_bobs_code(harness, clock):
    harness.signup("bob")
    clock("2026-07-01T10:00:00")
    harness.ok("forgot bob", sender=BOB)
    [mine] = reset_mails(harness)
    clock("2026-07-01T10:20:00")
    harness.ok("forgot bob", sender=STRANGER)
    [theirs] = reset_mails(harness)
    assert code_of(mine) != code_of(theirs)
    clock("2026-07-01T10:50:00")
    harness.ok(f"reset bob {code_of(mine)} n3wpass", sender=BOB)
    harness.ok("vacation bob n3wpass", sender=BOB)


def test_one_reset_mail_per_window_whoever_asks(harness, clock):
    harness.signup("bob")
    clock("2026-07-01T10:00:00")
    harness.ok("forgot bob", sender=STRANGER)
    for minute, sender in (("05", BOB), ("10", "other@evil.example"), ("14", STRANGER)):
        clock(f"2026-07-01T10:{minute}:00")
        answer = harness.ok("forgot bob", sender=sender)
        assert [m.subject for _, m in answer.queued] == ["Password reset for bob"]
    assert len(reset_mails(harness)) == 1
    clock("2026-07-01T10:15:01")
    harness.ok("forgot bob", sender=BOB)
    assert len(reset_mails(harness)) == 1


def test_the_window_is_a_setting(harness, clock):
    harness.configure("[limits]\nreset_mail_window_minutes = 60\n")
    harness.signup("bob")
    clock("2026-07-01T10:00:00")
    harness.ok("forgot bob", sender=BOB)
    clock("2026-07-01T10:59:00")
    harness.ok("forgot bob", sender=BOB)
    assert len(reset_mails(harness)) == 1
    assert "in the last 60 minutes" in " ".join(harness.mails(BOB)[-1].get_content().split())


def test_at_most_three_pending_each_used_once_each_for_its_hour(harness, clock):
    harness.configure("[limits]\nreset_mail_window_minutes = 1\n")
    harness.signup("bob")
    codes = []
    for minute in ("00", "05", "10", "15"):
        clock(f"2026-07-01T10:{minute}:00")
        harness.ok("forgot bob", sender=BOB)
        codes += [code_of(m) for m in reset_mails(harness)]
    assert len(codes) == 3, "a fourth code is not made while three are pending"
    clock("2026-07-01T11:00:01")
    assert "Invalid or expired reset code" in harness.refused(f"reset bob {codes[0]} n3wpass")
    harness.ok("forgot bob", sender=BOB)
    codes += [code_of(m) for m in reset_mails(harness)]
    assert len(codes) == 4, "the first expired: room for one more"
    harness.ok(f"reset bob {codes[1]} n3wpass", sender=BOB)
    for code in codes[1:]:
        assert "Invalid or expired reset code" in harness.refused(f"reset bob {code} other12")


def test_a_reply_to_any_reset_mail_works_with_its_own_token(harness, clock):
    harness.signup("bob")
    mails = []
    for minute in ("00", "20"):
        clock(f"2026-07-01T10:{minute}:00")
        harness.ok("forgot bob", sender=STRANGER)
        mails += reset_mails(harness)
    first, second = mails
    raw = reply_mail(first, BOB, "n3wpass")
    assert harness.deliver(raw, envelope_recipients=[str(first["Reply-To"])]).result.ok
    raw = reply_mail(second, BOB, "other123")
    assert not harness.deliver(raw, envelope_recipients=[str(second["Reply-To"])]).result.ok
    harness.ok("vacation bob n3wpass", sender=BOB)


def test_strangers_cannot_use_up_the_owners_reset_mails(harness, clock):
    harness.configure(
        "[limits]\nreset_mails_per_account_per_day = 2\nreset_mail_window_minutes = 1\n"
    )
    harness.signup("bob")
    for minute, sender in (("00", "a@evil.example"), ("10", "b@evil.example"), ("20", STRANGER)):
        clock(f"2026-07-01T10:{minute}:00")
        harness.ok("forgot bob", sender=sender)
    assert len(reset_mails(harness)) == 2, "others get two a day"
    clock("2026-07-01T10:30:00")
    harness.ok("forgot bob", sender=BOB)
    assert len(reset_mails(harness)) == 1, "the owner still gets his"


def test_a_pending_code_survives_the_upgrade(tmp_path):
    db = sqlite_utils.Database(tmp_path / "pbm.db")
    core_migrations().apply(db, stop_before="m014_several_reset_codes")
    db["users"].insert(
        {"userid": "bob", "password_hash": "x", "status": "active", "created_at": "2026-01-01"}
    )
    db["password_resets"].insert(
        {
            "userid": "bob",
            "code_digest": code_digest("bob", "ABCDEFGHJKMN"),
            "created_at": "2026-07-01T10:00:00Z",
            "expires_at": "2026-07-01T11:00:00Z",
            "token_id": "a" * 16,
        }
    )
    core_migrations().apply(db)
    db.close()
    store = Store.open(tmp_path / "pbm.db")
    try:
        [code] = store.users.reset_codes("bob", "2026-07-01T10:30:00Z")
        assert code.code_digest == code_digest("bob", "ABCDEFGHJKMN")
        assert store.users.reset_by_token("a" * 16) == code
        assert "password_resets" not in store.db.table_names()
    finally:
        store.close()


def test_a_strangers_forgot_through_the_mail_pipe(project_env, challenged_home):
    home = challenged_home
    harness = Harness.__new__(Harness)
    harness.home, harness.seen = home, set()
    harness.new_mails()

    def deliver(raw):
        run = pipe(project_env, raw)
        assert run.returncode == 0, run.stderr.decode()

    deliver(command_mail(BOB, "forgot bob"))
    [mine] = reset_mails(harness)
    deliver(command_mail(STRANGER, "forgot bob"))
    assert reset_mails(harness) == [], "within the window: no second mail"
    deliver(command_mail(BOB, f"reset bob {code_of(mine)} n3wpass"))
    assert [m["Subject"] for m in harness.new_mails(BOB)] == ["Password changed for bob"]


REQUESTS = st.lists(
    st.tuples(st.integers(0, 40), st.sampled_from([BOB, STRANGER, "c@evil.example"])),
    min_size=1,
    max_size=15,
)


@settings(
    max_examples=15 * STRESS_FACTOR,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(requests=REQUESTS)
def test_generated_requests_never_void_a_code_nor_mail_twice_in_a_window(
    tmp_path_factory, requests
):
    """Hypothesis: whoever asks whenever, every code mailed stays valid until its hour is
    up, and bob never gets two reset mails within the window."""
    harness = Harness(tmp_path_factory.mktemp("codes") / "home")
    harness.configure("[limits]\nreset_requests_per_day = 100\n")
    mailed = []  # (time, code)
    minute = 0
    try:
        os.environ["PBM_NOW"] = "2026-07-01T00:00:00"
        harness.signup("bob")
        for step, sender in requests:
            minute += step
            moment = f"2026-07-01T{minute // 60:02d}:{minute % 60:02d}:00"
            os.environ["PBM_NOW"] = moment
            harness.ok("forgot bob", sender=sender)
            mailed += [(parse_stamp(moment), code_of(m)) for m in reset_mails(harness)]
            store = Store.open(Config.load(harness.home).db_path)
            try:
                pending = {c.code_digest for c in store.users.reset_codes("bob", moment + "Z")}
            finally:
                store.close()
            now = parse_stamp(moment)
            for at, code in mailed:
                if (now - at).total_seconds() < 3600:
                    assert code_digest("bob", code) in pending, "a mailed code was voided"
        times = [at for at, _ in mailed]
        assert all((b - a).total_seconds() >= 15 * 60 for a, b in zip(times, times[1:]))
    finally:
        os.environ.pop("PBM_NOW", None)
