"""Issue 20.2: compose serialises the checked headers itself instead of handing them to the
email package to parse again. What a reader parses must be what the email package made of
the same mail before (the reference below is the former compose, kept here as the oracle):
every header and the body, for plain, 8-bit, long and hostile values. Where the email
package's own folding changed a value (whitespace around an unbreakable word or an 8-bit
run, spaces inside a long encoded name), ours reads back the checked value itself."""

import email
import email.policy
from dataclasses import replace
from datetime import UTC, datetime
from email.message import EmailMessage

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pbm.message as outgoing
from pbm.config import Config
from pbm.headers import HeaderError, checked_header, has_control, is_control
from pbm.htmlmail import HtmlPart, Picture
from pbm.message import Mail, compose, wrap_text
from tests.conftest import STRESS_FACTOR

EXAMPLES = 200 * STRESS_FACTOR
MOMENT = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
MESSAGE_ID = "<179538988247.5783.324925402633954023@localhost>"


@pytest.fixture(autouse=True)
def fixed_date_and_id(monkeypatch):
    monkeypatch.setattr(outgoing, "now", lambda: MOMENT)
    monkeypatch.setattr(outgoing, "new_message_id", lambda domain: MESSAGE_ID)


def reference_compose(config, mail, in_reply_to=None):
    """The former compose (b11c3e1): every checked value set on an EmailMessage."""
    headers = {
        "From": (config.get("server.name"), config.get("server.address")),
        "To": list(mail.to),
        "Subject": mail.subject,
        "Date": outgoing.format_datetime(outgoing.now()),
        "Message-ID": outgoing.new_message_id(config.server_domain),
        "Auto-Submitted": "auto-replied" if mail.reply else "auto-generated",
        "X-Auto-Response-Suppress": "All",
    }
    headers.update(mail.headers)
    if mail.reply and in_reply_to:
        headers["In-Reply-To"] = in_reply_to
        headers["References"] = " ".join(
            filter(None, (mail.headers.get("References"), in_reply_to))
        )
    message = EmailMessage()
    for name, value in headers.items():
        checked = checked_header(name, value)
        if checked is not None:
            message[name] = checked
    for name, value in message.items():
        if has_control(str(value)):
            raise HeaderError(f"{name} would carry a control character")
    body = wrap_text(mail.body) if mail.wrap else mail.body
    message.set_content(body.rstrip("\n") + "\n", charset="utf-8")
    return message


def parsed(raw: bytes):
    return email.message_from_bytes(raw, policy=email.policy.default)


def assert_same_mail(config, mail, in_reply_to=None):
    try:
        expected = reference_compose(config, mail, in_reply_to).as_bytes()
    except HeaderError as error:
        with pytest.raises(HeaderError) as refused:
            compose(config, mail, in_reply_to)
        assert str(refused.value) == str(error)
        return None
    message = compose(config, mail, in_reply_to)
    raw = message.as_bytes()
    ours, theirs = parsed(raw), parsed(expected)
    assert ours.keys() == theirs.keys()
    for name, checked in message.items():
        if name.lower() in outgoing.STRUCTURED:
            assert str(ours[name]) == str(theirs[name]), name
        else:
            # Text reads back exactly as checked; the email package's folding sometimes
            # moved, added or dropped whitespace around a long word or an 8-bit run.
            assert str(ours[name]) == checked, name
            assert "".join(str(theirs[name]).split()) == "".join(checked.split()), name
    assert ours.get_content() == theirs.get_content()
    assert ours.get_content_type() == "text/plain" and ours.get_content_charset() == "utf-8"
    assert not ours.defects and not any(value.defects for value in ours.values())
    head = raw.split(b"\n\n", 1)[0]
    assert head.isascii()
    for line in head.split(b"\n"):
        assert len(line) <= 998
        if len(line) > 78:  # only a word that has no place to fold
            assert b" " not in line.strip()[line.index(b":") + 2 :], line
    return raw


def config_named(tmp_path, name="PBeM Server"):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "pbm.ini").write_text(f"[server]\nname = {name}\n")
    return Config.load(home)


