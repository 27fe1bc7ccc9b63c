"""Issue 13 part 2: bounded work for any mail under the size limit. Mail shaped to make the
email package's parser blow up (encoded words, parameters, addresses, parts, nesting,
comments, groups, quoted pairs) runs through mail_handler.py under 256 MB of address space
and 10 s of CPU: each exits 0 with "could not read your mail" to the sender, or with no
answer when the address to answer is itself what cannot be read. Mail just inside the
limits is answered as usual."""

import itertools
import random
import resource
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbm import bounds
from tests.conftest import ROOT, STRESS_FACTOR
from tests.mailpipe import inbox

MEMORY_LIMIT = 256 * 1024 * 1024
CPU_SECONDS = 10
SIZE_LIMIT = 1048576  # the default max_message_bytes: the corpus fills it
SENDER = "alice@example.org"


def limited():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))


MAIL_NUMBERS = itertools.count(1)


def mail(headers: bytes, body: bytes = b"hello\r\n", sender: bytes = SENDER.encode()) -> bytes:
    raw = (
        b"From: "
        + sender
        + b"\r\nTo: pbm@localhost\r\nMessage-ID: <bounded-%d@test>\r\n" % next(MAIL_NUMBERS)
        + headers
        + b"\r\n"
        + body
    )
    assert len(raw) <= SIZE_LIMIT, len(raw)
    return raw


