"""List-Unsubscribe (docs/spec/server.md §5.10): the mail a player did not ask for says how
to turn off exactly its stream, by a reply to a mailto address or by one-click POST to
`pbm web`; and the DNS records `pbm check` prints for the server's domain and DKIM key."""

import io
import re
from datetime import datetime, timedelta

import pytest
from click.testing import CliRunner

from pbm.cli import cli
from pbm.private import make_folders, private_opener
from pbm.store import Store
from pbm.web import make_app
from tests.conftest import body_of

START = datetime(2026, 3, 2, 12, 0)
SETTINGS = (
    "[server]\naddress = pbm@games.example.org\n[web]\nbase_url = https://games.example.org\n"
)
ONE_CLICK = "List-Unsubscribe=One-Click"


def at_day(clock, day):
    clock((START + timedelta(days=day)).isoformat())


def cleanup(harness):
    result = CliRunner().invoke(cli, ["--home", str(harness.home), "cleanup"])
    assert result.exit_code == 0, result.output
    return result.output


def targets(mail) -> tuple[str, str]:
    """(mailto address, https URL) of a mail's List-Unsubscribe."""
    mailto, url = re.findall(r"<([^>]+)>", str(mail["List-Unsubscribe"]))
    assert mailto.startswith("mailto:pbm+unsubscribe-") and url.startswith("https://")
    return mailto[len("mailto:") :], url


def post(harness, path, body=b"List-Unsubscribe=One-Click", method="POST"):
    app = make_app(harness.config)
    answer = {}

    def start_response(status, headers):
        answer["status"], answer["headers"] = status, dict(headers)

    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "CONTENT_LENGTH": str(len(body)),
        "CONTENT_TYPE": "application/x-www-form-urlencoded",
        "wsgi.input": io.BytesIO(body),
    }
    content = b"".join(app(environ, start_response))
    return answer["status"], answer["headers"], content.decode()


@pytest.fixture
def board(harness, clock):
    harness.configure(SETTINGS)
    at_day(clock, 0)
    harness.signup("alice", "bob", "carol")
    harness.challenge("knightpanic challenge alice bob")
    harness.ok("knightpanic subscribe carol secret 101", sender="carol@example.org")
    harness.new_mails()
    return harness


def test_a_nag_unsubscribes_by_mail_from_that_boards_nags_only(board, clock):
    board.challenge("knightpanic challenge alice carol")  # 102: alice on move there too
    board.new_mails()
    at_day(clock, 8)
    cleanup(board)
    nags = {m["References"]: m for m in board.new_mails() if m["To"] == "alice@example.org"}
    nag = nags["<knightpanic.101.alice@games.example.org>"]
    assert nag["List-Unsubscribe-Post"] == ONE_CLICK
    mailto, _ = targets(nag)
    # The reply a mail program sends for its unsubscribe button: no password, any subject.
    raw = (
        f"From: alice@example.org\nTo: {mailto}\nSubject: unsubscribe\n"
        "Message-ID: <u1@example.org>\n\n"
    ).encode()
    outcome = board.deliver(raw, envelope_recipients=[mailto])
    assert outcome.consumed and outcome.result.ok
    [answer] = board.new_mails()
    assert answer["Subject"] == "Unsubscribed"
    assert "Turned off: reminders (nags) to alice about knightpanic board 101" in body_of(answer)

    at_day(clock, 10)
    report = cleanup(board)
    assert "KnightPanic Board 101: no nag to alice (turned off)" in report
    assert "KnightPanic Board 101: nag to alice" not in report, "no nag went out"
    assert [m["References"] for m in board.new_mails() if m["To"] == "alice@example.org"] == [
        "<knightpanic.102.alice@games.example.org>"
    ]


