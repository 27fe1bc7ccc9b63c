"""The core schema's steps m001 to m011 (migrations.py), as released before the batch of
trust, delivery and matchmaking. A released step is never changed."""


def m001_core(db):
    db["users"].create(
        {"userid": str, "password_hash": str, "status": str, "created_at": str, "deleted_at": str},
        pk="userid",
        not_null={"status", "created_at"},
    )
    db["addresses"].create(
        {"id": int, "userid": str, "address": str, "position": int},
        pk="id",
        foreign_keys=[("userid", "users", "userid")],
        not_null={"userid", "address", "position"},
    )
    db["addresses"].create_index(["userid", "address"], unique=True)
    db["addresses"].create_index(["address"])
    db["counters"].create({"game": str, "next_number": int}, pk="game", not_null={"next_number"})
    db["boards"].create(
        {
            "id": int,
            "game": str,
            "number": int,
            "status": str,
            "options": str,
            "nag_days": int,
            "forfeit_days": int,
            "total_days": int,
            "seed": int,
            "created_at": str,
            "last_move_at": str,
            "last_nag_at": str,
            "finished_at": str,
            "archived_at": str,
            "rated": int,
            "comment_author": str,
            "comment_text": str,
            "comment_at": str,
            "snapshot_ply": int,
            "snapshot_state": str,
        },
        pk="id",
        not_null={"game", "number", "status", "options", "seed", "created_at", "last_move_at"},
    )
    db["boards"].create_index(["game", "number"], unique=True)
    db["boards"].create_index(["game", "status"])
    db["seats"].create(
        {"board_id": int, "seat": int, "userid": str},
        pk=("board_id", "seat"),
        foreign_keys=[("board_id", "boards", "id"), ("userid", "users", "userid")],
        not_null={"userid"},
    )
    db["seats"].create_index(["userid", "board_id"])
    db["moves"].create(
        {
            "id": int,
            "board_id": int,
            "ply": int,
            "seat": int,
            "userid": str,
            "kind": str,
            "text": str,
            "auto": int,
            "charged": int,
            "created_at": str,
            "undone_at": str,
        },
        pk="id",
        foreign_keys=[("board_id", "boards", "id")],
        not_null={
            "board_id",
            "ply",
            "seat",
            "userid",
            "kind",
            "text",
            "auto",
            "charged",
            "created_at",
        },
    )
    # A ply number is taken once per board among the plies still standing.
    db.execute(
        "CREATE UNIQUE INDEX idx_moves_live_ply ON moves (board_id, ply) WHERE undone_at IS NULL"
    )
    db["subscriptions"].create(
        {"board_id": int, "userid": str},
        pk=("board_id", "userid"),
        foreign_keys=[("board_id", "boards", "id"), ("userid", "users", "userid")],
    )
    db["subscriptions"].create_index(["userid"])
    db["challenge_settings"].create(
        {"game": str, "userid": str, "max_active": int, "seeking": int, "inactive": int},
        pk=("game", "userid"),
        foreign_keys=[("userid", "users", "userid")],
        not_null={"seeking", "inactive"},
        defaults={"seeking": 0, "inactive": 0},
    )
    db["results"].create(
        {
            "id": int,
            "game": str,
            "board_id": int,
            "finished_at": str,
            "rated": int,
            "points": int,
            "reason": str,
        },
        pk="id",
        foreign_keys=[("board_id", "boards", "id")],
        not_null={"game", "board_id", "finished_at", "rated", "points"},
    )
    db["results"].create_index(["board_id"])
    db["result_seats"].create(
        {"result_id": int, "seat": int, "userid": str, "score": float},
        pk=("result_id", "seat"),
        foreign_keys=[("result_id", "results", "id")],
        not_null={"userid", "score"},
    )
    db["inbox"].create({"key": str, "received_at": str}, pk="key", not_null={"received_at"})
    db["outbox"].create(
        {
            "id": int,
            "created_at": str,
            "kind": str,
            "recipients": str,
            "envelope_from": str,
            "message_id": str,
            "message": bytes,
            "status": str,
            "attempts": int,
            "next_attempt_at": str,
            "claimed_at": str,
            "last_error": str,
            "sent_at": str,
        },
        pk="id",
        not_null={
            "created_at",
            "kind",
            "recipients",
            "message_id",
            "message",
            "status",
            "attempts",
        },
        defaults={"attempts": 0},
    )
    db["outbox"].create_index(["status", "next_attempt_at"])
    db["audit"].create(
        {
            "id": int,
            "at": str,
            "kind": str,
            "game": str,
            "board": int,
            "userid": str,
            "detail": str,
        },
        pk="id",
        not_null={"at", "kind"},
    )