EXAMPLE_MAILS = [
    Mail("reply", "plain", "hello", ["a@example.org"]),
    Mail("board", "Lox board 101: alice vs bob", "board\n" * 40, ["a@example.org", "b@x.org"]),
    Mail("reply", "Grüße aus Köln — über Straßen", "héllo wörld\n", ["a@example.org"]),
    Mail("reply", "a very long subject " * 12, "x", ["a@example.org"], reply=True),
    Mail("reply", "Ünïcödé " * 30, "x", ["a@example.org"]),
    Mail("reply", "x" * 300, "x", ["a@example.org"]),
    Mail("reply", "日本語の件名 " * 8, "本文\n" * 3, ["a@example.org"]),
    Mail("reply", "s", "é" * 50 + "\n" + "a" * 70, ["a@example.org"]),  # 8-bit line > 78 bytes
    Mail("export", "export", '{"a": "' + "b" * 300 + '"}', ["a@example.org"], wrap=False),
    Mail("export", "export", "é" * 300, ["a@example.org"], wrap=False),
    Mail("export", "export", ("é" * 100 + "\n") * 20, ["a@example.org"], wrap=False),
    Mail("export", "export", ("x" * 100 + "\n") * 20, ["a@example.org"], wrap=False),
    Mail("reply", "", "", ["a@example.org"]),
    Mail("reply", "From the start\n", "From here\n.\n..\n", ["a@example.org"]),
    Mail("reply", "s", "a\r\nb\rc\n", ["a@example.org"]),
    Mail(
        "board",
        "s",
        "b",
        ["a@example.org"],
        reply=True,
        headers={
            "References": "<lox.101.alice@localhost>",
            "Reply-To": "pbm+abcdef0123456789@localhost",
            "X-Pbm-Board": "lox 101 " + "ü" * 40,
        },
    ),
    Mail("reply", "=?utf-8?q?=0D=0ABcc:_x@evil?=", "b", ["a@example.org"]),
    Mail("reply", "tab\there\r\nBcc: x@evil.example\u2028and\x85more", "b", ["a@example.org"]),
    Mail("reply", "surrogate \udc80 here", "b", ["a@example.org"]),
    Mail("reply", "s", "b", ["a@example.org\r\nBcc: e@evil.example"]),
    Mail("reply", "s", "b", ["a@example.org"], headers={"Bcc:x": "y"}),
    Mail("reply", "s", "b", ["jörg@example.org"]),
    Mail("reply", "s", "b", []),
]


@pytest.mark.parametrize("mail", EXAMPLE_MAILS, ids=range(len(EXAMPLE_MAILS)))
@pytest.mark.parametrize("in_reply_to", [None, "<cmd.1@example.org>", "<a> junk <b@c>"])
def test_compose_writes_what_the_email_package_wrote(tmp_path, mail, in_reply_to):
    assert_same_mail(config_named(tmp_path), mail, in_reply_to)


@pytest.mark.parametrize(
    "name",
    [
        "PBeM Server",
        "Serveur de parties à distance",
        'Server, "the" (best) [one] at \\home',
        "Ŝerver " * 40,
        "x" * 120,
        "=?utf-8?b?QQ==?=",
    ],
)
def test_the_server_name_in_from_reads_back_the_same(tmp_path, name):
    config = config_named(tmp_path, name)
    if len(name) < 100:
        assert_same_mail(config, EXAMPLE_MAILS[0])
    # A long 8-bit name stays one encoded word, as formataddr writes it: the email package
    # refolded it into pieces that read back with spaces inside words.
    [address] = parsed(compose(config, EXAMPLE_MAILS[0]).as_bytes())["From"].addresses
    assert address.addr_spec == "pbm@localhost"
    assert address.display_name == checked_header("Comments", name)


text = st.lists(
    st.one_of(
        st.characters(blacklist_categories=("Cs",)),
        st.sampled_from(["\r\n", "\n", " ", "=?", "?=", "é", "—", "From ", ".", "x" * 70]),
    ),
    max_size=120,
).map("".join)