def fill(unit: bytes, budget: int) -> bytes:
    return unit * (budget // len(unit))


def folded(unit: bytes, budget: int) -> bytes:
    """A long header value folded into short lines, as a real (or hostile) mailer would."""
    count = budget // (len(unit) + 3)
    return b"\r\n ".join([unit] * count)


def nested_multipart(depth: int, rng) -> bytes:
    body = b"innermost\r\n"
    for level in range(depth):
        boundary = b"b%d-%d" % (level, rng.randrange(10**6))
        body = (
            b"Content-Type: multipart/mixed; boundary="
            + boundary
            + b"\r\n\r\n--"
            + boundary
            + b"\r\n"
            + body
            + b"\r\n--"
            + boundary
            + b"--\r\n"
        )
    return body


def nested_messages(depth: int) -> bytes:
    body = b"Subject: inner\r\n\r\ninnermost\r\n"
    for _ in range(depth):
        body = b"Content-Type: message/rfc822\r\n\r\n" + body
    return body


def many_parts(count: int, part_headers: bytes = b"Content-Type: text/plain\r\n") -> bytes:
    parts = b"".join(b"--sep\r\n" + part_headers + b"\r\npart %d\r\n" % i for i in range(count))
    return parts + b"--sep--\r\n"


# (name, builder(rng, scale) -> raw, answered): `answered` says whether the sender gets
# "could not read your mail" (True) or, the answer address being unreadable, nothing.
HOSTILE = [
    (
        "840 KB Subject of encoded words",
        lambda rng, k: mail(
            b"Subject: " + folded(b"=?utf-8?q?%c?=" % rng.choice(b"abc"), 840_000) + b"\r\n"
        ),
        True,
    ),
    (
        "encoded words spread over many headers",
        lambda rng, k: mail(
            b"".join(b"X-Note-%d: =?utf-8?b?QUJD?= =?utf-8?q?x?=\r\n" % i for i in range(400 * k))
        ),
        True,
    ),
    (
        "tens of thousands of MIME parameters",
        lambda rng, k: mail(
            b"MIME-Version: 1.0\r\nContent-Type: text/plain; "
            + folded(b"p=v;", 60_000 * k)
            + b"\r\n"
        ),
        True,
    ),
    (
        "parameters in a part's header",
        lambda rng, k: mail(
            b"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=sep\r\n",
            many_parts(2, b"Content-Type: text/plain; " + folded(b"a=b;", 30_000 * k) + b"\r\n"),
        ),
        True,
    ),
    (
        "tens of thousands of Reply-To addresses",
        lambda rng, k: mail(
            b"Reply-To: " + folded(b"u%d@example.org," % rng.randrange(10), 400_000) + b"\r\n"
        ),
        True,
    ),
    (
        "tens of thousands of From addresses",
        lambda rng, k: mail(b"", sender=folded(b"v@example.org,", 300_000)),
        False,
    ),
    (
        "tens of thousands of MIME parts",
        lambda rng, k: mail(
            b"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=sep\r\n",
            many_parts(20_000 * k),
        ),
        True,
    ),
    (
        "a thousand nested multiparts",
        lambda rng, k: mail(b"MIME-Version: 1.0\r\n" + nested_multipart(1000 * k, rng)),
        True,
    ),
    (
        "deeply nested message/rfc822",
        lambda rng, k: mail(b"MIME-Version: 1.0\r\n" + nested_messages(2000 * k)),
        True,
    ),
    (
        "a header block of 800 KB",
        lambda rng, k: mail(
            b"".join(b"Received: from host%d by relay\r\n" % i for i in range(25_000))
        ),
        True,
    ),
    (
        "one header of 500 KB",
        lambda rng, k: mail(b"X-Long: " + fill(b"x", 500_000) + b"\r\n"),
        True,
    ),
    (
        "comments nested 10,000 deep",
        lambda rng, k: mail(
            b"Reply-To: " + b"(" * 10_000 * k + b"a@b.c" + b")" * 10_000 * k + b"\r\n"
        ),
        True,
    ),
    ("groups nested in From", lambda rng, k: mail(b"", sender=b"g:" * 3000 * k + b"a@b.c;"), False),
    (
        "quoted pairs in Content-Type",
        lambda rng, k: mail(
            b'MIME-Version: 1.0\r\nContent-Type: text/plain; name="'
            + fill(b'\\"', 100_000)
            + b'"\r\n'
        ),
        True,
    ),
    (
        "a comment per character in Message-ID",
        lambda rng, k: mail(b"Subject: help\r\nMessage-ID: " + fill(b"(a)", 30_000) + b"<x@y>\r\n"),
        True,
    ),
    (
        "dots in Reply-To",
        lambda rng, k: mail(b"Reply-To: a" + fill(b".", 300_000) + b"@b.c\r\n"),
        True,
    ),
]


def run_limited(env, raw):
    return subprocess.run(
        [sys.executable, str(ROOT / "mail_handler.py")],
        input=raw,
        env=env,
        cwd=ROOT,
        capture_output=True,
        timeout=300,
        preexec_fn=limited,
    )


@pytest.fixture
def home_env(project_env, tmp_path):
    from click.testing import CliRunner

    from pbm.cli import cli

    home = tmp_path / "home"
    assert CliRunner().invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    return home, project_env


@pytest.mark.parametrize("name,build,answered", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_shapes_end_with_an_answer_under_resource_limits(home_env, name, build, answered):
    home, env = home_env
    seen = set()
    rng = random.Random(name)
    for _variant in range(STRESS_FACTOR):
        raw = build(rng, 1)
        result = run_limited(env, raw)
        assert result.returncode == 0, (name, result.returncode, result.stderr.decode()[-2000:])
        got = inbox(home, seen)
        if answered:
            assert list(got) == [SENDER], (name, got)
            text = " ".join(got[SENDER][0].get_content().split())
            assert "Could not read your mail:" in text and "nothing was done" in text, text
        else:
            assert got == {}, (name, got)


def test_the_corpus_reaches_every_limit():
    """Every shape of the corpus is refused before the parse, by check_raw or check_parsed."""
    from email import policy
    from email.parser import BytesParser

    for name, build, _ in HOSTILE:
        raw = build(random.Random(name), 1)
        with pytest.raises(bounds.TooComplex):
            bounds.check_raw(raw)
            bounds.check_parsed(BytesParser(policy=policy.default).parsebytes(raw))


REAL_MAIL = [
    ("a 2,000-character subject", mail(b"Subject: help " + b"x" * 2000 + b"\r\n")),
    (
        "30 attachments",
        mail(
            b"Subject: help\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=sep\r\n",
            many_parts(
                30,
                b'Content-Type: application/octet-stream; name="file.bin"\r\n'
                b'Content-Disposition: attachment; filename="file.bin"\r\n',
            ),
        ),
    ),
    (
        "a forward of a forward",
        mail(b"Subject: help\r\nMIME-Version: 1.0\r\n" + nested_messages(3)),
    ),
    (
        "nested alternatives",
        mail(b"Subject: help\r\nMIME-Version: 1.0\r\n" + nested_multipart(5, random.Random(1))),
    ),
    (
        "200 received headers",
        mail(
            b"Subject: help\r\n"
            + b"".join(
                b"Received: from host%d.example.org (host%d [10.0.0.1]) by relay with ESMTPS id %d;"
                b" Sun, 22 Nov 2026 10:00:00 +0000\r\n" % (i, i, i)
                for i in range(200)
            )
        ),
    ),
    (
        "a Reply-To of 20 named addresses",
        mail(
            b"Subject: help\r\nReply-To: "
            + b", ".join(b'"Player (%d)" <alice@example.org>' % i for i in range(20))
            + b"\r\n"
        ),
    ),
    (
        "a subject of encoded words",
        mail(b"Subject: " + b" ".join([b"=?utf-8?q?h=C3=A9lp?="] * 60) + b"\r\n"),
    ),
]


@pytest.mark.parametrize("name,raw", REAL_MAIL, ids=[r[0] for r in REAL_MAIL])
def test_real_mail_within_the_limits_is_read(harness, name, raw):
    outcome = harness.deliver(raw)
    assert outcome.consumed and outcome.result is not None
    text = "\n".join(m.body for _, m in outcome.result.queued)
    assert "Could not read your mail" not in text, text


_numbers = iter(range(10**9))


def next_number():
    return next(_numbers)


SHAPES = {
    "encoded words": lambda n: b"Subject: " + b" ".join([b"=?utf-8?q?a?="] * n) + b"\r\n",
    "parameters": lambda n: (
        b"Content-Type: text/plain; " + b"; ".join(b"p%d=v" % i for i in range(n)) + b"\r\n"
    ),
    "addresses": lambda n: (
        b"Reply-To: " + b", ".join(b"u%d@example.org" % i for i in range(n)) + b"\r\n"
    ),
    "parts": lambda n: (
        b"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=sep\r\n\r\n" + many_parts(n)
    ),
    "multipart depth": lambda n: b"MIME-Version: 1.0\r\n" + nested_multipart(n, random.Random(n)),
    "message depth": lambda n: b"MIME-Version: 1.0\r\n" + nested_messages(n),
    "comment depth": lambda n: b"Message-ID: " + b"(" * n + b")" * n + b"<a@b>\r\n",
    "groups": lambda n: b"Reply-To: " + b"g:" * n + b"<a@b.c>\r\n",
}
LIMITS = {
    "encoded words": bounds.MAX_ENCODED_WORDS,
    "parameters": bounds.MAX_PARAMETERS,
    "addresses": bounds.MAX_ADDRESSES,
    "parts": bounds.MAX_PARTS,
    "multipart depth": bounds.MAX_CONTAINERS,
    "message depth": bounds.MAX_CONTAINERS,
    "comment depth": bounds.MAX_COMMENT_NESTING,
    "groups": bounds.MAX_SPECIALS,
}


@settings(
    max_examples=60 * STRESS_FACTOR,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    shape=st.sampled_from(sorted(SHAPES)), factor=st.floats(1.05, 40), junk=st.binary(max_size=40)
)
def test_any_count_beyond_a_limit_is_refused_with_a_reply(harness, shape, factor, junk):
    """Hypothesis: every limit, at any count beyond it, in any of its headers or parts."""
    count = int(LIMITS[shape] * factor) + 1
    built = SHAPES[shape](count)
    if b"\r\n\r\n" not in built:
        built += b"X-Junk: " + junk.replace(b"\r", b"").replace(b"\n", b"") + b"\r\n\r\nbody\r\n"
    raw = (
        b"From: alice@example.org\r\nTo: pbm@localhost\r\n"
        b"Message-ID: <%d@hyp>\r\n" % next_number() + built
    )
    outcome = harness.deliver(raw)
    assert outcome.consumed, outcome.cause
    # A Reply-To beyond the limits is refused like any other header: the answer goes to the
    # origin, From, which Reply-To never replaces (issue 25).
    text = " ".join("\n".join(m.body for _, m in outcome.result.queued).split())
    assert "Could not read your mail:" in text and "nothing was done" in text, (shape, count, text)


def costliest_within_limits(shape: bytes) -> bytes:
    """As many parts as allowed, each with Content-Type and Content-Disposition of the
    costliest shape found for the header parser at their size limit, a Reply-To and a
    Subject at theirs."""
    value = shape * ((bounds.MAX_CONTENT_HEADER_BYTES - 60) // len(shape))
    parts = (
        b"".join(
            b'--sep\r\nContent-Type: text/plain; name="' + value + b"\r\n"
            b'Content-Disposition: attachment; name="' + value + b"\r\n\r\npart\r\n"
            for _ in range(bounds.MAX_PARTS - 2)
        )
        + b"--sep--\r\n"
    )
    return mail(
        b"Reply-To: a" + b"." * (bounds.MAX_READ_HEADER_BYTES - 20) + b"@b.c\r\n"
        b"Subject: help " + b"x" * (bounds.MAX_SUBJECT_BYTES - 20) + b"\r\n"
        b"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=sep\r\n",
        parts,
    )


@pytest.mark.parametrize(
    "shape", [b"x ", b"[", b"\\"], ids=["unbalanced quote", "brackets", "backslashes"]
)
def test_the_costliest_mail_within_the_limits_is_read_under_resource_limits(home_env, shape):
    home, env = home_env
    raw = costliest_within_limits(shape)
    bounds.check_raw(raw)  # within every limit
    result = run_limited(env, raw)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    got = inbox(home, set())
    [(address, [answer])] = got.items()
    # The answer goes to From, the origin, whatever Reply-To says (issue 25).
    assert address == "alice@example.org"
    assert "Could not read your mail" not in answer.get_content()