def test_one_click_post_turns_off_a_subscription_and_a_get_changes_nothing(board):
    board.ok("knightpanic move 101 alice secret c1-a5")
    mails = {m["To"]: m for m in board.new_mails()}
    # The players' board mails carry a List-Id but no List-Unsubscribe: they asked to play.
    assert mails["alice@example.org"]["List-Unsubscribe"] is None
    assert mails["alice@example.org"]["List-Id"] == (
        '"KnightPanic board 101" <101.knightpanic.games.example.org>'
    )
    _, url = targets(mails["carol@example.org"])
    path = url[len("https://games.example.org") :]

    status, headers, _ = post(board, path, method="GET")
    assert status.startswith("405") and headers["Allow"] == "POST"
    status, _, page = post(board, path, body=b"")
    assert status.startswith("400") and ONE_CLICK in page
    status, _, _ = post(board, "/unsubscribe/" + "a" * 32)
    assert status.startswith("404")
    board.ok("knightpanic move 101 bob secret a7-c3")
    assert "carol@example.org" in {m["To"] for m in board.new_mails()}, "still subscribed"

    status, headers, page = post(board, path)
    assert status.startswith("200")
    assert "the board mails of knightpanic board 101 to its subscriber carol" in page
    assert headers["X-Content-Type-Options"] == "nosniff"
    board.ok("knightpanic move 101 alice secret g1-e5")
    assert "carol@example.org" not in {m["To"] for m in board.new_mails()}


def test_a_player_who_resigns_gets_her_board_mail_without_list_unsubscribe(board):
    """Resigning makes her a subscriber, but the board mail that answers her resign, and
    every mail of the finished board to its players, is a player's own
    (docs/spec/server.md §5.10)."""
    board.ok("knightpanic move 101 alice secret c1-a5")
    board.ok("knightpanic move 101 bob secret a7-c3")
    board.new_mails()
    board.ok("knightpanic resign 101 alice secret", sender="alice@example.org")
    mails = {m["To"]: m for m in board.new_mails()}
    assert mails["alice@example.org"]["List-Unsubscribe"] is None
    assert mails["bob@example.org"]["List-Unsubscribe"] is None
    assert mails["carol@example.org"]["List-Unsubscribe"] is not None


@pytest.mark.parametrize("automatic", [False, True], ids=["by hand", "auto-submitted"])
def test_an_unsubscribe_that_fails_dmarc_turns_nothing_off(board, automatic):
    """A stranger's mail (the MTA says DMARC failed) takes no token; it is answered only
    where the loop guard answers (docs/spec/server.md §4.2 step 3): auto-submitted mail
    gets nothing."""
    board.configure(SETTINGS + "[mail]\nauthserv_id = mx.pbm.example\n")
    board.ok("knightpanic move 101 alice secret c1-a5")
    mails = {m["To"]: m for m in board.new_mails()}
    mailto, _ = targets(mails["carol@example.org"])
    raw = (
        "Authentication-Results: mx.pbm.example; dmarc=fail header.from=example.org\n"
        + ("Auto-Submitted: auto-replied\n" if automatic else "")
        + f"From: carol@example.org\nTo: {mailto}\nSubject: unsubscribe\n"
        "Message-ID: <u-dmarc@example.org>\n\n"
    ).encode()
    board.deliver(raw, envelope_recipients=[mailto])
    answers = board.new_mails()
    if automatic:
        assert answers == []
    else:
        [answer] = answers
        assert answer["To"] == "carol@example.org" and "DMARC" in body_of(answer)
    board.ok("knightpanic move 101 bob secret a7-c3")
    assert "carol@example.org" in {m["To"] for m in board.new_mails()}, "still subscribed"


def test_the_digest_and_notification_streams_turn_off_alone(board, clock):
    board.ok("digest alice secret on", sender="alice@example.org")
    board.ok("knightpanic notify carol secret", sender="carol@example.org")
    board.new_mails()
    cleanup(board)
    [digest] = [m for m in board.new_mails() if m["Subject"] == "PBM digest for alice"]
    _, url = targets(digest)
    assert post(board, url[len("https://games.example.org") :])[0].startswith("200")
    store = Store.open(board.config.db_path)
    try:
        assert not store.users.digest("alice")
        assert store.watching.game_notifiers("knightpanic") == ["carol"]
        assert store.watching.subscribers(1) == ["carol"]
    finally:
        store.close()


