"""The core's schema, as the steps of its sqlite-utils migration set ("pbm"), in order.

A step is never changed once released: a new table, column or index is a new step at the
end. `pbm migrate` applies the steps a database lacks; the mail pipe and `pbm serve` refuse
to run (exit 75, 451) while any is pending; `pbm restore` compares a backup's schema with the
one these steps make (schema.py).
"""

from functools import lru_cache

CORE_SET = "pbm"
_CORE_STEPS: list = []


def _core_step(step):
    _CORE_STEPS.append(step)
    return step


@lru_cache(maxsize=1)
def core_migrations():
    """The core's sqlite-utils migration set. Built on demand: importing sqlite_utils costs
    more than a whole mail command, and only `pbm init` and `pbm migrate` need it."""
    # deferred: see above
    import sqlite_utils

    migrations = sqlite_utils.Migrations(CORE_SET)
    for step in _CORE_STEPS:
        migrations()(step)
    return migrations


@_core_step
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


def core_step_names() -> list[str]:
    return [step.__name__ for step in _CORE_STEPS]


@_core_step
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


@_core_step
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


@_core_step
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


@_core_step
def m005_password_resets(db):
    """One reset code per account at a time, kept only as its digest (docs/spec/server.md
    §3.2.3)."""
    db["password_resets"].create(
        {"userid": str, "code_digest": str, "created_at": str, "expires_at": str},
        pk="userid",
        foreign_keys=[("userid", "users", "userid")],
        not_null={"code_digest", "created_at", "expires_at"},
    )


@_core_step
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


@_core_step
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


@_core_step
def m008_reset_reply_tokens(db):
    """The id of the reply token a password reset mail carries (docs/spec/server.md
    §3.2.3): kept apart from reply_tokens so that it can never stand for a board."""
    db["password_resets"].add_column("token_id", str)
    db["password_resets"].create_index(["token_id"], unique=True)


@_core_step
def m009_html_mail(db):
    """Whether a user's board mails carry an HTML part with the board's picture
    (docs/spec/server.md §11.5). Accounts made before stay text-only, as they were."""
    db["users"].add_column("html_mail", int, not_null_default=0)


@_core_step
def m010_board_lists_by_number(db):
    # The web view pages through a game's boards of one status by number
    # (docs/spec/server.md §11.8): with 100,000 boards, neither a sort of them all nor a
    # read of each row skipped to tell finished from archived, for each page and its count.
    db["boards"].create_index(["game", "status", "number", "archived_at"])


@_core_step
def m011_robots(db):
    """The accounts the server moves for, with their game, robot and budget
    (docs/spec/server.md §11.7)."""
    db["robots"].create(
        {"userid": str, "game": str, "robot": str, "seconds": float, "created_at": str},
        pk="userid",
        foreign_keys=[("userid", "users", "userid")],
        not_null={"game", "robot", "seconds", "created_at"},
    )


@_core_step
def m012_bounces_and_unsubscribes(db):
    """What bounces told us (docs/spec/server.md §5.9): each failure report, the addresses
    marked failing, the List-Unsubscribe tokens (one per user and stream) and the boards
    whose nags a player turned off."""
    db["bounces"].create(
        {"id": int, "address": str, "kind": str, "at": str, "outbox_id": int, "detail": str},
        pk="id",
        not_null={"address", "kind", "at", "outbox_id"},
    )
    db["bounces"].create_index(["address", "at"])
    db["failing_addresses"].create(
        {"address": str, "since": str, "reason": str, "outbox_id": int},
        pk="address",
        not_null={"since", "reason"},
    )
    db["unsubscribe_tokens"].create(
        {"token": str, "userid": str, "stream": str, "game": str, "number": int},
        pk="token",
        not_null={"userid", "stream"},
    )
    db["nag_optouts"].create(
        {"board_id": int, "userid": str},
        pk=("board_id", "userid"),
        foreign_keys=[("board_id", "boards", "id"), ("userid", "users", "userid")],
    )


