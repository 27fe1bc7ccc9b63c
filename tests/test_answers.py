"""Answers bounded by rule (issue 25 item 2, docs/spec/server.md §7.1): one answer per
incoming mail, each address's answers capped, a ceiling on what one mail makes the server
send, and quotes of at most 4 KB."""

import email
import email.policy
import re
from email.message import EmailMessage

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbm.answers import BOARD_MAIL_KINDS, QUOTE_LIMIT_BYTES, capped_quote
from pbm.config import Config, ConfigError
from pbm.maildir import maildir_name
from pbm.status import gather
from tests.conftest import STRESS_FACTOR, body_of
from tests.mailpipe import command_mail, pipe

STRANGER = "victim@third.example"
HELP_TOPICS = ["lox", "tutorial", "games", "commands", "knightpanic", "move", "show", "help"]


def rfc822(sender, subject, body="", reply_to=None, message_id=None):
    message = EmailMessage()
    message["From"] = sender
    if reply_to:
        message["Reply-To"] = reply_to
    message["To"] = "pbm@localhost"
    message["Subject"] = subject
    if message_id:
        message["Message-ID"] = message_id
    message.set_content(body or "\n")
    return message.as_bytes()


def sent(harness, outcome):
    """(direct answers, every mail) the delivery queued, each mail as (Mail, message, bytes)."""
    mails = []
    for row_id, mail in outcome.result.queued:
        path = harness.home / "outbox" / "new" / maildir_name(row_id)
        raw = path.read_bytes()
        mails.append((mail, email.message_from_bytes(raw, policy=email.policy.default), len(raw)))
    return [m for m in mails if m[0].to_sender], mails


def charged(harness, mails):
    """(mails, bytes) by the ceiling's rule: a board mail to confirmed addresses of its
    user counts as a mail without bytes, anything else in full."""
    from pbm.dispatch import open_server

    total_mails = total_bytes = 0
    with open_server(harness.config) as server:
        for mail, _, size in mails:
            total_mails += 1
            light = (
                mail.kind in BOARD_MAIL_KINDS
                and mail.userid is not None
                and all(server.store.limits.address_proven(mail.userid, a) for a in mail.to)
            )
            total_bytes += 0 if light else size
    return total_mails, total_bytes


def two_boards(harness):
    harness.signup("alice", "bob")
    harness.challenge("knightpanic challenge alice bob")
    harness.challenge("knightpanic challenge alice bob")
    harness.new_mails()


# -- one answer per mail ---------------------------------------------------------------


def test_a_subject_naming_one_topic_63_times_gets_one_answer(harness):
    raw = rfc822("mallory@evil.example", "help" + " lox" * 63, reply_to=STRANGER)
    answers, mails = sent(harness, harness.deliver(raw))
    assert len(mails) == 1 and len(answers) == 1
    assert answers[0][1]["Subject"] == "Help lox"
    assert body_of(answers[0][1]).count("Lox (Luis Bolanos Mures") == 1


def test_a_subject_naming_many_topics_gets_them_all_in_one_answer(harness):
    raw = rfc822("alice@example.org", "help lox tutorial games nosuchtopic")
    answers, mails = sent(harness, harness.deliver(raw))
    assert len(mails) == 1
    message = answers[0][1]
    text = body_of(message)
    assert message["Subject"] == "Answers to: help lox tutorial games nosuchtopic"
    headings = re.findall(r"^--- (.*) ---$", text, re.M)
    assert headings == ["Help lox", "Help tutorial", "Help games", "PBM error"]
    assert 'No help available for "nosuchtopic"' in text


def test_a_multiple_gets_one_answer_with_a_section_per_command(harness):
    two_boards(harness)
    body = "\n".join(
        [
            "help lox",
            "knightpanic move 101 alice secret c1-e5",
            "knightpanic show 101 102",
            "knightpanic move 102 alice wrongpw c1-e5",
            "frobnicate now please",
        ]
    )
    raw = rfc822("alice@example.org", "multiple", body)
    outcome = harness.deliver(raw)
    answers, mails = sent(harness, outcome)
    assert len(answers) == 1
    answer = answers[0][1]
    assert answer["Subject"] == "Answers to your 5 commands"
    text = body_of(answer)
    assert re.findall(r"^=== (.*) ===$", text, re.M) == [
        "1. help lox",
        "3. knightpanic show 101 102",
        "4. knightpanic move 102 alice ******** c1-e5",
        "5. frobnicate now ...",
    ]
    assert "wrongpw" not in answer.as_string()
    assert "Invalid password entered" in text and 'Unknown command "frobnicate"' in text
    # The move's board mails go to both players as board mails, not inside the answer.
    board_mails = [m for m, _, _ in mails if not m.to_sender]
    assert sorted(m.userid for m in board_mails) == ["alice", "bob"]
    assert all(m.kind == "board" for m in board_mails)


