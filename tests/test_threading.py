"""One thread per board and recipient (issue 15.3, docs/spec/server.md §5.3): a subject that
stays the same for the whole game, a References root per board and recipient, In-Reply-To
on the mails that answer a command; pbmserv's changing subjects for those who ask."""

from click.testing import CliRunner

from pbm.cli import cli
from tests.conftest import body_of
from tests.mailpipe import command_mail

ALICE, BOB = "alice@example.org", "bob@example.org"
SUBJECT = "KnightVision Board 101: alice vs bob"
MOVES = [("alice", "e5"), ("bob", "swap"), ("alice", "h7"), ("bob", "f2"), ("alice", "resign")]


def play_by_mail(harness):
    """A short KnightVision game with a swap, every command a real mail; the Message-IDs."""
    harness.signup("alice", "bob")
    sent = []
    raw = command_mail(
        ALICE, "knightvision challenge alice bob -size=9", message_id="<challenge@client.example>"
    )
    assert harness.deliver(raw).result.ok
    sent.append("<challenge@client.example>")
    for ply, (userid, move) in enumerate(MOVES, start=1):
        message_id = f"<ply-{ply}@client.example>"
        subject = f"knightvision move 101 {userid} secret {move}"
        raw = command_mail(f"{userid}@example.org", subject, message_id=message_id)
        result = harness.deliver(raw).result
        assert result.ok, harness.last_error_text(result)
        sent.append(message_id)
    return sent


def test_a_whole_game_threads_by_subject_and_references(harness):
    sent = play_by_mail(harness)
    for address, userid in ((ALICE, "alice"), (BOB, "bob")):
        mails = [m for m in harness.mails(address) if "Board 101" in m["Subject"]]
        assert len(mails) == len(MOVES) + 1
        # Gmail: equal subjects (and References); Thunderbird and mutt: References.
        assert {m["Subject"] for m in mails} == {SUBJECT}
        root = f"<knightvision.101.{userid}@localhost>"
        assert all(m["References"].split()[0] == root for m in mails)
    # The mails that answer a command go In-Reply-To it, after the thread root.
    alice_mails = [m for m in harness.mails(ALICE) if "Board 101" in m["Subject"]]
    assert alice_mails[0]["In-Reply-To"] == sent[0]
    assert alice_mails[0]["References"] == f"<knightvision.101.alice@localhost> {sent[0]}"
    assert alice_mails[1]["In-Reply-To"] == sent[1]
    assert alice_mails[2]["In-Reply-To"] is None  # bob's swap: not an answer to alice
    bob_mails = [m for m in harness.mails(BOB) if "Board 101" in m["Subject"]]
    assert bob_mails[2]["In-Reply-To"] == sent[2]
    # Whose turn it is stands in the first lines of the body instead.
    assert "It is alice's turn." in alice_mails[2].get_content()
    assert "You are White (w)." in bob_mails[2].get_content()  # bob took White by the swap
    assert "You are Black (b)." in alice_mails[2].get_content()


def test_pbmserv_subjects_are_kept_for_a_user_who_chooses_them(harness):
    harness.signup("alice", "bob")
    result = harness.ok("subjects alice secret pbmserv", sender=ALICE)
    [(_, notice)] = result.queued
    assert notice.subject == "Subjects for alice: pbmserv" and "**" in notice.body
    harness.ok("knightpanic challenge alice bob", sender=ALICE, body="Good luck")
    [to_alice] = harness.new_mails(ALICE)[-1:]
    assert to_alice["Subject"] == "New KnightPanic Board 101 alice **"
    assert harness.mails(BOB)[-1]["Subject"] == "KnightPanic Board 101: alice vs bob"
    harness.ok("knightpanic move 101 alice secret a1-c5", sender=ALICE)
    assert harness.mails(ALICE)[-1]["Subject"] == "KnightPanic Board 101 bob"
    harness.ok("knightpanic move 101 bob secret a7-c3", sender=BOB, body="Hm")
    assert harness.mails(ALICE)[-1]["Subject"] == "KnightPanic Board 101 alice **"
    harness.ok("subjects alice secret fixed", sender=ALICE)
    harness.ok("knightpanic move 101 alice secret c1-a5", sender=ALICE)
    assert harness.mails(ALICE)[-1]["Subject"] == "KnightPanic Board 101: alice vs bob"
    assert "fixed or pbmserv" in harness.refused("subjects alice secret sometimes", sender=ALICE)


def nag_after_a_week(harness, clock):
    clock("2026-01-08T13:00:00")
    result = CliRunner().invoke(cli, ["--home", str(harness.home), "cleanup"])
    assert result.exit_code == 0, result.output


def test_nags_chats_and_errors_about_a_board_join_its_thread(harness, clock):
    harness.signup("alice", "bob")
    clock("2026-01-01T12:00:00")
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    harness.new_mails()
    thread = "KnightPanic Board 101: alice vs bob"
    roots = {a: f"<knightpanic.101.{a.split('@')[0]}@localhost>" for a in (ALICE, BOB)}

    harness.ok("knightpanic chat 101 bob secret", sender=BOB, body="Good luck!")
    chats = harness.new_mails()
    assert sorted(m["To"] for m in chats) == [ALICE, BOB]
    for chat in chats:
        assert chat["Subject"] == thread
        assert chat["References"].split()[0] == roots[chat["To"]]
        assert body_of(chat).startswith("bob writes on KnightPanic Board 101:\nGood luck!")
        assert chat["Reply-To"] is None  # a reply to a chat is no move

    bad = command_mail(ALICE, "knightpanic move 101 alice secret a1-a2", message_id="<bad@c.ex>")
    assert not harness.deliver(bad).result.ok
    [error] = harness.new_mails()
    # In the board's thread by its subject (Gmail) and its References (the others).
    assert error["Subject"] == thread
    assert error["In-Reply-To"] == "<bad@c.ex>"
    assert error["References"] == f"{roots[ALICE]} <bad@c.ex>"

    nag_after_a_week(harness, clock)
    [nag] = harness.new_mails()
    assert (nag["To"], nag["Subject"], nag["References"]) == (ALICE, thread, roots[ALICE])
    assert body_of(nag).startswith("Reminder: it is your move on KnightPanic Board 101.")
    assert nag["Reply-To"].startswith("pbm+")  # a nag asks for a move: a reply can make it


def test_pbmserv_subjects_keep_the_nag_and_chat_subjects(harness, clock):
    harness.signup("alice", "bob")
    clock("2026-01-01T12:00:00")
    harness.ok("subjects alice secret pbmserv", sender=ALICE)
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    harness.new_mails()
    harness.ok("knightpanic chat 101 bob secret", sender=BOB, body="Good luck!")
    subjects = {m["To"]: m["Subject"] for m in harness.new_mails()}
    assert subjects == {
        ALICE: "KnightPanic chat 101 bob",
        BOB: "KnightPanic Board 101: alice vs bob",
    }
    nag_after_a_week(harness, clock)
    [nag] = harness.new_mails()
    assert nag["Subject"] == "Nag: KnightPanic Board 101 alice"
    assert nag["References"] == "<knightpanic.101.alice@localhost>"
