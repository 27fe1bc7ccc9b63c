"""Account commands: signup, add, change password, change address, signoff."""

import re

from ..boards import boards_forfeited_on_departure
from ..clock import stamp
from ..grammar import RESERVED_WORDS, command, is_valid_userid
from ..headers import HeaderError, checked_address

MAX_ADDRESSES = 5
PASSWORD_RE = re.compile(r"[!-~]{4,64}")


def check_password(ctx, password: str):
    if not PASSWORD_RE.fullmatch(password) or password.startswith("-") or password == "**":
        ctx.abort('Passwords must be 4 to 64 characters without spaces and must not start with "-"')


def parse_addresses(ctx, tokens) -> list[str]:
    """Bare addr-specs only (no names, no lists); none given means the sender's."""
    if not tokens:
        if not ctx.request.sender:
            ctx.abort("Give at least one address: nobody sent this command by mail")
        tokens = [ctx.request.sender]
    addresses: list[str] = []
    for token in tokens:
        try:
            address = checked_address(token)
        except HeaderError as error:
            ctx.abort(str(error))
        local, _, domain = address.rpartition("@")
        address = f"{local}@{domain.lower()}"
        if address.lower() not in {a.lower() for a in addresses}:
            addresses.append(address)
    if len(addresses) > MAX_ADDRESSES:
        ctx.abort(f"At most {MAX_ADDRESSES} addresses per user")
    return addresses


def _union(*groups) -> list[str]:
    seen, result = set(), []
    for group in groups:
        for address in group:
            if address.lower() not in seen:
                seen.add(address.lower())
                result.append(address)
    return result


@command(
    "signup",
    "global",
    "signup userid password [address...]",
    min_args=2,
    secrets=(1,),
    new_secrets=(1,),
)
def signup(ctx):
    """Creates an account; without an address, the sender's address is used."""
    userid, password = ctx.args[0].lower(), ctx.args[1]
    if userid in RESERVED_WORDS or userid in ctx.server.games:
        ctx.abort(f'"{userid}" is a reserved word and cannot be a userid')
    if not is_valid_userid(userid):
        ctx.abort(
            'Userids must be 2 to 16 characters: a letter, then letters, digits, "_", "." or "-"'
        )
    if ctx.store.users.get(userid) is not None:
        ctx.abort(f'Userid "{userid}" is already taken')
    check_password(ctx, password)
    addresses = parse_addresses(ctx, ctx.args[2:])
    ctx.check_daily_limit("signup", "signups_per_day", "signups")
    ctx.store.users.create(
        userid,
        ctx.password_hash(password),
        addresses,
        stamp(ctx.now),
        html_mail=ctx.config.get("mail.html") == "on",
    )
    if ctx.sender_key:
        ctx.store.limits.add_address_proof(userid, ctx.sender_key, stamp(ctx.now))
    _operator_vouches(ctx, userid, addresses)
    body = ctx.render("mail/account_created.txt", userid=userid, addresses=addresses)
    subject = f"Account {userid} created"
    answered = ctx.sender_is_among(addresses)
    ctx.mail_user(userid, subject, body, "account", addresses, reply=answered)
    if not answered:
        ctx.reply(subject, body, kind="account")


@command("add", "global", "add userid password address...", min_args=3, secrets=(1,), auth=(0, 1))
def add(ctx):
    """Adds addresses to an account (at most 5 in all)."""
    old = ctx.store.users.addresses(ctx.userid)
    new = _union(old, parse_addresses(ctx, ctx.args[2:]))
    if len(new) > MAX_ADDRESSES:
        ctx.abort(f"At most {MAX_ADDRESSES} addresses per user")
    ctx.store.users.set_addresses(ctx.userid, new)
    _account_changed(ctx, old, new)


@command(
    "change address",
    "global",
    "change address userid password [address...]",
    min_args=2,
    secrets=(1,),
    auth=(0, 1),
)
def change_address(ctx):
    """Replaces an account's addresses; none given means the sender's."""
    old = ctx.store.users.addresses(ctx.userid)
    new = parse_addresses(ctx, ctx.args[2:])
    ctx.store.users.set_addresses(ctx.userid, new)
    _account_changed(ctx, old, new)


def _operator_vouches(ctx, userid, addresses):
    """Addresses the operator gives an account at the terminal are confirmed: a mail from
    each would prove no more than the operator's word."""
    if ctx.request.operator:
        for address in addresses:
            ctx.store.limits.add_address_proof(userid, address, stamp(ctx.now))


def _account_changed(ctx, old, new):
    _operator_vouches(ctx, ctx.userid, new)
    lowered_old = {a.lower() for a in old}
    lowered_new = {a.lower() for a in new}
    body = ctx.render(
        "mail/account_changed.txt",
        userid=ctx.userid,
        addresses=new,
        added=[a for a in new if a.lower() not in lowered_old],
        removed=[a for a in old if a.lower() not in lowered_new],
    )
    recipients = _union(old, new)
    ctx.mail_user(ctx.userid, f"Account {ctx.userid} changed", body, "account", recipients)


@command(
    "change password",
    "global",
    "change password userid current new",
    min_args=3,
    max_args=3,
    secrets=(1, 2),
    auth=(0, 1),
    new_secrets=(2,),
)
def change_password(ctx):
    """Replaces an account's password."""
    check_password(ctx, ctx.args[2])
    ctx.store.users.set_password_hash(ctx.userid, ctx.password_hash(ctx.args[2]))
    body = ctx.render(
        "mail/password_changed.txt",
        userid=ctx.userid,
        operator=ctx.config.get("server.operator_address"),
    )
    ctx.mail_user(ctx.userid, f"Password changed for {ctx.userid}", body, "account")


@command(
    "signoff",
    "global",
    "signoff userid password",
    aliases=("delete",),
    min_args=2,
    max_args=2,
    secrets=(1,),
    auth=(0, 1),
)
def signoff(ctx):
    """Deletes the account; its active boards are forfeited at once."""
    userid = ctx.userid
    addresses = ctx.store.users.addresses(userid)
    forfeited = []
    for row in ctx.store.boards.active_of_user(userid):
        game = ctx.server.game_for_board(row.game)
        forfeited.append(f"{game.display_name} board {row.number}")
        for board in boards_forfeited_on_departure(ctx, row, userid):
            ctx.announce(board)
    ctx.store.users.delete(userid, stamp(ctx.now))
    ctx.store.limits.audit(stamp(ctx.now), "delete", userid=userid, detail={"boards": forfeited})
    body = ctx.render("mail/account_deleted.txt", userid=userid, forfeited=forfeited)
    ctx.mail_user(userid, f"Account {userid} deleted", body, "account", addresses)