def test_a_multiple_of_moves_alone_sends_no_answer(harness):
    two_boards(harness)
    body = "knightpanic move 101 alice secret c1-e5\nknightpanic move 102 alice secret c1-e5"
    answers, mails = sent(harness, harness.deliver(rfc822("alice@example.org", "multiple", body)))
    assert answers == [] and len(mails) == 4


def test_a_multiple_with_one_answer_sends_it_as_it_is(harness):
    two_boards(harness)
    body = "knightpanic move 101 alice secret c1-e5\nknightpanic move 101 alice secret a1-c5"
    answers, _ = sent(harness, harness.deliver(rfc822("alice@example.org", "multiple", body)))
    [(mail, message, _)] = answers
    assert message["Subject"] == "KnightPanic Board 101: alice vs bob"
    assert "Subject: knightpanic move 101 alice ******** a1-c5" in body_of(message)


def test_an_answer_about_several_boards_links_each_board(harness):
    two_boards(harness)
    body = "knightpanic queue 101 bob secret g7-e3\nknightpanic queue 102 bob secret g7-e3"
    answers, _ = sent(harness, harness.deliver(rfc822("bob@example.org", "multiple", body)))
    [(_, answer, _)] = answers
    assert answer["Reply-To"] is None
    links = re.findall(r"^mailto:(\S+)$", body_of(answer), re.M)
    assert len(links) == 2 and len(set(links)) == 2
    # Each link plays on its own board, as a board mail's Reply-To would.
    harness.new_mails()
    reply = rfc822("bob@example.org", "Re: answers", "chat hello from the answer\n")
    harness.deliver(reply, envelope_recipients=[links[1]])
    [chat] = harness.new_mails("alice@example.org")
    assert chat["Subject"] == "KnightPanic Board 102: alice vs bob"
    assert "hello from the answer" in body_of(chat)


def test_an_answer_about_one_board_keeps_its_reply_to(harness):
    two_boards(harness)
    body = "knightpanic queue 101 bob secret g7-e3\nknightpanic queue 101 bob secret g7-e5"
    answers, _ = sent(harness, harness.deliver(rfc822("bob@example.org", "multiple", body)))
    [(_, answer, _)] = answers
    assert answer["Reply-To"].startswith("pbm+")
    assert "mailto:" not in body_of(answer)
    assert answer["References"] == "<knightpanic.101.bob@localhost>"


def test_the_token_of_an_answer_about_one_board_knows_the_answers_message_id(harness):
    """The answer carries the latest section's token, and the token was written with that
    section's Message-ID: the answer goes out under it, so a reply that lost the Reply-To
    and names the answer in In-Reply-To finds the board (docs/spec/server.md §11.3)."""
    from pbm.dispatch import open_server

    two_boards(harness)
    body = "knightpanic queue 101 bob secret g7-e3\nknightpanic queue 101 bob secret g7-e5"
    answers, _ = sent(harness, harness.deliver(rfc822("bob@example.org", "multiple", body)))
    [(_, answer, _)] = answers
    with open_server(harness.config) as server:
        token = server.store.tokens.by_message_id([answer["Message-ID"]])
    assert (token.game, token.number, token.userid) == ("knightpanic", 101, "bob")
    assert answer["Reply-To"].startswith(f"pbm+{token.id}")


def test_an_answer_keeps_the_pictures_of_its_sections(harness):
    harness.configure("[mail]\nhtml = on\n")
    two_boards(harness)
    raw = rfc822("alice@example.org", "knightpanic showas alice secret 101 102")
    [(_, answer, _)], _ = sent(harness, harness.deliver(raw))
    html = answer.get_body(("html",)).get_content()
    images = [p for p in answer.walk() if p.get_content_type() == "image/png"]
    assert len(images) == 2
    for image in images:
        assert f"cid:{image['Content-ID'][1:-1]}" in html


