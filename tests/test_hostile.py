"""Hostile and broken mail: the corpus in tests/hostile/ and two 10 MB messages.

Each message gets a clear reply or, where the spec says so, none; none crashes the
handler (exit 0 every time) or changes state it should not."""

import email
import email.policy
from concurrent.futures import ThreadPoolExecutor

from pbm.store import Store
from tests.conftest import ROOT
from tests.mailpipe import pipe

CORPUS = sorted((ROOT / "tests" / "hostile").glob("*.eml"))
NO_ANSWER = {
    "35",
    "36",
    "37",
    "38",
    "39",
    "40",
    "41",
    "42",  # loops and bounces
}
SUBJECTS = {  # what the one reply is, where it is fixed
    "01": "Help games",
    "02": "Help games",
    "03": "Help games",
    "04": "Help games",
    "05": "Help games",
    # No usable From: the envelope sender (here Return-Path) is the origin (issue 25).
    "06": "Help commands",
    "07": "Help games",
    "08": "Help games",
    "09": "Help games",
    "10": "Help games",
    "12": "PBM error",
    "13": "Help games",
    "14": "Help games",
    "15": "KnightPanic Board 101: alice vs bob",
    "16": "PBM error",
    "17": "PBM error",
    "18": "PBM error",
    "19": "PBM error",
    "20": "PBM error",
    "21": "PBM error",
    "22": "Help games",
    "23": "PBM error",
    "25": "Help games",
    "26": "Help games",
    "27": "PBM error",
    "28": "Account sqlpw created",
    "29": "PBM error",
    "30": "Account shellpw created",
    "31": "KnightPanic error",
    "32": "KnightPanic Board 101: alice vs bob",
    "33": "Invalid challenge",
    "34": "KnightPanic Board 101: alice vs bob",
    "43": "KnightPanic Board 101: alice vs bob",
    "44": "Help games",
    "45": "Help games",
    "46": "Help games",
    "47": "KnightPanic Board 101: alice vs bob",
    "49": "Help games",
    "50": "Help games",
}


def big_message(number, attachment):
    head = (
        f"Return-Path: <h{number}@hostile.example>\r\nFrom: h{number}@hostile.example\r\n"
        f"To: pbm@localhost\r\nSubject: signup bigone pw1234\r\n"
        f"Message-ID: <hostile-{number}@hostile.example>\r\nMIME-Version: 1.0\r\n"
    )
    if attachment:
        head += 'Content-Type: multipart/mixed; boundary="big"\r\n\r\n--big\r\n'
        head += "Content-Type: text/plain\r\n\r\nsee file\r\n--big\r\n"
        head += (
            "Content-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n"
        )
        body = ("QUJD" * 19 + "\r\n") * 131072 + "--big--\r\n"
    else:
        head += "Content-Type: text/plain\r\n\r\n"
        body = ("x" * 78 + "\r\n") * 131072
    return (head + body).encode()


def test_hostile_corpus(project_env, challenged_home):
    home = challenged_home
    assert len(CORPUS) >= 40
    messages = [(path.name[:2], path.read_bytes()) for path in CORPUS]
    messages += [
        ("91", big_message(91, attachment=False)),
        ("92", big_message(92, attachment=True)),
    ]
    assert all(len(raw) > 10_000_000 for number, raw in messages if number in ("91", "92"))
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda item: (item[0], pipe(project_env, item[1])), messages))
    for number, result in results:
        assert result.returncode == 0, (number, result.stderr.decode()[-800:])

    replies = {}
    for path in (home / "outbox" / "new").iterdir():
        mail = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
        assert "bcc" not in {name.lower() for name in mail.keys()}
        assert "victim@evil.example" not in mail["To"]
        for line in mail.as_string().split("\n\n", 1)[0].splitlines():
            assert not line.lower().startswith("bcc:")
        if "@hostile.example" in mail["To"]:
            replies.setdefault(mail["To"].split("@")[0][1:], []).append(mail)
    for number, _ in messages:
        got = replies.get(number, [])
        if number in NO_ANSWER:
            assert got == [], (number, [m["Subject"] for m in got])
            continue
        assert len(got) == 1, (number, [m["Subject"] for m in got])
        if number in SUBJECTS:
            assert got[0]["Subject"] == SUBJECTS[number], number
        if number in ("91", "92"):
            assert got[0]["Subject"] == "PBM error"
            assert (
                "Message too large (limit 1048576 bytes); nothing was done" in got[0].get_content()
            )

    chat = replies["34"][0].get_content()
    assert "{{ config }} {% for x in range(10**9) %}%s%n%x ${HOME}" in chat, "user text stays text"
    assert "Salut à tous" in replies["43"][0].get_content()
    assert "beforeafter" in replies["47"][0].get_content()

    store = Store.open(home / "pbm.db")
    assert store.integrity_check() == "ok"
    users = {r["userid"] for r in store._rows("SELECT userid FROM users")}
    assert users == {"alice", "bob", "sqlpw", "shellpw"}
    board = store.boards.get("knightpanic", 101)
    assert store.boards.plies(board.id) == [] and board.status == "active"
    assert {
        r["name"] for r in store._rows("SELECT name FROM sqlite_master WHERE type='table'")
    } >= {"users", "moves", "boards"}