def test_a_bad_unsubscribe_address_is_answered_and_changes_nothing(board):
    mailto = "pbm+unsubscribe-" + "b" * 32 + "@games.example.org"
    raw = f"From: alice@example.org\nTo: {mailto}\nSubject: x\nMessage-ID: <u2@x>\n\n".encode()
    outcome = board.deliver(raw, envelope_recipients=[mailto])
    assert outcome.consumed and not outcome.result.ok
    [answer] = board.new_mails()
    assert "This unsubscribe address is not valid: nothing was changed." in body_of(answer)


def test_without_an_https_base_url_only_the_mailto_is_offered(harness, clock):
    harness.configure("[server]\naddress = pbm@games.example.org\n")
    at_day(clock, 0)
    harness.signup("alice", "bob")
    harness.challenge("knightpanic challenge alice bob")
    harness.new_mails()
    at_day(clock, 8)
    cleanup(harness)
    [nag] = [m for m in harness.new_mails() if m["To"] == "alice@example.org"]
    assert re.fullmatch(
        r"<mailto:pbm\+unsubscribe-[a-z2-7]{32}@games\.example\.org>", nag["List-Unsubscribe"]
    )
    assert nag["List-Unsubscribe-Post"] is None


PUBLIC_PEM = """-----BEGIN PUBLIC KEY-----
MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDwIRP/UC3SBsEmGqZ9ZJW3/DkM
oGeLnQg1fWn7/zYtIxN2SnFCjxOCKG9v3b4jYfcTNh5ijSsq631uBItLa7od+v/R
tdC2UzJ1lWT947qR+Rcac2gbto/NMqJ0fzfVjH4OuKhitdY9tf6mcwGjaNBcWToI
MmPSPDdQPNUYckcQ2QIDAQAB
-----END PUBLIC KEY-----
"""
GENKEY_TXT = (
    'pbm._domainkey\tIN\tTXT\t( "v=DKIM1; h=sha256; k=rsa; "\n'
    '\t  "p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDwIRP/UC3SBsEmGqZ9ZJW3/DkM"\n'
    '\t  "oGeLnQg1fWn7/zYtIxN2SnFCjxOCKG9v3b4jYfcTNh5ijSsq631uBItLa7od+v/R" )  ; '
    "----- DKIM key pbm for games.example.org\n"
)


@pytest.mark.parametrize("key_file", [PUBLIC_PEM, GENKEY_TXT])
def test_pbm_check_prints_the_spf_dkim_and_dmarc_records(harness, key_file):
    with open(harness.home / "dkim.pub", "w", opener=private_opener) as handle:
        handle.write(key_file)
    harness.configure(
        "[server]\naddress = pbm@games.example.org\noperator_address = ops@example.org\n"
        f"[dkim]\nselector = pbm\npublic_key = {harness.home / 'dkim.pub'}\n"
    )
    for folder in ("outbox/tmp", "outbox/new", "log"):
        make_folders(harness.home / folder)
    result = CliRunner().invoke(cli, ["--home", str(harness.home), "check"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert '  games.example.org.  TXT  "v=spf1 mx a -all"' in lines
    assert (
        '  _dmarc.games.example.org.  TXT  "v=DMARC1; p=quarantine; adkim=s; aspf=s; '
        'rua=mailto:ops@example.org"'
    ) in lines
    [dkim] = [line for line in lines if "._domainkey." in line]
    assert dkim.startswith('  pbm._domainkey.games.example.org.  TXT  "v=DKIM1; k=rsa; p=MIGf')
    assert "oGeLnQg1fWn7/zYtIxN2SnFCjxOCKG9v3b4jYfcTNh5ijSsq631uBItLa7od+v/R" in dkim


def test_pbm_check_says_how_to_name_the_dkim_key(harness):
    for folder in ("outbox/tmp", "outbox/new", "log"):
        make_folders(harness.home / folder)
    result = CliRunner().invoke(cli, ["--home", str(harness.home), "check"])
    assert result.exit_code == 0, result.output
    assert "DKIM: set [dkim] selector and public_key in pbm.ini" in result.output