def test_a_mail_delivered_again_runs_and_sends_nothing(harness):
    two_boards(harness)
    raw = rfc822(
        "alice@example.org",
        "multiple",
        "help lox\nknightpanic move 101 alice secret c1-e5",
        message_id="<once@client.example>",
    )
    first = harness.deliver(raw)
    assert len(first.result.queued) == 3
    again = harness.deliver(raw)
    assert again.result.duplicate and again.result.queued == []
    assert len(harness.new_mails()) == 3


# -- the ceiling -----------------------------------------------------------------------


def test_past_the_ceiling_the_rest_of_a_multiple_is_not_run_and_named(harness):
    harness.configure("[limits]\nbytes_per_incoming_mail = 20000\n")
    two_boards(harness)
    lines = ["knightpanic showas alice secret 101 102"] * 10 + [
        "knightpanic move 101 alice secret c1-e5"
    ]
    outcome = harness.deliver(rfc822("alice@example.org", "multiple", "\n".join(lines)))
    answers, mails = sent(harness, outcome)
    assert not outcome.result.ok and len(answers) == 1
    text = body_of(answers[0][1])
    run = re.findall(r"^=== (\d+)\. ", text, re.M)
    not_run = re.findall(r"^  (\d+)\. (.*)$", text, re.M)
    assert run and [int(n) for n in run] == list(range(1, len(run) + 1))
    assert [int(n) for n, _ in not_run] == list(range(len(run) + 1, 12))
    assert not_run[-1][1] == "knightpanic move 101 ******** ******** c1-e5"
    assert charged(harness, mails)[1] <= 20000
    # The move was not run: alice is still on move with no ply made.
    shown = harness.ok("knightpanic show 101", sender=None).printed[0].body
    assert "Please start the game alice" in shown


def test_a_normal_multiple_of_moves_is_within_the_default_ceiling(harness):
    harness.configure(
        "[limits]\nmails_per_incoming_mail = 100\nbytes_per_incoming_mail = 1048576\n"
    )
    harness.signup("alice", "bob")
    for _ in range(40):
        harness.challenge("knightpanic challenge alice bob")
    body = "\n".join(f"knightpanic move {101 + n} alice secret c1-e5" for n in range(40))
    outcome = harness.deliver(rfc822("alice@example.org", "multiple", body))
    assert outcome.result.ok
    answers, mails = sent(harness, outcome)
    assert answers == [] and len(mails) == 80


def test_a_command_undone_at_the_ceiling_still_counts_its_wrong_password(harness):
    harness.configure("[limits]\nbytes_per_incoming_mail = 3000\nfailed_logins_per_hour = 1\n")
    two_boards(harness)
    for guess in range(3):
        body = f"help tutorial\nknightpanic move 101 alice guess{guess} c1-e5"
        outcome = harness.deliver(rfc822("mallory@evil.example", "multiple", body))
        assert "2. knightpanic move 101 ******** ******** c1-e5" in body_of(
            sent(harness, outcome)[0][0][1]
        )
    message = harness.refused("knightpanic move 101 alice secret c1-e5", "mallory@evil.example")
    assert "Too many failed password attempts for alice" in message


def test_the_lines_beyond_the_line_limit_are_named_in_the_one_answer(harness):
    harness.configure("[limits]\nmax_multiple_lines = 2\n")
    result = harness.run("multiple", sender="m@example.org", body="help\nhelp games\nhelp tutorial")
    assert not result.ok
    [(_, answer)] = result.queued
    assert "Only the first 2 commands were processed: lines 3 to 3" in answer.body


def test_the_operator_sees_the_lines_not_run_printed(harness):
    harness.configure("[limits]\nmax_multiple_lines = 1\n")
    result = harness.run("multiple", sender=None, body="help games\nhelp tutorial")
    assert [m.subject for m in result.printed] == ["Help games", "Answers to your 2 commands"]
    assert "lines 2 to 2" in result.printed[-1].body and result.queued == []


# -- answer caps -----------------------------------------------------------------------


