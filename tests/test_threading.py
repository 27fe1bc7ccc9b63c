"""One thread per board and recipient (issue 15.3, docs/spec/server.md §5.3): a subject that
stays the same for the whole game, a References root per board and recipient, In-Reply-To
on the mails that answer a command; pbmserv's changing subjects for those who ask."""

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
