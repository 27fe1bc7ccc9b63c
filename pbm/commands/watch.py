"""Watching and talking: chat, subscribe, unsubscribe, notify, message, broadcast
(docs/spec/server.md §3.2, §3.8)."""

from datetime import timedelta

from ..boards import Board
from ..clock import stamp
from ..grammar import command, parse_board
from .boardcommand import board_command

MAX_MESSAGE_RECIPIENTS = 20


@board_command("chat")
def chat(ctx):
    """Sends the mail's body to everyone on a board, finished or not; it is not stored."""
    board = ctx.board
    text = ctx.request.body.strip("\n")
    if not text.strip():
        ctx.abort("Nothing to send: the message body is empty", board)
    chat_subject = f"{ctx.game.display_name} chat {board.number} {ctx.userid}"
    body = ctx.render("mail/chat.txt", board=board, userid=ctx.userid, text=text)
    recipients = []
    # In the board's thread, without a reply token: a reply to a chat is likely a chat,
    # which a token would read as a move.
    for userid in board.audience():
        addresses = ctx.store.users.addresses(userid)
        subject = ctx.thread_subject(board, userid, chat_subject)
        ctx.mail_user(userid, subject, body, "chat", addresses, board=board, token=False)
        recipients.extend(addresses)
    if not ctx.sender_is_among(recipients):
        subject = ctx.thread_subject(board, ctx.userid, chat_subject)
        ctx.reply(subject, body, kind="chat", board=board, token=False)


def _board_first(args) -> bool:
    return len(args) == 3 and parse_board(args[0]) is not None


def _watch_target(ctx):
    """(board numbers or None for `all`) from either `B U P` or `U P B...|all`."""
    args = ctx.args
    if _board_first(args):
        return [parse_board(args[0])[0]]
    if len(args) == 3 and args[2].lower() == "all":
        return None
    numbers = []
    for token in args[2:]:
        parsed = parse_board(token)
        if parsed is None:
            ctx.syntax_error()
        numbers.append(parsed[0])
    return numbers


def _watch_fields():
    return dict(
        min_args=3,
        secrets=lambda args: (2,) if _board_first(args) else (1,),
        auth=lambda args: (1, 2) if _board_first(args) else (0, 1),
    )


@command(
    "subscribe",
    "game",
    "{game} subscribe board userid password | {game} subscribe userid password board...|all",
    min_abbrev=3,
    **_watch_fields(),
)
def subscribe(ctx):
    """Receive every mail of boards you do not play on; all also covers future boards."""
    game = ctx.game
    numbers = _watch_target(ctx)
    if numbers is None:
        ctx.store.watching.set_subscribe_all(game.name, ctx.userid, True)
        rows = [r for r in ctx.store.boards.of_game(game.name) if r.status == "active"]
        rows = [r for r in rows if ctx.userid not in ctx.store.boards.seat_userids(r.id)]
        numbers = [r.number for r in rows]
    subscribed, refused = [], []
    cap = ctx.config.number("limits.max_show_mails")
    for number in numbers:
        row = ctx.store.boards.get(game.name, number)
        if row is None:
            refused.append(f"{number} (not found)")
            continue
        board = Board(ctx, row)
        if not board.active:
            refused.append(f"{number} (game has ended)")
        elif ctx.userid in board.position.holders:
            refused.append(f"{number} (you are playing)")
        else:
            ctx.store.watching.subscribe(board.id, ctx.userid)
            subscribed.append(str(number))
            if len(subscribed) <= cap:
                title = f"Subscription Summary of {board.title_name}"
                body, html = ctx.board_mail(
                    board, ctx.userid, ctx.board_context(board, None, title=title)
                )
                ctx.mail_user(ctx.userid, ctx.board_subject(board), body, "watch", html=html)
    _subscription_summary(ctx, subscribed, refused, "Subscribed", "Not subscribed")


@command(
    "unsubscribe",
    "game",
    "{game} unsubscribe board userid password | {game} unsubscribe userid password board...|all",
    min_abbrev=5,
    **_watch_fields(),
)
def unsubscribe(ctx):
    """Stops the mails of boards you subscribed to; all also ends subscribing to new boards."""
    game = ctx.game
    numbers = _watch_target(ctx)
    if numbers is None:
        ctx.store.watching.set_subscribe_all(game.name, ctx.userid, False)
        numbers = [r.number for r in ctx.store.watching.subscribed_boards(game.name, ctx.userid)]
    done, refused = [], []
    for number in numbers:
        row = ctx.store.boards.get(game.name, number)
        if row is None:
            refused.append(f"{number} (not found)")
        elif ctx.store.watching.unsubscribe(row.id, ctx.userid):
            done.append(str(number))
        else:
            refused.append(f"{number} (not subscribed)")
    _subscription_summary(ctx, done, refused, "Unsubscribed", "Not unsubscribed")