def test_answers_to_an_address_are_capped_by_the_hour_and_the_day(harness, clock):
    harness.configure(
        "[limits]\nanswers_per_address_per_hour = 2\nanswers_per_address_per_day = 3\n"
        "answers_per_confirmed_address_per_hour = 4\nanswers_per_confirmed_address_per_day = 5\n"
    )
    clock("2026-05-01T10:00:00")

    def answered(sender):
        return len(harness.run("list", sender=sender).queued)

    assert [answered("new@example.org") for _ in range(3)] == [1, 1, 0]
    clock("2026-05-01T11:01:00")
    assert [answered("new@example.org") for _ in range(2)] == [1, 0]
    # The command still runs past the cap: the signup is made, its answer withheld.
    result = harness.run("signup newbie secret other@example.org", sender="new@example.org")
    assert result.ok
    assert [m.to for _, m in result.queued] == [["other@example.org"]]
    assert gather(harness.config)["answers"]["withheld_24h"] == 3
    # An address confirmed for an account has the higher caps.
    harness.signup("alice")
    assert [answered("alice@example.org") for _ in range(5)] == [1, 1, 1, 1, 0]
    clock("2026-05-02T11:02:00")
    assert answered("new@example.org") == 1


def test_caps_out_of_order_are_a_bad_pbm_ini(harness):
    harness.configure(
        "[limits]\nanswers_per_address_per_hour = 40\nanswers_per_address_per_day = 30\n"
    )
    with pytest.raises(ConfigError, match="answers_per_address_per_hour = 40 is more than"):
        Config.load(harness.home)
    harness.configure(
        "[limits]\nanswers_per_address_per_day = 500\nanswers_per_confirmed_address_per_day = 300\n"
    )
    with pytest.raises(ConfigError, match="answers_per_address_per_day = 500 is more than"):
        Config.load(harness.home)
    harness.configure("[limits]\nbytes_per_incoming_mail = 0\n")
    with pytest.raises(ConfigError, match="bytes_per_incoming_mail = '0' must be at least 1"):
        Config.load(harness.home)


# -- quotes ----------------------------------------------------------------------------


def test_an_810_kb_spam_body_is_quoted_4_kb_through_the_pipe(challenged_home, project_env):
    spam = "BUY CHEAP PILLS " * 50625
    raw = rfc822("spammer@evil.example", "Special offer just for you", spam)
    result = pipe(project_env, raw)
    assert result.returncode == 0, result.stderr.decode()
    [path] = [
        p
        for p in (challenged_home / "outbox" / "new").iterdir()
        if b"spammer@evil.example" in p.read_bytes()
    ]
    assert path.stat().st_size < 8000
    text = body_of(email.message_from_bytes(path.read_bytes(), policy=email.policy.default))
    quote = text[text.index("Original message follows:") :]
    assert len(quote.encode()) <= QUOTE_LIMIT_BYTES + 500  # + "> ", wrapping, the last line
    assert quote.rstrip().endswith("[rest of your mail not quoted]")


def test_a_short_mail_is_quoted_whole(harness):
    message = harness.refused("frobnicate", sender="x@example.org", body="just a few words")
    assert "just a few words" in message and "not quoted" not in message


@settings(max_examples=60 * STRESS_FACTOR, deadline=None)
@given(
    st.lists(
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=3000),
        max_size=25,
    )
)
def test_a_quote_never_exceeds_its_cap(lines):
    kept, cut = capped_quote(lines)
    size = sum(len(line.encode("utf-8")) for line in kept)
    assert size <= QUOTE_LIMIT_BYTES
    assert cut == (sum(len(line.encode("utf-8")) for line in lines) > QUOTE_LIMIT_BYTES)
    assert "\n".join(lines).startswith("\n".join(kept))


@settings(
    max_examples=8 * STRESS_FACTOR,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.binary(min_size=1, max_size=300_000),
    st.sampled_from(["frobnicate", "", "knightpanic move 101 alice secret c1-e5 extra words"]),
)
def test_a_huge_or_binary_body_is_never_quoted_past_the_cap(harness, body, subject):
    message = EmailMessage()
    message["From"] = "x@example.org"
    message["Subject"] = subject
    message.set_content(body, maintype="application", subtype="octet-stream")
    message.add_alternative(body.decode("latin-1"), subtype="plain")
    outcome = harness.deliver(message.as_bytes())
    for mail in [m for _, m in outcome.result.queued if m.kind == "error"]:
        quoted = [line[2:] for line in mail.body.splitlines() if line.startswith("> ")]
        assert sum(len(line.encode()) for line in quoted) <= QUOTE_LIMIT_BYTES


# -- generated mails -------------------------------------------------------------------


