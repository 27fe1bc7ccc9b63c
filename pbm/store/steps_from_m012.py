"""The core schema's steps from m012 on (migrations.py): bounces, invitations and seeks,
reset codes, held mails, reply tokens by Message-ID, tournaments. A new step goes at
the end of STEPS."""


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


def m016_reply_tokens_by_message_id(db):
    """A reply that reaches the plain address finds its board by the Message-ID it answers
    (docs/spec/server.md §11.3): each board token keeps the Message-ID of the mail that
    carried it."""
    db["reply_tokens"].add_column("message_id", str)
    db["reply_tokens"].create_index(["message_id"])


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


STEPS = [
    m012_bounces_and_unsubscribes,
    m013_invitations_seeks_and_clocks,
    m014_several_reset_codes,
    m015_held_mails,
    m016_reply_tokens_by_message_id,
    m017_tournaments,
]