@settings(max_examples=EXAMPLES, deadline=None)
@given(subject=text, body=text, extra=text, wrap=st.booleans(), reply=st.booleans())
def test_generated_mails_read_back_as_before(tmp_path_factory, subject, body, extra, wrap, reply):
    config = Config.load(tmp_path_factory.mktemp("home"))
    mail = Mail(
        "reply",
        subject,
        body,
        ["a@example.org"],
        reply=reply,
        wrap=wrap,
        headers={"X-Pbm-Note": extra},
    )
    assert_same_mail(config, mail, "<cmd.1@example.org>")


short_words = st.lists(
    st.sampled_from(["a", "Lox", "Board", "101:", "<x@y>", "é", "", "x" * 30, "x" * 67]),
    max_size=12,
).map(" ".join)


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    name=st.sampled_from(["Subject", "To", "X-Pbm-Note", "List-Id", "A-Much-Longer-Header-Name"]),
    value=st.one_of(text, short_words),
)
def test_a_header_that_fits_one_line_is_written_as_the_general_folding_writes_it(name, value):
    """fold's shortcut for a short ASCII value gives what the general folding gives."""
    assert outgoing.fold(name, value) == outgoing._folded(name, value)


@settings(max_examples=EXAMPLES, deadline=None)
@given(body=st.one_of(text, short_words))
def test_wrapping_gives_what_wrapping_line_by_line_gives(body):
    assert wrap_text(body) == outgoing.wrap_each_line(body.splitlines(), outgoing.LINE_WIDTH)


def test_the_control_pattern_is_exactly_the_unicode_control_categories():
    import sys
    import unicodedata

    for code in range(sys.maxunicode + 1):
        char = chr(code)
        expected = unicodedata.category(char) in ("Cc", "Zl", "Zp")
        assert is_control(char) == expected == has_control(f"a{char}b"), hex(code)


def test_message_id_and_items_are_the_checked_values(tmp_path):
    message = compose(config_named(tmp_path), EXAMPLE_MAILS[2])
    assert message["Message-ID"] == MESSAGE_ID and message["message-id"] == MESSAGE_ID
    assert message["Subject"] == "Grüße aus Köln — über Straßen"
    assert message["Bcc"] is None
    assert [name for name, _ in message.items()][-3:] == [
        "Content-Type",
        "Content-Transfer-Encoding",
        "MIME-Version",
    ]
    assert message.as_string() == message.as_bytes().decode("utf-8")


# -- mails with an HTML part, pictures and files (issue 31: the email package's generator
# took two thirds of a move's CPU with a picture, so compose writes these parts too) -------


def reference_multipart(config, mail):
    """The former compose of a mail with parts (8d09f27): the text part set on an
    EmailMessage, then add_alternative, add_related and add_attachment."""
    message = reference_compose(config, replace(mail, html=None, attachments=()))
    if mail.html is not None:
        message.add_alternative(mail.html.html, subtype="html", charset="utf-8")
        html = message.get_payload()[-1]
        for picture in mail.html.pictures:
            html.add_related(
                picture.png,
                maintype="image",
                subtype="png",
                cid=checked_header("Content-ID", f"<{picture.cid}>"),
                disposition="inline",
                filename="board.png",
            )
    for file_name, mime_type, text in mail.attachments:
        maintype, subtype = mime_type.split("/")
        message.add_attachment(
            text.encode("utf-8"), maintype=maintype, subtype=subtype, filename=file_name
        )
    return message


def assert_same_tree(ours, theirs):
    """Part by part: type, parameters but the boundary, disposition, Content-ID, content."""
    assert ours.get_content_type() == theirs.get_content_type()
    for name in ("charset", "filename"):
        assert ours.get_param(name) == theirs.get_param(name), name
    assert ours.get_content_disposition() == theirs.get_content_disposition()
    assert ours["Content-ID"] == theirs["Content-ID"]
    assert not ours.defects
    if ours.is_multipart():
        assert ours.get_boundary() not in (None, theirs.get_boundary())
        assert len(ours.get_payload()) == len(theirs.get_payload())
        for mine, reference in zip(ours.get_payload(), theirs.get_payload()):
            assert_same_tree(mine, reference)
    else:
        assert ours["Content-Transfer-Encoding"] == theirs["Content-Transfer-Encoding"]
        assert ours.get_content() == theirs.get_content()
        # Encoded as the email package encodes it, line by line (base64 in lines of 76).
        assert ours.get_payload() == theirs.get_payload()