def command_lines():
    boards = st.sampled_from(["101", "102", "103", "101 102", "101 101 102"])
    password = st.sampled_from(["secret", "wrong1"])
    return st.one_of(
        st.lists(st.sampled_from(HELP_TOPICS), min_size=1, max_size=6).map(
            lambda topics: "help " + " ".join(topics)
        ),
        boards.map(lambda b: f"knightpanic show {b}"),
        st.tuples(password, boards).map(lambda t: f"knightpanic showas alice {t[0]} {t[1]}"),
        st.tuples(password, st.sampled_from(["c1-e5", "a1-c5", "zz"])).map(
            lambda t: f"knightpanic move 101 alice {t[0]} {t[1]}"
        ),
        st.just("list"),
        st.just("knightpanic games"),
        st.text("abcdefgh ", min_size=1, max_size=20),
    )


@settings(
    max_examples=25 * STRESS_FACTOR,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    lines=st.lists(command_lines(), min_size=1, max_size=20),
    ceiling_mails=st.integers(2, 30),
    ceiling_bytes=st.integers(10000, 80000),
    sender=st.sampled_from(["alice@example.org", STRANGER]),
)
def test_a_generated_multiple_gets_one_answer_within_the_ceiling(
    harness, lines, ceiling_mails, ceiling_bytes, sender
):
    harness.configure(
        f"[limits]\nmails_per_incoming_mail = {ceiling_mails}\n"
        f"bytes_per_incoming_mail = {ceiling_bytes}\n"
    )
    if not harness.mails():
        harness.signup("alice", "bob")
        for _ in range(3):
            harness.challenge("knightpanic challenge alice bob")
    body = "\n".join(lines)
    outcome = harness.deliver(rfc822("mallory@evil.example", "multiple", body, reply_to=sender))
    answers, mails = sent(harness, outcome)
    assert len(answers) <= 1
    commands = [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]
    text = body_of(answers[0][1]) if answers else ""
    not_run = [int(n) for n in re.findall(r"^  (\d+)\. ", text, re.M)]
    if not_run:
        # Every command from the first not run on is named, and nothing past it ran.
        assert not_run == list(range(not_run[0], len(commands) + 1))
        assert not_run[0] > 1
        assert all(int(n) < not_run[0] for n in re.findall(r"^=== (\d+)\. ", text, re.M))
    ran = not_run[0] - 1 if not_run else len(commands)
    if ran > 1:
        # The first command always runs, whatever it sends; with more, the total is capped.
        total_mails, total_bytes = charged(harness, mails)
        assert total_mails <= ceiling_mails and total_bytes <= ceiling_bytes


@settings(
    max_examples=30 * STRESS_FACTOR,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(st.sampled_from(HELP_TOPICS + ["nosuch", "LOX", "Tutorial"]), max_size=63))
def test_a_generated_help_subject_gets_one_answer(harness, topics):
    raw = rfc822("mallory@evil.example", " ".join(["help"] + topics), reply_to=STRANGER)
    answers, mails = sent(harness, harness.deliver(raw))
    assert len(mails) == len(answers) == 1
    distinct = list(dict.fromkeys(t.lower() for t in topics)) or ["commands"]
    text = body_of(answers[0][1])
    if len(distinct) > 1:
        shown = [h.removeprefix("Help ") for h in re.findall(r"^--- (.*) ---$", text, re.M)]
        assert [t for t in shown if t != "PBM error"] == [
            t for t in distinct[: len(shown)] if t != "nosuch"
        ]


def test_a_multiple_of_showas_through_the_pipe_sends_one_answer(challenged_home, project_env):
    with open(challenged_home / "pbm.ini", "a") as ini:
        ini.write("[limits]\nbytes_per_incoming_mail = 262144\n")
    lines = ["knightpanic showas alice secret" + " 101" * 20] * 50
    raw = command_mail(STRANGER, "multiple", "\n".join(lines))
    before = set((challenged_home / "outbox" / "new").iterdir())
    result = pipe(project_env, raw)
    assert result.returncode == 0, result.stderr.decode()
    new = set((challenged_home / "outbox" / "new").iterdir()) - before
    assert len(new) == 1
    [path] = new
    assert path.stat().st_size <= 262144
    text = body_of(email.message_from_bytes(path.read_bytes(), policy=email.policy.default))
    assert "50. knightpanic showas ******** ********" in text
