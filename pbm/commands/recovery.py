"""Password reset by mail (docs/spec/server.md §3.2.3): `forgot` mails a one-time code to the
account's own addresses, `reset` sets a new password with it, and so does a reply to that mail
whose first line is the new password (its reset token, replies.ResetGrant, stands for the code)."""

import hashlib
import hmac
import secrets
from datetime import timedelta

from ..clock import DAY, show_time, stamp
from ..grammar import command, is_valid_userid
from ..replies import ResetGrant, new_reset_token, reply_address
from ..security import login_lock
from .accounts import check_password

CODE_LIFETIME = timedelta(hours=1)
# No 0/O, 1/I/L: the code is copied by hand from a mail.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 12  # about 59 bits: a digest that leaks cannot be reversed within the hour


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def code_digest(userid: str, code: str) -> str:
    """What is stored of a code: the code itself is only ever in the mail to the owner."""
    return hashlib.sha256(f"{userid}\0{code.upper()}".encode()).hexdigest()


# A request never voids a code (anyone may send `forgot U`): at most this many are pending.
MAX_PENDING_CODES = 3


@command("forgot", "global", "forgot userid", min_args=1, max_args=1)
def forgot(ctx):
    """Mails a one-time password reset code to the account's registered addresses."""
    userid = ctx.args[0].lower()
    ctx.check_daily_limit("forgot", "reset_requests_per_day", "password reset requests")
    user = ctx.store.users.get(userid) if is_valid_userid(userid) else None
    # The sender hears the same whether or not the userid exists.
    if user is not None and user.status == "active" and _account_may_get_code(ctx, userid):
        code = new_code()
        expires = ctx.now + CODE_LIFETIME
        token_id, token = new_reset_token(ctx.config.secret_key, userid)
        ctx.store.users.add_reset_code(
            userid, code_digest(userid, code), stamp(ctx.now), stamp(expires), token_id
        )
        body = ctx.render(
            "mail/password_reset.txt", userid=userid, code=code, expires=show_time(expires)
        )
        ctx.mail_user(
            userid,
            f"Password reset for {userid}",
            body,
            "account",
            headers={"Reply-To": reply_address(ctx.config, token)},
        )
    ctx.reply(
        f"Password reset for {userid}",
        ctx.render(
            "mail/password_reset_asked.txt",
            userid=userid,
            window=ctx.config.number("limits.reset_mail_window_minutes"),
        ),
        kind="account",
    )


def _account_may_get_code(ctx, userid) -> bool:
    """At most one reset mail to an account per reset_mail_window_minutes, whoever asks, and
    MAX_PENDING_CODES codes pending: nobody can fill an owner's mailbox with them. Asked from
    other addresses than the account's own, at most reset_mails_per_account_per_day a day:
    a stranger cannot use up the mails the owner asks for."""
    window = timedelta(minutes=ctx.config.number("limits.reset_mail_window_minutes"))
    if ctx.store.limits.limit_reached_at("reset_mail", userid, stamp(ctx.now - window), 1):
        return False
    if len(ctx.store.users.reset_codes(userid, stamp(ctx.now))) >= MAX_PENDING_CODES:
        return False
    if not ctx.store.users.has_address(userid, ctx.request.sender):
        limit = ctx.config.number("limits.reset_mails_per_account_per_day")
        if ctx.store.limits.limit_reached_at(
            "reset_mail_asked_elsewhere", userid, stamp(ctx.now - DAY), limit
        ):
            return False
        ctx.store.limits.add_rate_event("reset_mail_asked_elsewhere", userid, stamp(ctx.now))
    ctx.store.limits.add_rate_event("reset_mail", userid, stamp(ctx.now))
    return True


@command(
    "reset",
    "global",
    "reset userid code newpassword",
    min_args=3,
    max_args=3,
    secrets=(1, 2),
)
def reset(ctx):
    """Sets a new password with the code a `forgot` mail gave, or by a reply to that mail."""
    userid, code, password = ctx.args[0].lower(), ctx.args[1], ctx.args[2]
    user = ctx.store.users.get(userid)
    active = user is not None and user.status == "active"
    codes = ctx.store.users.reset_codes(userid, stamp(ctx.now)) if active else []
    proof = _proof(ctx, userid, code, codes)
    # A valid reply to the reset mail proves the sender reads the owner's mail: no lock
    # stands in its way. Anything else meets the guessing limits first, uncounted.
    if ctx.grant is None or proof is None:
        lock = login_lock(ctx.store, ctx.config, userid, ctx.sender_key, ctx.now)
        if lock is not None:
            ctx.abort(
                f"Too many wrong reset codes or passwords for {userid}; try again after "
                f"{show_time(lock[0])}"
            )
    check_password(ctx, password)
    if proof is None:
        if ctx.sender_key:
            ctx.failed_logins.append(userid)
        what = "reset code" if ctx.grant is None else "reset reply"
        ctx.abort(
            f'Invalid or expired {what} for "{userid}" (it works once, for an hour, and a reply '
            f'only from the addresses the reset mail went to); send "forgot {userid}" for a new one'
        )
    ctx.store.users.drop_reset_codes(userid)
    ctx.store.users.set_password_hash(userid, ctx.password_hash(password))
    ctx.store.limits.audit(stamp(ctx.now), "password_reset", userid=userid)
    if ctx.grant is not None and ctx.sender_key:  # the reset mail reached this address
        ctx.proven_userids.append(userid)
    body = ctx.render(
        "mail/password_changed.txt",
        userid=userid,
        operator=ctx.config.get("server.operator_address"),
    )
    ctx.mail_user(userid, f"Password changed for {userid}", body, "account")
    if not ctx.store.users.has_address(userid, ctx.request.sender):
        ctx.reply(f"Password changed for {userid}", body, kind="account")


def _proof(ctx, userid, code, codes):
    """The pending code the command proves: the one whose code it gives; or, for a reply to
    a reset mail, that mail's own, its token valid and the reply from one of the addresses
    it went to. A board's reply token never gets here: the dispatcher builds a reset command
    only for a token whose id is among the reset codes."""
    grant = ctx.grant
    if grant is None:
        given = code_digest(userid, code)
        matches = [c for c in codes if hmac.compare_digest(c.code_digest, given)]
        return matches[0] if matches else None
    if not (
        isinstance(grant, ResetGrant)
        and grant.userid == userid
        and grant.mac_matched
        and ctx.store.users.has_address(userid, ctx.request.sender)
    ):
        return None
    return next((c for c in codes if c.token_id == grant.token_id), None)
