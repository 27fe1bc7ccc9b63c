"""Issue 25.1: one origin per mail. The From address (the envelope sender only where From is
unusable) decides who may use a reply token, whose limits count, what a command confirms
and where the answer goes; Reply-To decides nothing. With `[mail] authserv_id`, a DMARC
failure reported by that MTA makes the mail a stranger's (docs/spec/server.md §4.2, §7)."""

import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbm.config import Config, ConfigError
from tests.conftest import GENEROUS_LIMITS, STRESS_FACTOR, Harness
from tests.mailpipe import pipe
from tests.replying import reply_mail

ALICE, BOB = "alice@example.org", "bob@example.org"
ATTACKER = "attacker@evil.example"
TRUSTED = "mx.pbm.example"
DMARC = f"[mail]\nauthserv_id = {TRUSTED}\n"
_numbers = iter(range(10**9))


def raw_mail(subject, headers=(), body="hello", sender=ALICE) -> bytes:
    """A mail from `sender` (None: no From), with extra (name, value) headers on top; written
    as bytes, so that a From the email package would not write can be sent too."""
    lines = [f"{name}: {value}" for name, value in headers]
    if sender is not None:
        lines.append(f"From: {sender}")
    lines += [
        "To: pbm@localhost",
        f"Subject: {subject}",
        f"Message-ID: <origin-{next(_numbers)}@test.example>",
        "Content-Type: text/plain; charset=utf-8",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n" + body + "\r\n").encode()


def auth_results(value: str) -> bytes:
    """An Authentication-Results header line, written raw (the email package would refold)."""
    return b"Authentication-Results: " + value.encode("utf-8", "surrogateescape") + b"\r\n"


def plies(harness, game="knightpanic", number=101) -> int:
    with sqlite3.connect(harness.home / "pbm.db") as conn:
        return conn.execute(
            "SELECT count(*) FROM moves m JOIN boards b ON b.id = m.board_id "
            "WHERE b.game = ? AND b.number = ?",
            (game, number),
        ).fetchone()[0]


def rate_keys(harness, kind="command") -> list[str]:
    with sqlite3.connect(harness.home / "pbm.db") as conn:
        return [
            row[0]
            for row in conn.execute(
                "SELECT key FROM rate_events WHERE kind = ? ORDER BY id", (kind,)
            )
        ]


def proofs(harness) -> set:
    with sqlite3.connect(harness.home / "pbm.db") as conn:
        return set(conn.execute("SELECT userid, address FROM address_proofs"))


def latest_token_mail(harness, address):
    return [m for m in harness.mails(address) if m["Reply-To"] is not None][-1]


def token_address(original) -> str:
    return str(original["Reply-To"])


@pytest.fixture
def board(harness):
    harness.signup("alice", "bob")
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    harness.new_mails()
    return harness


# -- the origin: From, never Reply-To ---------------------------------------------------------


def test_a_leaked_token_with_reply_to_of_its_owner_plays_nothing(board):
    """The issue's measurement: alice's token and `Reply-To: alice`, sent from the attacker."""
    harness = board
    original = latest_token_mail(harness, ALICE)
    raw = b"Reply-To: " + ALICE.encode() + b"\r\n" + reply_mail(original, ATTACKER, "c1-e5")
    outcome = harness.deliver(raw, envelope_recipients=[token_address(original)])
    assert plies(harness) == 0, "the move was not played"
    [(_, answer)] = outcome.result.queued
    assert answer.to == [ATTACKER], "the answer goes to who sent it"
    assert "works only from the addresses of the player" in answer.body
    assert harness.new_mails(ALICE) == []
    # From alice's own address, the same reply plays.
    raw = reply_mail(original, ALICE, "c1-e5")
    assert harness.deliver(raw, envelope_recipients=[token_address(original)]).result.ok
    assert plies(harness) == 1


def test_the_leaked_token_attack_through_the_mail_pipe(project_env, challenged_home):
    home = challenged_home
    harness = Harness.__new__(Harness)
    harness.home, harness.seen = home, set()
    original = latest_token_mail(harness, ALICE)
    raw = b"Reply-To: " + ALICE.encode() + b"\r\n" + reply_mail(original, ATTACKER, "c1-e5")
    env = dict(project_env, ORIGINAL_RECIPIENT=token_address(original))
    run = pipe(env, raw)
    assert run.returncode == 0, run.stderr.decode()
    [answer] = harness.new_mails(ATTACKER)
    assert harness.new_mails(ALICE) == []
    assert "works only from the addresses of the player" in answer.get_content()
    assert plies(harness) == 0


def test_limits_and_confirmation_follow_from_not_reply_to(board):
    harness = board
    raw = raw_mail(
        "knightpanic move 101 alice secret c1-e5",
        headers=[("Reply-To", "someone.else@example.net")],
    )
    result = harness.deliver(raw).result
    assert result.ok
    assert rate_keys(harness)[-1] == ALICE
    assert ("alice", ALICE) in proofs(harness)
    assert ("alice", "someone.else@example.net") not in proofs(harness)
    assert {address for _, mail in result.queued for address in mail.to} == {ALICE, BOB}


FROM_SHAPES = {
    "plain": lambda a: a,
    "named": lambda a: f'"Some One" <{a}>',
    "absent": lambda a: None,
    "two addresses": lambda a: f"{a}, other@example.net",
    "eight bit": lambda a: "jörg@example.org",
    "name only": lambda a: "Just A Name",
}
ADDRESSES = st.sampled_from(
    ["a@example.org", "B@Example.ORG", "c.d@sub.example.net", "alice@example.org", "x@evil.example"]
)


@settings(
    max_examples=40 * STRESS_FACTOR,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    shape=st.sampled_from(sorted(FROM_SHAPES)),
    author=ADDRESSES,
    reply_to=st.none() | ADDRESSES | st.lists(ADDRESSES, min_size=2, max_size=3).map(", ".join),
    envelope=st.none() | ADDRESSES,
    return_path=st.none() | ADDRESSES,
)
def test_generated_senders_the_answer_goes_to_the_origin_only(
    harness, shape, author, reply_to, envelope, return_path
):
    """Hypothesis: whatever From, Reply-To, envelope sender and Return-Path say, the answer
    goes to the origin and only the origin's limit moves."""
    sender = FROM_SHAPES[shape](author)
    headers = [("Reply-To", reply_to)] if reply_to else []
    raw = raw_mail("help games", headers=headers, sender=sender)
    if return_path is not None:
        raw = f"Return-Path: <{return_path}>\r\n".encode() + raw
    from_usable = shape in ("plain", "named")
    fallback = envelope if envelope is not None else return_path
    origin = author if from_usable else fallback
    before = len(rate_keys(harness))
    outcome = harness.deliver(raw, envelope_sender=envelope)
    assert outcome.consumed
    if origin is None:
        assert outcome.result is None, "nobody to answer"
        assert len(rate_keys(harness)) == before
        return
    recipients = [address for _, mail in outcome.result.queued for address in mail.to]
    assert [r.lower() for r in recipients] == [origin.lower()]
    assert rate_keys(harness)[before:] == [origin.lower()]


# -- a DMARC failure makes a stranger's mail ---------------------------------------------------


def test_a_dmarc_failure_runs_nothing_and_gets_one_short_answer_an_hour(board, clock):
    harness = board
    own = rate_keys(harness).count(ALICE)  # her signup and challenge, from her address
    # Room for one more command of hers: the strangers' four would use it up if they counted.
    harness.configure(DMARC + f"[limits]\ncommands_per_hour = {own + 1}\n")
    clock("2026-05-01T10:00:00")
    failed = auth_results(f"{TRUSTED}; dmarc=fail (p=reject) header.from=example.org")
    for command in (
        "knightpanic move 101 alice secret c1-e5",
        "signup mallory secret mallory@evil.example",
        "forgot alice",
        "help games",
    ):
        outcome = harness.deliver(failed + raw_mail(command))
        assert outcome.consumed and not outcome.result.ok
    mails = harness.new_mails()
    assert len(mails) == 1, [m["Subject"] for m in mails]
    [answer] = mails
    assert answer["To"] == ALICE
    text = " ".join(answer.get_content().split())
    assert "failed our mail server's DMARC check for example.org" in text
    assert "nothing in it was done" in text
    assert len(answer.get_content()) < 1000, "short"
    assert plies(harness) == 0
    assert rate_keys(harness).count(ALICE) == own, "only her own commands count on her address"
    assert rate_keys(harness, "stranger_notice") == [ALICE]
    with sqlite3.connect(harness.home / "pbm.db") as conn:
        assert conn.execute("SELECT 1 FROM users WHERE userid = 'mallory'").fetchone() is None
    # Alice's own mail is untouched by what the strangers ran up.
    harness.ok("knightpanic move 101 alice secret c1-e5", sender=ALICE)
    harness.new_mails()
    clock("2026-05-01T11:00:01")
    harness.deliver(failed + raw_mail("help"))
    assert len(harness.new_mails(ALICE)) == 1, "one answer an hour"


def test_a_stranger_cannot_use_a_reply_token_nor_confirm_an_address(board):
    harness = board
    second = "alice.two@example.org"  # registered by alice's own mail, not yet confirmed
    harness.ok(f"add alice secret {second}", sender=ALICE)
    harness.configure(DMARC)
    original = latest_token_mail(harness, ALICE)
    failed = auth_results(f"{TRUSTED}; dmarc=fail header.from=example.org")
    raw = failed + reply_mail(original, second, "c1-e5")
    outcome = harness.deliver(raw, envelope_recipients=[token_address(original)])
    assert not outcome.result.ok and plies(harness) == 0
    assert ("alice", second) not in proofs(harness)
    assert "DMARC" in outcome.result.queued[0][1].body


@pytest.mark.parametrize(
    "headers,stranger",
    [
        ([f"{TRUSTED}; dmarc=pass header.from=example.org"], False),
        ([f"{TRUSTED.upper()}; dmarc=FAIL header.from=EXAMPLE.org"], True),
        ([f"{TRUSTED} 1; spf=fail smtp.mailfrom=example.org; dmarc=fail"], True),
        (["other.example; dmarc=fail header.from=example.org"], False),
        ([f"{TRUSTED}; dmarc=fail header.from=other.example"], False),
        ([f"{TRUSTED}; dmarc=none header.from=example.org"], False),
        # Only the topmost header of the trusted id counts: the MTA adds its own on top.
        (
            [
                f"{TRUSTED}; dmarc=pass header.from=example.org",
                f"{TRUSTED}; dmarc=fail header.from=example.org",
            ],
            False,
        ),
        (
            [
                "other.example; dmarc=pass header.from=example.org",
                f"{TRUSTED}; dmarc=fail header.from=example.org",
                f"{TRUSTED}; dmarc=pass header.from=example.org",
            ],
            True,
        ),
        # One header per milter under the same id: the first with a DMARC result decides.
        (
            [
                f"{TRUSTED}; spf=pass smtp.mailfrom=example.org",
                f"{TRUSTED}; dkim=fail header.d=example.org",
                f"{TRUSTED}; dmarc=fail (p=reject) header.from=example.org",
                f"{TRUSTED}; dmarc=pass header.from=example.org",
            ],
            True,
        ),
        ([f"{TRUSTED}; dmarc=fail (" + "(" * 5000], False),
        ([f"{TRUSTED}; spf=pass x=y" + " x=y" * 500, f"{TRUSTED}; dmarc=fail"], False),
        ([f"{TRUSTED}; dmarc=fail header.from=example.org " + "x=y; " * 500], False),
        # An id of its own: a test id with surrogates cannot cross to pytest-xdist's workers.
        pytest.param(["\udcff\udcfe garbage " + TRUSTED], False, id="undecodable-bytes"),
    ],
)
def test_only_the_trusted_verdict_counts(board, headers, stranger):
    harness = board
    harness.configure(DMARC)
    raw = b"".join(auth_results(value) for value in headers) + raw_mail("help games")
    outcome = harness.deliver(raw)
    assert outcome.consumed
    [(_, answer)] = outcome.result.queued
    assert ("DMARC" in answer.body) == stranger, answer.body


def test_without_authserv_id_no_header_is_read(board):
    harness = board
    raw = auth_results(f"{TRUSTED}; dmarc=fail header.from=example.org") + raw_mail(
        "knightpanic move 101 alice secret c1-e5"
    )
    assert harness.deliver(raw).result.ok and plies(harness) == 1


RESULTS = st.sampled_from(["fail", "pass", "none", "temperror", "permerror", "FAIL"])
IDS = st.sampled_from([TRUSTED, TRUSTED.upper(), "other.example", f"{TRUSTED}.evil", "mx"])
DOMAINS = st.sampled_from(["example.org", "Example.Org", "other.example", None])
CLAUSE = st.tuples(IDS, RESULTS, DOMAINS, st.booleans())


def header_value(clause) -> str:
    authserv_id, result, domain, with_spf = clause
    parts = [authserv_id]
    if with_spf:
        parts.append("spf=pass smtp.mailfrom=example.org")
    parts.append(f"dmarc={result}" + (f" header.from={domain}" if domain else ""))
    return "; ".join(parts)


def expected_stranger(clauses) -> bool:
    """Every generated header has a DMARC result: the first of the trusted id decides."""
    for authserv_id, result, domain, _ in clauses:
        if authserv_id.lower() == TRUSTED:
            return result.lower() == "fail" and (domain or "example.org").lower() == "example.org"
    return False


@settings(
    max_examples=60 * STRESS_FACTOR,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(clauses=st.lists(CLAUSE, max_size=4))
def test_generated_verdicts_only_the_first_of_the_trusted_id_counts(harness, clauses):
    harness.configure(DMARC)
    raw = b"".join(auth_results(header_value(c)) for c in clauses) + raw_mail("help games")
    outcome = harness.deliver(raw)
    assert outcome.consumed
    stranger = any("DMARC" in mail.body for _, mail in outcome.result.queued)
    answered_normally = any(mail.subject == "Help games" for _, mail in outcome.result.queued)
    if expected_stranger(clauses):
        # The first stranger mail of the hour is answered, later ones are not.
        assert not answered_normally
    else:
        assert answered_normally and not stranger


HEADER_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
    max_size=300,
)


@settings(
    max_examples=60 * STRESS_FACTOR,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    values=st.lists(
        st.one_of(
            HEADER_TEXT,
            HEADER_TEXT.map(lambda t: f"{TRUSTED}{t}"),
            HEADER_TEXT.map(lambda t: f"{TRUSTED}; dmarc={t}"),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_generated_garbage_headers_never_crash(harness, values):
    """Hypothesis: broken syntax, several headers: the mail is handled, never an internal
    error, and a header without the trusted id never makes a stranger."""
    harness.configure(DMARC)
    raw = b"".join(auth_results(v) for v in values) + raw_mail("help games")
    outcome = harness.deliver(raw)
    assert outcome.consumed, outcome.cause
    subjects = [mail.subject for _, mail in outcome.result.queued]
    assert "Internal error" not in " ".join(m.body for _, m in outcome.result.queued)
    if not any(TRUSTED in v.lower() for v in values):
        assert subjects == ["Help games"]


def test_a_stranger_through_the_mail_pipe(project_env, challenged_home):
    home = challenged_home
    (home / "pbm.ini").write_text(GENEROUS_LIMITS + f"authserv_id = {TRUSTED}\n")
    raw = auth_results(f"{TRUSTED}; dmarc=fail header.from=example.org") + raw_mail(
        "knightpanic move 101 alice secret c1-e5"
    )
    run = pipe(project_env, raw)
    assert run.returncode == 0, run.stderr.decode()
    harness = Harness.__new__(Harness)
    harness.home, harness.seen = home, set()
    harness.new_mails()
    assert plies(harness) == 0
    [answer] = [m for m in harness.mails(ALICE) if "DMARC" in m.get_content()]
    assert answer["Subject"] == "PBM error"


def test_an_undecodable_header_is_logged_not_lost(project_env, challenged_home):
    """The log line that names a header the parser refused quotes its bytes: the log is
    UTF-8, and a byte it cannot hold must not cost the line (nor a traceback on stderr)."""
    home = challenged_home
    (home / "pbm.ini").write_text(GENEROUS_LIMITS + f"authserv_id = {TRUSTED}\n")
    raw = auth_results("\udcff\udcfe garbage " + TRUSTED) + raw_mail("help games")
    run = pipe(project_env, raw)
    assert run.returncode == 0, run.stderr.decode()
    assert b"Logging error" not in run.stderr
    log = (home / "log" / "pbm.log").read_text(encoding="utf-8")
    assert "Authentication-Results header not understood" in log
    assert "garbage mx.pbm.example" in log


@pytest.mark.parametrize("value", ["mx example", "mx;x", "-mx", "mx.example.org\\"])
def test_a_bad_authserv_id_is_refused_by_the_configuration(tmp_path, value):
    (tmp_path / "pbm.ini").write_text(f"[mail]\nauthserv_id = {value}\n")
    with pytest.raises(ConfigError, match="authserv_id"):
        Config.load(tmp_path)