def assert_same_multipart(config, mail):
    raw = compose(config, mail).as_bytes()
    ours, theirs = parsed(raw), parsed(reference_multipart(config, mail).as_bytes())
    assert ours.keys() == theirs.keys()
    assert_same_tree(ours, theirs)
    for line in raw.split(b"\n"):
        assert len(line) <= 998
    return ours


PNG = bytes(range(256)) * 40  # any bytes: the part carries them, nothing reads them here
PICTURE = Picture("board-0123abcd@localhost", PNG)
HTML = "<p>Lox 101</p>\n<img src='cid:board-0123abcd@localhost' alt='the board'>\n"
PART_MAILS = [
    Mail("board", "s", "board\n", ["a@example.org"], html=HtmlPart(HTML, (PICTURE,))),
    Mail("board", "s", "board\n", ["a@example.org"], html=HtmlPart(HTML)),
    Mail("board", "s", "b", ["a@example.org"], html=HtmlPart("<p>" + "é " * 200 + "</p>")),
    Mail("board", "s", "b", ["a@example.org"], html=HtmlPart("x" * 300, (PICTURE, PICTURE))),
    Mail(
        "export", "s", "b", ["a@example.org"], attachments=(("lox-101.txt", "text/plain", "é\n"),)
    ),
    Mail(
        "export",
        "s",
        "b",
        ["a@example.org"],
        html=HtmlPart(HTML, (PICTURE,)),
        attachments=(("lox-101.json", "application/json", '{"a": 1}'), ("b.txt", "text/plain", "")),
    ),
    # A text that writes the boundary's own form: the boundary must not be one of its lines.
    Mail(
        "board",
        "s",
        "--===============0000000000000000001==\n",
        ["a@example.org"],
        html=HtmlPart("<p/>"),
    ),
]


@pytest.mark.parametrize("mail", PART_MAILS, ids=range(len(PART_MAILS)))
def test_mails_with_parts_read_back_as_the_email_package_wrote_them(tmp_path, mail):
    ours = assert_same_multipart(config_named(tmp_path), mail)
    assert ours.get_content_type() == (
        "multipart/mixed" if mail.attachments else "multipart/alternative"
    )


def test_a_boundary_is_never_a_line_of_the_parts(tmp_path, monkeypatch):
    drawn = iter([1, 1, 2])
    monkeypatch.setattr(outgoing.secrets, "randbelow", lambda _: next(drawn))
    body = "--===============0000000000000000001==\n"
    mail = Mail("board", "s", body, ["a@example.org"], html=HtmlPart("<p/>"))
    message = parsed(compose(config_named(tmp_path), mail).as_bytes())
    assert message.get_boundary() == "===============0000000000000000002=="
    assert message.get_payload()[0].get_content() == body


@pytest.mark.parametrize(
    "attachment",
    [('x"y.txt', "text/plain"), ("a b.txt", "text/plain"), ("ok.txt", "text/plain\r\nBcc: x")],
)
def test_a_file_name_or_type_that_would_need_quoting_is_refused(tmp_path, attachment):
    mail = Mail("export", "s", "b", ["a@example.org"], attachments=((*attachment, "x"),))
    with pytest.raises(HeaderError):
        compose(config_named(tmp_path), mail)


@settings(max_examples=EXAMPLES, deadline=None)
@given(body=text, html=text, png=st.binary(max_size=2000), pictures=st.integers(0, 2))
def test_generated_mails_with_parts_read_back_as_before(
    tmp_path_factory, body, html, png, pictures
):
    config = Config.load(tmp_path_factory.mktemp("home"))
    part = HtmlPart(html, tuple(Picture(f"p{n}@localhost", png) for n in range(pictures)))
    assert_same_multipart(config, Mail("board", "s", body, ["a@example.org"], html=part))
