"""Issue 13.1: nothing from a mail reaches an outgoing header unchecked (headers.py)."""

import email
import email.policy
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbm.config import Config
from pbm.headers import HeaderError, checked_address, checked_header, has_control, message_id_token
from pbm.mailin import read_message
from pbm.message import Mail, compose
from tests.conftest import STRESS_FACTOR
from tests.mailpipe import command_mail, pipe

INJECTING_ID = "<=?utf-8?q?a=0D=0ABcc=3A_x=40evil.example?=@x>"
PLAIN_ADDRESS = re.compile(r"[!-~]+@[A-Za-z0-9.-]+")
EXAMPLES = 100 * STRESS_FACTOR
OUR_HEADERS = [
    "From",
    "To",
    "Subject",
    "Date",
    "Message-ID",
    "Auto-Submitted",
    "X-Auto-Response-Suppress",
    "Content-Type",
    "Content-Transfer-Encoding",
    "MIME-Version",
]


def outbox_messages(home):
    new = home / "outbox" / "new"
    return [p.read_bytes() for p in sorted(new.iterdir())] if new.exists() else []


def raw_mail(sender, subject, message_id, extra=b""):
    return (
        b"From: "
        + sender
        + b"\r\nTo: pbm@localhost\r\nSubject: "
        + subject.encode()
        + b"\r\nMessage-ID: "
        + message_id
        + b"\r\n"
        + extra
        + b"\r\nbody\r\n"
    )


def test_an_encoded_word_message_id_is_not_echoed_into_the_reply(project_env, tmp_path):
    from pbm.cli import migrate_home

    migrate_home(Config.load(tmp_path / "home"))
    raw = raw_mail(b"alice@example.org", "help games", INJECTING_ID.encode())
    assert pipe(project_env, raw).returncode == 0
    [reply] = outbox_messages(tmp_path / "home")
    head = reply.split(b"\n\n", 1)[0]
    assert b"Bcc" not in reply and b"evil.example" not in reply
    assert b"In-Reply-To" not in head and b"References" not in head
    parsed = email.message_from_bytes(reply, policy=email.policy.default)
    assert parsed["Subject"] == "Help games" and parsed["To"] == "alice@example.org"


def test_a_clean_message_id_is_answered_in_reply_to(project_env, tmp_path):
    from pbm.cli import migrate_home

    migrate_home(Config.load(tmp_path / "home"))
    raw = command_mail("alice@example.org", "help games", message_id="<abc.1@mua.example>")
    assert pipe(project_env, raw).returncode == 0
    [reply] = outbox_messages(tmp_path / "home")
    parsed = email.message_from_bytes(reply, policy=email.policy.default)
    assert parsed["In-Reply-To"] == "<abc.1@mua.example>"
    assert parsed["References"] == "<abc.1@mua.example>"


def test_an_8bit_from_gets_no_encoded_word_reply_the_envelope_sender_does(project_env, tmp_path):
    # An unusable From leaves the envelope sender as the origin; Reply-To decides nothing
    # (docs/spec/server.md §4.2, issue 25).
    from pbm.cli import migrate_home

    home = tmp_path / "home"
    migrate_home(Config.load(home))
    eight_bit = "jörg@example.org".encode()
    assert pipe(project_env, raw_mail(eight_bit, "help games", b"<m1@x>")).returncode == 0
    assert outbox_messages(home) == [], "an address we cannot write is not answered"
    raw = raw_mail(eight_bit, "help games", b"<m2@x>", b"Reply-To: joerg@example.org\r\n")
    assert pipe(project_env, raw).returncode == 0
    assert outbox_messages(home) == [], "nor is Reply-To ever taken instead"
    raw = raw_mail(eight_bit, "help games", b"<m3@x>", b"Reply-To: joerg@example.org\r\n")
    assert pipe(project_env, raw, sender="joerg.envelope@example.org").returncode == 0
    [reply] = outbox_messages(home)
    assert b"=?" not in reply.split(b"\n\n", 1)[0]
    message = email.message_from_bytes(reply, policy=email.policy.default)
    assert message["To"] == "joerg.envelope@example.org"


@pytest.mark.parametrize(
    "address",
    [
        "=?utf-8?q?a=0D=0ABcc=3A_x=40evil.example?=@example.org",
        "=?utf-8?q?x?=@example.org",
        "jörg@example.org",
        "Alice <alice@example.org>",
        "a@b.org,c@d.org",
    ],
)
def test_an_unwritable_address_in_a_command_gets_a_clear_error(harness, address):
    result = harness.run("multiple", body=f"signup mallory secret {address}\nhelp games")
    [(_, answer)] = result.queued
    sections = re.findall(r"^--- (.*) ---$", answer.body, re.M)
    assert sections == ["PBM error", "Help games"], "no internal error, the next line runs"
    error = answer.body.split("--- PBM error ---")[1].split("--- Help games ---")[0]
    assert "Invalid address" in error and "alice@example.org" in error
    assert "Internal" not in error
    assert "Invalid userid entered" in harness.refused("add mallory secret m@example.org")