@_core_step
def m013_invitations_seeks_and_clocks(db):
    """Finding opponents (docs/spec/server.md §11.1, §11.2, §9.5): invitations kept apart from
    the boards until they start, each invitee's answer and invitation token; the terms of
    each open seek; a board's correspondence clock and the clock time of each ply; who takes
    challenges only as invitations; and which robots answer seeks."""
    db["invitations"].create(
        {
            "id": int,
            "game": str,
            "number": int,
            "inviter": str,
            "options": str,
            "server_options": str,
            "comment_author": str,
            "comment_text": str,
            "created_at": str,
            "lapses_at": str,
            "status": str,
            "ended_at": str,
        },
        pk="id",
        not_null={
            "game",
            "number",
            "options",
            "server_options",
            "created_at",
            "lapses_at",
            "status",
        },
    )
    db["invitations"].create_index(["game", "number"], unique=True)
    db["invitations"].create_index(["status", "lapses_at"])
    db["invitation_seats"].create(
        {
            "invitation_id": int,
            "seat": int,
            "userid": str,
            "accepted": int,
            "token_id": str,
        },
        pk=("invitation_id", "seat"),
        foreign_keys=[("invitation_id", "invitations", "id")],
        not_null={"userid", "accepted"},
    )
    db["invitation_seats"].create_index(["token_id"], unique=True)
    db["invitation_seats"].create_index(["userid"])
    db["seeks"].create(
        {
            "game": str,
            "userid": str,
            "options": str,
            "server_options": str,
            "rating_low": int,
            "rating_high": int,
            "created_at": str,
            "lapses_at": str,
        },
        pk=("game", "userid"),
        foreign_keys=[("userid", "users", "userid")],
        not_null={"options", "server_options", "created_at", "lapses_at"},
    )
    db["boards"].add_column("clock_initial", int)
    db["boards"].add_column("clock_increment", int)
    db["boards"].add_column("clock_cap", int)
    db["moves"].add_column("clock_charged", int)
    db["challenge_settings"].add_column("invitations", int, not_null_default=0)
    db["robots"].add_column("seek_after_hours", float)


@_core_step
def m014_several_reset_codes(db):
    """Several reset codes per account, each used once and for its own hour (issue 25.6):
    anyone may send `forgot U`, so a new code must leave those already mailed valid. The one
    row per account of password_resets moves here; a code made before m008 has no token."""
    db["reset_codes"].create(
        {
            "id": int,
            "userid": str,
            "code_digest": str,
            "created_at": str,
            "expires_at": str,
            "token_id": str,
        },
        pk="id",
        foreign_keys=[("userid", "users", "userid")],
        not_null={"userid", "code_digest", "created_at", "expires_at"},
    )
    db["reset_codes"].create_index(["token_id"], unique=True)
    db["reset_codes"].create_index(["userid", "expires_at"])
    db.execute(
        "INSERT INTO reset_codes (userid, code_digest, created_at, expires_at, token_id) "
        "SELECT userid, code_digest, created_at, expires_at, token_id FROM password_resets"
    )
    db["password_resets"].drop()


@_core_step
def m015_held_mails(db):
    """Mail held back by the cap on unconfirmed addresses (issue 25.4), one row a mail until
    the player is told in the next mail that reaches them; `pbm status` counts them."""
    db["held_mails"].create(
        {"id": int, "userid": str, "address": str, "kind": str, "at": str},
        pk="id",
        foreign_keys=[("userid", "users", "userid")],
        not_null={"userid", "address", "kind", "at"},
    )
    db["held_mails"].create_index(["userid", "address"])


@_core_step
def m016_reply_tokens_by_message_id(db):
    """A reply that reaches the plain address finds its board by the Message-ID it answers
    (docs/spec/server.md §11.3): each board token keeps the Message-ID of the mail that
    carried it."""
    db["reply_tokens"].add_column("message_id", str)
    db["reply_tokens"].create_index(["message_id"])


@_core_step
def m017_tournaments(db):
    """Round-robin tournaments (docs/spec/server.md §11.9): each tournament and its terms,
    who joined (and their division once it starts, and whether they left), the boards of
    each division with their seats as paired, and when each division's digest last went
    out. The standings are not stored: they derive from the boards' results."""
    db["tournaments"].create(
        {
            "id": int,
            "name": str,
            "game": str,
            "options": str,
            "server_options": str,
            "largest": int,
            "start_at": str,
            "start_players": int,
            "creator": str,
            "status": str,
            "created_at": str,
            "started_at": str,
            "ended_at": str,
        },
        pk="id",
        not_null={"name", "game", "options", "server_options", "largest", "status", "created_at"},
    )
    db["tournaments"].create_index(["name"], unique=True)
    db["tournaments"].create_index(["status", "start_at"])
    db["tournament_entrants"].create(
        {
            "tournament_id": int,
            "userid": str,
            "joined_at": str,
            "division": int,
            "rating": int,
            "status": str,
            "left_at": str,
        },
        pk=("tournament_id", "userid"),
        foreign_keys=[("tournament_id", "tournaments", "id"), ("userid", "users", "userid")],
        not_null={"joined_at", "status"},
    )
    db["tournament_entrants"].create_index(["userid"])
    db["tournament_boards"].create(
        {
            "board_id": int,
            "tournament_id": int,
            "division": int,
            "white": str,
            "black": str,
            "reported_at": str,
        },
        pk="board_id",
        foreign_keys=[("board_id", "boards", "id"), ("tournament_id", "tournaments", "id")],
        not_null={"tournament_id", "division", "white", "black"},
    )
    db["tournament_boards"].create_index(["tournament_id", "division"])
    db["tournament_divisions"].create(
        {"tournament_id": int, "division": int, "digest_at": str},
        pk=("tournament_id", "division"),
        foreign_keys=[("tournament_id", "tournaments", "id")],
    )
