"""A real bounce through Postfix (docs/delivery.md): a board mail to an address that turns
out not to exist comes back as Postfix's own delivery status notification to the mail's
VERP sender, reaches pbm through the pipe transport and marks the address; carol hears of
it at her other address, signed like every mail pbm sends, and `pbm status` lists it.
Runs after test_mail_server.py, on the same installation (see conftest.py)."""

import smtplib

from conftest import INSTALL_DIR, MAILDIRS, PLAYER_DOMAIN, SERVER, as_pbm, run, wait_for
from test_mail_server import VERP, assert_dkim_signed, command_mail, log_lines, queue_is_empty
from test_mail_server import read_mail as read_delivered

CAROL = f"carol@{PLAYER_DOMAIN}"
GONE = f"gone@{PLAYER_DOMAIN}"


def send_as_carol(subject):
    message = command_mail("alice", subject)
    message.replace_header("From", f"Carol <{CAROL}>")
    with smtplib.SMTP("127.0.0.1", 25, local_hostname=f"home.{PLAYER_DOMAIN}") as client:
        client.send_message(message, from_addr=CAROL, to_addrs=[SERVER])


def carols_mail(count):
    folder = MAILDIRS / "carol" / "new"
    wait_for(
        lambda: folder.is_dir() and len(list(folder.iterdir())) >= count,
        f"{count} mails in carol's Maildir",
    )
    return [read_delivered(path) for path in sorted(folder.iterdir(), key=lambda p: p.name)]


def test_a_board_mail_that_bounces_marks_the_address_and_carol_hears_elsewhere(mail_host):
    # players.test now takes any recipient and bounces the unknown ones afterwards, as a
    # provider's server does: the refusal comes as a mail, not as an SMTP reply to pbm.
    run("postconf", "-e", "smtpd_reject_unlisted_recipient = no")
    run("postfix", "reload")
    try:
        send_as_carol(f"signup carol pear99 {CAROL} {GONE}")
        [created] = carols_mail(1)
        assert created["Subject"] == "Account carol created", created.as_string()[:3000]
        send_as_carol("knightpanic challenge carol alice")
        wait_for(
            lambda: log_lines(f"to=<{GONE}>", "status=bounced"),
            "Postfix to bounce the board mail to the unknown address",
        )
        mails = {mail["Subject"]: mail for mail in carols_mail(3)}
    finally:
        run("postconf", "-X", "smtpd_reject_unlisted_recipient")
        run("postfix", "reload")
    board = mails["KnightPanic Board 103: carol vs alice"]
    notice = mails["Mail to carol bounces"]
    for mail in (board, notice):
        assert VERP.fullmatch(mail["Return-Path"]), mail["Return-Path"]
        assert_dkim_signed(mail)
    assert notice["To"] == CAROL
    assert f"Mail to {GONE}, an address of carol, cannot be delivered" in notice.get_content()
    # Postfix's bounce went to the VERP address, which routes to the pbm pipe.
    assert log_lines("to=<pbm+bounce-", "relay=pbm,", "status=sent")
    status = as_pbm(str(INSTALL_DIR / ".venv" / "bin" / "pbm"), "status")
    assert f"  {GONE} (carol) since" in status.stdout, status.stdout + status.stderr
    wait_for(queue_is_empty, "an empty mail queue")