def m002_votes_queues_watching_ratings(db):
    db["votes"].create(
        {
            "board_id": int,
            "kind": str,
            "proposer": str,
            "created_at": str,
            "accepted": str,
            "last_nag_at": str,
        },
        pk="board_id",
        foreign_keys=[("board_id", "boards", "id")],
        not_null={"kind", "proposer", "created_at", "accepted"},
    )
    db["queued"].create(
        {
            "board_id": int,
            "seat": int,
            "move_text": str,
            "guard": str,
            "comment": str,
            "resign": int,
        },
        pk=("board_id", "seat"),
        foreign_keys=[("board_id", "boards", "id")],
        not_null={"resign"},
        defaults={"resign": 0},
    )
    db["submissions"].create(
        {
            "board_id": int,
            "seat": int,
            "move_text": str,
            "guard": str,
            "comment": str,
            "move_number": int,
        },
        pk=("board_id", "seat"),
        foreign_keys=[("board_id", "boards", "id")],
        not_null={"move_text", "move_number"},
    )
    db["subscribe_all"].create(
        {"game": str, "userid": str},
        pk=("game", "userid"),
        foreign_keys=[("userid", "users", "userid")],
    )
    db["notify_board"].create(
        {"board_id": int, "userid": str},
        pk=("board_id", "userid"),
        foreign_keys=[("board_id", "boards", "id"), ("userid", "users", "userid")],
    )
    db["notify_game"].create(
        {"game": str, "userid": str},
        pk=("game", "userid"),
        foreign_keys=[("userid", "users", "userid")],
    )
    db["ratings"].create(
        {
            "game": str,
            "userid": str,
            "rating": int,
            "games": int,
            "won": int,
            "lost": int,
            "tied": int,
        },
        pk=("game", "userid"),
        not_null={"rating", "games", "won", "lost", "tied"},
    )
    db["rating_changes"].create(
        {"result_id": int, "userid": str, "before": int, "after": int, "provisional": int},
        pk=("result_id", "userid"),
        foreign_keys=[("result_id", "results", "id")],
        not_null={"before", "after", "provisional"},
    )
    db["vacations"].create(
        {"id": int, "userid": str, "started_at": str, "ended_at": str, "ended_by": str},
        pk="id",
        foreign_keys=[("userid", "users", "userid")],
        not_null={"userid", "started_at"},
    )
    db["vacations"].create_index(["userid", "started_at"])
    db["boards"].create_index(["status", "archived_at"])
    db["inbox"].create_index(["received_at"])


def m003_abuse_limits_and_outbox_links(db):
    db["rate_events"].create(
        {"id": int, "kind": str, "key": str, "at": str}, pk="id", not_null={"kind", "key", "at"}
    )
    db["rate_events"].create_index(["kind", "key", "at"])
    db["auth_failures"].create(
        {"id": int, "userid": str, "sender": str, "at": str},
        pk="id",
        not_null={"userid", "sender", "at"},
    )
    db["auth_failures"].create_index(["userid", "sender", "at"])
    db["outbox"].add_column("inbox_key", str)
    db["outbox"].add_column("userid", str)
    db["outbox"].create_index(["inbox_key"])
    db["outbox"].create_index(["userid", "created_at"])


def m004_address_proofs(db):
    """Addresses a command of the account has come from (docs/security.md). Addresses
    registered before this step are taken as proven: their owners have been receiving mail
    there."""
    db["address_proofs"].create(
        {"userid": str, "address": str, "at": str},
        pk=("userid", "address"),
        not_null={"at"},
    )
    db.execute(
        "INSERT OR IGNORE INTO address_proofs (userid, address, at) "
        "SELECT a.userid, lower(a.address), u.created_at FROM addresses a "
        "JOIN users u ON u.userid = a.userid"
    )


def m005_password_resets(db):
    """One reset code per account at a time, kept only as its digest (docs/spec/server.md
    §3.2.3)."""
    db["password_resets"].create(
        {"userid": str, "code_digest": str, "created_at": str, "expires_at": str},
        pk="userid",
        foreign_keys=[("userid", "users", "userid")],
        not_null={"code_digest", "created_at", "expires_at"},
    )


def m006_reply_tokens(db):
    """Reply tokens (docs/spec/server.md §11.3): the row of each token's random id."""
    db["reply_tokens"].create(
        {
            "id": str,
            "game": str,
            "number": int,
            "userid": str,
            "move_number": int,
            "created_at": str,
            "expires_at": str,
        },
        pk="id",
        not_null={"game", "number", "userid", "move_number", "created_at", "expires_at"},
    )
    db["reply_tokens"].create_index(["expires_at"])


def m007_mail_settings(db):
    """Per-user mail settings: pbmserv's changing subjects (docs/spec/server.md §5.3) and
    the daily digest (docs/spec/server.md §11.4) with the time of the last one sent."""
    db["mail_settings"].create(
        {"userid": str, "pbmserv_subjects": int, "digest": int, "digest_sent_at": str},
        pk="userid",
        foreign_keys=[("userid", "users", "userid")],
        not_null={"pbmserv_subjects", "digest"},
        defaults={"pbmserv_subjects": 0, "digest": 0},
    )


def m008_reset_reply_tokens(db):
    """The id of the reply token a password reset mail carries (docs/spec/server.md
    §3.2.3): kept apart from reply_tokens so that it can never stand for a board."""
    db["password_resets"].add_column("token_id", str)
    db["password_resets"].create_index(["token_id"], unique=True)


def m009_html_mail(db):
    """Whether a user's board mails carry an HTML part with the board's picture
    (docs/spec/server.md §11.5). Accounts made before stay text-only, as they were."""
    db["users"].add_column("html_mail", int, not_null_default=0)


def m010_board_lists_by_number(db):
    # The web view pages through a game's boards of one status by number
    # (docs/spec/server.md §11.8): with 100,000 boards, neither a sort of them all nor a
    # read of each row skipped to tell finished from archived, for each page and its count.
    db["boards"].create_index(["game", "status", "number", "archived_at"])


def m011_robots(db):
    """The accounts the server moves for, with their game, robot and budget
    (docs/spec/server.md §11.7)."""
    db["robots"].create(
        {"userid": str, "game": str, "robot": str, "seconds": float, "created_at": str},
        pk="userid",
        foreign_keys=[("userid", "users", "userid")],
        not_null={"game", "robot", "seconds", "created_at"},
    )


STEPS = [
    m001_core,
    m002_votes_queues_watching_ratings,
    m003_abuse_limits_and_outbox_links,
    m004_address_proofs,
    m005_password_resets,
    m006_reply_tokens,
    m007_mail_settings,
    m008_reset_reply_tokens,
    m009_html_mail,
    m010_board_lists_by_number,
    m011_robots,
]
