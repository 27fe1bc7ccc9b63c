"""The mails of one command (docs/spec/server.md §5): direct answers to whoever sent it,
mails to users and to configured addresses, and board mails to a board's audience, each in
its place in the board's thread (subjects, References, List headers) and, where it asks a
player to act, with a Reply-To whose token the issuer it is handed makes.

A command's Context is a Correspondence: the mails a command writes go through these
methods, and the dispatcher queues them (Server.queue_mails) in the command's transaction.
"""

import logging
from collections.abc import Callable

from .clock import DAY, stamp
from .htmlmail import board_part
from .message import Mail, new_message_id
from .replies import reply_address
from .summary import board_context, watch_lines
from .unsubscribe import list_headers, list_id

log = logging.getLogger("pbm.dispatch")
# Mail a user did not ask for, capped per day so nobody can be mail-bombed through us.
CAPPED_KINDS = ("message", "chat", "new_board", "invitation")


def thread_subject_of(title: str, userids) -> str:
    """`<Game> Board <N>: <U1> vs <U2>`, the seats as the board started
    (docs/spec/server.md §5.3)."""
    return f"{title}: {' vs '.join(userids)}"


class Correspondence:
    """The mails of one command, and how each is addressed, threaded and drawn. It is
    handed the server's read-only services (templates, timeout defaults, rating lines), the
    store, the sender the answers go to, the moment, and `issue_token`, which makes the
    reply token of one recipient of one mail about a running board."""

    def __init__(self, server, store, config, sender: str | None, moment, issue_token: Callable):
        self.server = server
        self.store = store
        self.config = config
        self.sender = sender
        self.now = moment
        self.issue_token = issue_token
        self.mails: list[Mail] = []
        self.userid: str | None = None  # the authenticated user, for the tokens of answers
        # Boards drawn, as text and as pictures: each once, however many recipients and
        # commands of the server share them (boardcache.Drawings).
        self.drawn = server.drawn

    def render(self, template: str, **values) -> str:
        return self.server.render(template, **values)

    def reply(
        self,
        subject: str,
        body: str,
        kind: str = "reply",
        board=None,
        token=True,
        html=None,
        attachments=(),
    ):
        """A direct answer to whoever sent the command; about `board`, it joins the board's
        thread and, with `token`, can be answered by a reply (docs/spec/server.md §11.3)."""
        to = [self.sender] if self.sender else []
        headers = {}
        if to:
            headers = (self.reply_headers if token else self.thread_headers)(board, self.userid)
        self.mails.append(
            Mail(
                kind,
                subject,
                body,
                to,
                reply=True,
                to_sender=True,
                headers=headers,
                html=html,
                attachments=tuple(attachments),
            )
        )

    def mail_user(
        self,
        userid: str,
        subject: str,
        body: str,
        kind: str,
        addresses=None,
        reply=False,
        wrap=True,
        board=None,
        token=True,
        headers=None,
        html=None,
        stream=None,
    ):
        """A mail to a user's addresses; about `board`, it joins the board's thread and, on
        one they play on and with `token`, can be answered by a reply (docs/spec/server.md
        §11.3). A mail of a `stream` the user did not ask for directly (nag, digest,
        subscription, notify) carries List-Unsubscribe for it (docs/spec/server.md
        §5.10)."""
        if self.store.robots.is_robot(userid):
            return  # a robot reads the board, not mail (docs/spec/server.md §11.7)
        addresses = addresses if addresses is not None else self.store.users.addresses(userid)
        if kind in CAPPED_KINDS and self._mail_cap_reached(userid):
            log.warning("mail cap: %s mail to %s not sent", kind, userid)
            return
        if addresses:
            self.mails.append(
                Mail(
                    kind,
                    subject,
                    body,
                    list(addresses),
                    userid=userid,
                    reply=reply,
                    wrap=wrap,
                    html=html,
                    headers={
                        **(self.reply_headers if token else self.thread_headers)(board, userid),
                        **(headers or {}),
                        **(self._unsubscribe_headers(userid, stream, board) if stream else {}),
                    },
                )
            )

    def thread_headers(self, board, userid) -> dict:
        """References to the board's thread for this recipient, and its List-Id."""
        if board is None or board.id is None:
            return {}
        return {"References": self.thread_root(board, userid), **list_id(self.config, board)}

    def _unsubscribe_headers(self, userid, stream, board) -> dict:
        if board is None:
            return list_headers(self, userid, stream)
        return list_headers(self, userid, stream, board.game.name, board.number)

    def reply_headers(self, board, userid) -> dict:
        """References to the board's thread for this recipient; and Reply-To with a fresh
        token, for a player still playing on a running board."""
        headers = self.thread_headers(board, userid)
        if not headers or not self.takes_reply(board, userid):
            return headers
        # The mail's Message-ID is chosen here, so that the token is written with it: a
        # reply that lost the Reply-To finds its board by it (docs/spec/server.md §11.3).
        message_id = new_message_id(self.config.server_domain)
        token = self.issue_token(board, userid, self.now, message_id)
        headers["Reply-To"] = reply_address(self.config, token)
        headers["Message-ID"] = message_id
        return headers

    @staticmethod
    def takes_reply(board, userid) -> bool:
        """Whether a mail about `board` to `userid` carries a reply token: to a player still
        playing on the running board (docs/spec/server.md §11.3)."""
        return userid is not None and board.active and bool(board.playing_seats_of(userid))

    def _mail_cap_reached(self, userid: str) -> bool:
        limit = self.config.number("limits.mails_per_user_per_day")
        since = stamp(self.now - DAY)
        queued_now = sum(1 for m in self.mails if m.userid == userid and m.kind in CAPPED_KINDS)
        return self.store.outbox.count_to_user(userid, CAPPED_KINDS, since) + queued_now >= limit

    def mail_address(self, address: str, subject: str, body: str, kind: str):
        """A mail to an address of the configuration (broadcast list, operator)."""
        self.mails.append(Mail(kind, subject, body, [address]))

    def sender_is_among(self, addresses) -> bool:
        sender = (self.sender or "").lower()
        return bool(sender) and sender in {a.lower() for a in addresses}

    def board_context(self, board, viewer, **kw):
        if kw.get("title") is None:
            kw["title"] = f"Summary of {board.title_name}"
        return board_context(self, board, viewer, **kw)

    def board_mail(self, board, userid, context: dict, intro: str = ""):
        """(text, HTML part or None) of a board mail to `userid` from its board_context: the
        HTML part for a user who chose it (docs/spec/server.md §11.5), none for a spectator
        without an account. `intro` goes before the board in the HTML part (a nag's text)."""
        text = self.render("mail/board.txt", **context)
        if userid is None or not self.store.users.html_mail(userid):
            return text, None
        return text, board_part(self, board, context, intro)

    def board_subject(self, board, userid=None, new=False) -> str:
        """The subject of a board mail to `userid` (docs/spec/server.md §5.3): the same for
        the whole game, so a mail client threads it; pbmserv's, naming the player on move
        and ending in ` **` after a comment, for a user who chose it."""
        if not self._wants_pbmserv_subjects(userid):
            return self._thread_subject(board)
        on_move = board.on_move_userid() if board.active else None
        subject = ("New " if new else "") + board.title_name + (f" {on_move}" if on_move else "")
        return subject + (" **" if board.row.comment_text else "")

    def thread_subject(self, board, userid, pbmserv_subject: str) -> str:
        """The subject of another mail about a board (a nag, a chat): the board's own, so
        that it joins the board's thread in Gmail too; pbmserv's for a user who chose it."""
        if self._wants_pbmserv_subjects(userid):
            return pbmserv_subject
        return self._thread_subject(board)

    def _wants_pbmserv_subjects(self, userid) -> bool:
        return userid is not None and self.store.users.pbmserv_subjects(userid)

    @staticmethod
    def _thread_subject(board) -> str:
        return thread_subject_of(board.title_name, board.seat_userids)

    def thread_root(self, board, userid) -> str:
        """The Message-ID every mail about a board to one recipient refers to: one thread
        per board and recipient in any mail client that reads References."""
        return f"<{board.game.name}.{board.number}.{userid or 'spectator'}@{self.config.server_domain}>"

    def announce(
        self,
        board,
        *,
        new=False,
        title=None,
        spectator_to_sender=False,
        kind="board",
        others_only=False,
    ):
        """Board mails to the audience, each in their own perspective, with this run's
        events (docs/spec/server.md §3.5.2); and the notifiers' mails when the game ended in this
        run, and the winners' announcement when it was a tournament's last board
        (docs/spec/server.md §11.9). A board removed in this run gets the notice of its
        removal instead. With
        `others_only`, the sender's user (answered otherwise) gets none."""
        if board.removed_event is not None:
            self._announce_removal(board)
            return
        recipients = []
        watch = watch_lines(self, board)  # subscribers and notifiers: the same for everyone
        shared = {}  # what every player's board mail shows alike (summary.board_context)
        for userid in board.audience():
            if others_only and userid == self.userid:
                continue
            if self.store.robots.is_robot(userid):
                continue  # a robot reads the board, not mail: nothing to build for it
            body, html = self.board_mail(
                board,
                userid,
                self.board_context(
                    board,
                    userid,
                    events=board.events,
                    title=title,
                    next_steps=True,
                    watch=watch,
                    shared=shared,
                ),
            )
            addresses = self.store.users.addresses(userid)
            # The sender's own board mail answers their command: it goes In-Reply-To it.
            answers_sender = self.sender_is_among(addresses)
            # A player's own board mails and the answers to commands carry no
            # List-Unsubscribe (docs/spec/server.md §5.10): once the board is over, one who
            # resigned is one of its players again, not a subscriber.
            own = board.playing_seats_of(userid) or (
                not board.active and userid in board.position.holders
            )
            self.mail_user(
                userid,
                self.board_subject(board, userid, new),
                body,
                kind,
                addresses,
                board=board,
                reply=answers_sender,
                html=html,
                stream=None if own or answers_sender else "subscription",
            )
            recipients.extend(addresses)
        if spectator_to_sender and not self.sender_is_among(recipients):
            body = self.render(
                "mail/board.txt",
                **self.board_context(board, None, events=board.events, title=title, watch=watch),
            )
            self.reply(self.board_subject(board, None, new), body, kind="board")
        if board.finished_now:
            title = f"Notification of {board.title_name}"
            for userid in board.notifiers():
                context = self.board_context(board, None, title=title, watch=watch)
                context["comments"] = []
                body, html = self.board_mail(board, userid, context)
                self.mail_user(
                    userid, title, body, "notify", board=board, html=html, stream="notify"
                )
            if board.tournament is not None:
                # deferred: only the end of a tournament's board needs it
                from .tournamentplay import board_ended

                board_ended(self, board)

    def _announce_removal(self, board):
        game = board.game
        body = self.render(
            "mail/board_removed.txt", game=game, number=board.number, event=board.removed_event
        )
        subject = f"{game.display_name} board {board.number} has been removed"
        for recipient in board.removed_audience:
            self.mail_user(recipient, subject, body, "board")

    def queued_move_failed(self, board, userid, text, error):
        """Tell the queuer their queued move could not be played (docs/spec/server.md §3.5.4 step
        3)."""
        message = (
            f'Queued move "{text}" was found but is illegal: {error}\n\n'
            "It has been discarded and nothing was played for you: it is your move."
        )
        answerable = self.takes_reply(board, userid)
        body = self.render(
            "mail/error.txt",
            message=message,
            summary=self.render("mail/board.txt", **self.board_context(board, userid)),
            quoted=[],
            quote_cut=False,
            answerable=answerable,
        )
        subject = f"Queued move not played ({board.title_name})"
        self.mail_user(userid, subject, body, "error", board=board, token=answerable)