def test_compose_cannot_be_bypassed_by_extra_headers():
    config = Config.load("/nonexistent-pbm-home")
    mail = Mail(
        "reply", "s", "b", ["a@example.org"], headers={"X-Board": "1\r\nBcc: e@evil.example"}
    )
    message = _reparsed(compose(config, mail))
    assert message["Bcc"] is None and message["X-Board"] == "1 Bcc: e@evil.example"
    with pytest.raises(HeaderError):
        compose(config, Mail("reply", "s", "b", ["a@example.org\r\nBcc: e@evil.example"]))
    with pytest.raises(HeaderError):
        compose(config, Mail("reply", "s", "b", ["a@example.org"], headers={"Bcc:x": "y"}))


# -- generated variants ----------------------------------------------------------------

hostile_text = st.lists(
    st.one_of(
        st.sampled_from(
            [
                "\r",
                "\n",
                "\r\n",
                "\x00",
                "\x85",
                "\u2028",
                "=?",
                "?=",
                "<",
                ">",
                " ",
                "Bcc: x@evil.example",
                "=?utf-8?q?",
                "=0D=0A",
                "=?utf-8?b?DQpCY2M6IHg=?=",
                "ü",
                "@",
            ]
        ),
        st.characters(),
    ),
    max_size=30,
).map("".join)


def _encoded(text: str) -> str:
    import base64

    return "=?utf-8?b?" + base64.b64encode(text.encode("utf-8", "surrogatepass")).decode() + "?="


def _reparsed(message):
    return email.message_from_bytes(message.as_bytes(), policy=email.policy.default)


@settings(max_examples=EXAMPLES, deadline=None)
@given(subject=hostile_text, encode=st.booleans())
def test_generated_subjects_never_carry_control_characters(subject, encode):
    config = Config.load("/nonexistent-pbm-home")
    value = _encoded(subject) if encode else subject
    message = _reparsed(compose(config, Mail("reply", value, "b", ["a@example.org"])))
    assert sorted(message.keys()) == sorted(OUR_HEADERS)
    for name, header in message.items():
        assert not has_control(str(header)), (name, str(header))
    assert message["To"] == "a@example.org"


@settings(max_examples=EXAMPLES, deadline=None)
@given(token=hostile_text, encode=st.booleans())
def test_generated_message_ids_are_clean_tokens_or_dropped(token, encode):
    config = Config.load("/nonexistent-pbm-home")
    value = "<" + (_encoded(token) if encode else token) + "@x.example>"
    raw = raw_mail(b"alice@example.org", "help games", value.encode("utf-8", "surrogatepass"))
    request, _ = read_message(config, raw, len(raw), "alice@example.org")
    if request.message_id is not None:
        assert message_id_token(request.message_id) == request.message_id
        assert re.fullmatch(r"<[!-;=?-~]+>", request.message_id) and "=?" not in request.message_id
    message = _reparsed(
        compose(config, Mail("reply", "s", "b", ["a@example.org"], reply=True), request.message_id)
    )
    for name, header in message.items():
        assert not has_control(str(header))
        assert name in OUR_HEADERS + ["In-Reply-To", "References"]
    if message["In-Reply-To"] is not None:
        assert str(message["In-Reply-To"]) == request.message_id


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    local=hostile_text, domain=st.sampled_from(["example.org", "ex-ample.co.uk", "bad domain", "x"])
)
def test_generated_addresses_are_plain_or_refused(local, domain):
    address = f"{local}@{domain}"
    for candidate in (address, _encoded(local) + "@" + domain):
        try:
            checked = checked_address(candidate)
        except HeaderError as error:
            assert str(error).startswith("Invalid address")
            continue
        assert checked.isascii() and PLAIN_ADDRESS.fullmatch(checked) and "=?" not in checked
        config = Config.load("/nonexistent-pbm-home")
        message = _reparsed(compose(config, Mail("reply", "s", "b", [checked])))
        assert message["To"].addresses[0].addr_spec == checked
        assert len(message["To"].addresses) == 1


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    name=st.sampled_from(["Subject", "X-Pbm-Board", "In-Reply-To", "References", "To"]),
    value=hostile_text,
)
def test_checked_header_is_a_fixed_point(name, value):
    try:
        checked = checked_header(name, value)
    except HeaderError:
        assert name == "To"
        return
    if checked is None:
        assert name in ("In-Reply-To", "References")
        return
    assert not has_control(checked) and "=?" not in checked
    assert checked_header(name, checked) == checked