def _subscription_summary(ctx, done, refused, done_label, refused_label):
    body = ctx.render(
        "mail/subscription_summary.txt",
        game=ctx.game,
        done=done,
        refused=refused,
        done_label=done_label,
        refused_label=refused_label,
    )
    ctx.mail_user(ctx.userid, "Subscription summary", body, "watch")


@command(
    "notify",
    "game",
    "{game} notify userid password [board...]",
    min_args=2,
    secrets=(1,),
    auth=(0, 1),
)
def notify(ctx):
    """Toggles a short mail when any board of the game ends, or when the named boards end."""
    game = ctx.game
    if len(ctx.args) == 2:
        on = ctx.store.watching.toggle_game_notify(game.name, ctx.userid)
        word = "started" if on else "cancelled"
        text = (
            f"You will get a short mail whenever a {game.display_name} board ends."
            if on
            else f"You will no longer hear when {game.display_name} boards end."
        )
        ctx.mail_user(
            ctx.userid,
            f"{game.display_name} notification {word}",
            ctx.render("mail/notice.txt", text=text),
            "watch",
        )
        return
    now_on, now_off, refused = [], [], []
    for token in ctx.args[2:]:
        parsed = parse_board(token)
        if parsed is None:
            ctx.syntax_error()
        row = ctx.store.boards.get(game.name, parsed[0])
        if row is None:
            refused.append(f"{parsed[0]} (not found)")
        elif ctx.store.watching.toggle_board_notify(row.id, ctx.userid):
            now_on.append(str(parsed[0]))
        else:
            now_off.append(str(parsed[0]))
    body = ctx.render("mail/notify_summary.txt", now_on=now_on, now_off=now_off, refused=refused)
    ctx.mail_user(ctx.userid, f"{game.display_name} Notify summary", body, "watch")


@command(
    "message", "global", "message userid password userid...", min_args=3, secrets=(1,), auth=(0, 1)
)
def message(ctx):
    """Sends the mail's body privately to other users; addresses are never shown."""
    recipients = list(dict.fromkeys(u.lower() for u in ctx.args[2:]))
    if len(recipients) > MAX_MESSAGE_RECIPIENTS:
        ctx.abort(f"At most {MAX_MESSAGE_RECIPIENTS} users can be sent one message")
    text = ctx.request.body.strip("\n")
    if not text.strip():
        ctx.abort("The message is empty")
    for userid in recipients:
        ctx.require_user(userid)
    body = ctx.render("mail/message.txt", sender=ctx.userid, text=text, broadcast=False)
    for userid in recipients:
        ctx.mail_user(userid, f"Message from {ctx.userid}", body, "message")
    ctx.reply(
        "Message sent",
        ctx.render("mail/notice.txt", text=f"Your message went to {' '.join(recipients)}."),
    )


@command(
    "broadcast",
    "global",
    "broadcast userid password",
    min_args=2,
    max_args=2,
    secrets=(1,),
    auth=(0, 1),
)
def broadcast(ctx):
    """Sends the mail's body to the server's announcement list, once a day at most."""
    address = ctx.config.get("broadcast.address")
    if not address:
        ctx.abort("Broadcasts are not enabled on this server")
    text = ctx.request.body.strip("\n")
    if not text.strip():
        ctx.abort("The message is empty")
    since = stamp(ctx.now - timedelta(days=1))
    if ctx.store.limits.audit_count_since("broadcast", ctx.userid, since):
        ctx.abort("Only one broadcast per day is allowed")
    ctx.store.limits.audit(stamp(ctx.now), "broadcast", userid=ctx.userid)
    body = ctx.render("mail/message.txt", sender=ctx.userid, text=text, broadcast=True)
    ctx.mail_address(address, f"Broadcast from {ctx.userid} via PBM Server", body, "broadcast")
    ctx.reply(
        "Message sent", ctx.render("mail/notice.txt", text=f"Your broadcast went to {address}.")
    )
