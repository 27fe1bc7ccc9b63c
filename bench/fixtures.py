"""What several `make bench` sections set up alike: limits no benchmark should meet, and a
database filled with finished boards straight through the storage layer."""

from pathlib import Path

# Every limit a benchmark could meet by sending many commands from few senders.
LIMITS = """[limits]
commands_per_hour = 100000000
signups_per_day = 100000000
challenges_per_day = 100000000
boards_per_user_per_day = 100000000
failed_logins_per_hour = 100000000
mails_per_user_per_day = 100000000
mails_to_unconfirmed_address_per_day = 100000000
"""
FILLED_GAME = "lox"


def populate(home: Path, finished: int, users: int):
    """Users and finished two-ply Lox boards straight through the storage layer, in one
    transaction: fast, and what a real database of that size holds."""
    from pbm.config import Config
    from pbm.security import hash_password
    from pbm.store import Store

    store = Store.open(Config.load(home).db_path)
    stored = hash_password("secret")
    at = "2026-01-01T00:00:00Z"
    with store.write():
        for i in range(users):
            store.users.create(f"u{i:05d}", stored, [f"u{i:05d}@bench.example"], at)
        for n in range(finished):
            a, b = f"u{(2 * n) % users:05d}", f"u{(2 * n + 1) % users:05d}"
            board_id = store.boards.create(
                game=FILLED_GAME,
                number=store.boards.next_number(FILLED_GAME),
                options={"size": 11, "control": False},
                seed=n,
                nag_days=7,
                forfeit_days=21,
                total_days=0,
                created_at=at,
                userids=[a, b],
                rated=True,
            )
            for ply, (seat, text) in enumerate([(0, "f6"), (1, "g7")], start=1):
                store.boards.append_ply(
                    board_id,
                    ply=ply,
                    seat=seat,
                    userid=(a, b)[seat],
                    kind="move",
                    text=text,
                    auto=False,
                    charged=60,
                    at=at,
                )
            store.boards.set_status(board_id, "finished", finished_at=at)
            store.ratings.add_result(
                game=FILLED_GAME,
                board_id=board_id,
                finished_at=at,
                rated=True,
                points=1,
                reason="bench",
                scores=[(a, 0.0), (b, 1.0)],
            )
    store.close()
