"""The command context (docs/spec/server.md §3, §5.7): what a command is written against.

A command's handler gets a Context: the request (its passwords masked), the parsed words,
the store, and the run of the command as its declaration says (operator check, the checks
before the password, the password or the grant of a reply token, then the handler). It
refuses with abort() (every write undone) or answer_error() (writes kept), authenticates,
loads the board in hand, and sends its mail through the Correspondence it is.
"""

from dataclasses import replace

from .answers import capped_quote
from .boards import Board
from .clock import DAY, HOUR, now, parse_stamp, show_time, stamp
from .correspondence import Correspondence
from .grammar import GrammarError, mask_unparsed, normalize, with_suggestion
from .replies import REPLY_WORDS, Grant, InvitationGrant, ResetGrant, reply_address
from .request import Request
from .security import (
    hash_password,
    login_lock,
    mask_secrets,
    needs_rehash,
    pasted_passwords_of,
    verify_password,
)

QUOTED_BODY_LINES = 20


class CommandError(Exception):
    """A refusal: the message goes to the sender, with the board's summary if given."""

    def __init__(self, message: str, board: Board | None = None):
        super().__init__(message)
        self.message = message
        self.board = board


def operator_only_message(spec) -> str:
    return f"The {spec.word} command is only available to the operator"


def secrets_to_mask(parsed, store) -> list[str]:
    """The command's passwords, and the word in its userid's place when that names no
    user: a player who swapped userid and password put the password there."""
    if parsed is None:
        return []
    secrets = parsed.secrets
    positions = parsed.spec.auth_positions(parsed.args)
    if positions is not None and max(positions) < len(parsed.args):
        userid, password = parsed.args[positions[0]], parsed.args[positions[1]]
        if password in secrets and store.users.password_hash(userid.lower()) is None:
            secrets = secrets + [userid]
    return secrets


def credentials_swapped(parsed, store) -> bool:
    """The word in the userid's place names no user and the one in the password's does."""
    positions = parsed.spec.auth_positions(parsed.args) if parsed is not None else None
    if positions is None or max(positions) >= len(parsed.args):
        return False
    userid, password = parsed.args[positions[0]], parsed.args[positions[1]]
    return (
        store.users.password_hash(userid.lower()) is None
        and store.users.password_hash(password.lower()) is not None
    )


def masked_request(request: Request, secrets) -> Request:
    if not secrets:
        return request
    return replace(
        request,
        body=mask_secrets(request.body, secrets),
        body_lines=[mask_secrets(line, secrets) for line in request.body_lines],
    )


class Context(Correspondence):
    """What a command function works with: the request, the store, the board in hand, and
    the mails it sends (Correspondence)."""

    def __init__(self, server, request: Request, parsed, checks: dict, grant=None):
        super().__init__(
            server, server.store, server.config, request.sender, now(), server.issue_token
        )
        self.grant = grant  # a reply token's: stands for the password of its user and board
        self.parsed = parsed
        self.game = parsed.game if parsed else None
        self.checks = checks
        # Passwords, the command's own and those of commands pasted into the mail, are
        # masked out of the body before any command stores or mails it.
        self.pasted = pasted_passwords_of(request, self.store)
        self.secrets = secrets_to_mask(parsed, self.store) + self.pasted
        self.request = masked_request(request, self.secrets)
        # As it came: the lines of a `multiple` body are commands, each masking its own.
        self.received = request
        self.refused = False
        self.board: Board | None = None  # the board loaded before the password (before_auth)
        self.invitation = None  # or the invitation it answers (docs/spec/server.md §11.1)
        self.failed_logins: list[str] = []
        self.proven_userids: list[str] = []  # accounts whose password came from the sender
        self.sender_key = (request.sender or "").lower()

    @property
    def args(self) -> list[str]:
        return self.parsed.args

    @property
    def spec(self):
        return self.parsed.spec

    def run(self):
        """The command as its declaration says: operator check, the checks that come before
        the password, the password, then the handler; an abort rolls all its writes back."""
        try:
            with self.store.savepoint():
                if self.spec.operator_only and not self.request.operator:
                    self.abort(operator_only_message(self.spec))
                if isinstance(self.grant, Grant):
                    # The reply came from the token's user: its refusals can be answered.
                    self.userid = self.grant.userid
                    self._check_grant_is_current()
                if isinstance(self.grant, ResetGrant) and self.spec.word != "reset":
                    self.abort("This reply address is not valid for this command")
                if isinstance(self.grant, InvitationGrant) and self.spec.word not in (
                    "accept",
                    "decline",
                ):
                    self.abort("This reply address is not valid for this command")
                if self.spec.before_auth is not None:
                    self.spec.before_auth(self)
                pair = self.parsed.auth_pair()
                if pair is not None:
                    self.authenticate(*pair)
                self.spec.handler(self)
        except CommandError as error:
            self.answer_error(error.message, board=error.board)
        # Failed logins outlive the refusal's rollback: they are what slows guessing down.
        for userid in self.failed_logins:
            self.store.limits.add_auth_failure(userid, self.sender_key, stamp(self.now))
            self._tell_owner_of_guessing(userid)
        # So do right passwords and valid reply tokens: the origin is confirmed for that
        # account.
        for userid in self.proven_userids:
            self.store.limits.add_address_proof(userid, self.sender_key, stamp(self.now))

    def _tell_owner_of_guessing(self, userid: str):
        """Once a day at most, mail the owner that their account is locked to strangers."""
        limit = self.config.number("limits.failed_logins_per_account_per_hour")
        failures = self.store.limits.auth_failures_of_user(userid, stamp(self.now - HOUR))
        if len(failures) <= limit or self.store.users.password_hash(userid) is None:
            return
        if self.store.limits.limit_reached_at("lock_notice", userid, stamp(self.now - DAY), 1):
            return
        self.store.limits.add_rate_event("lock_notice", userid, stamp(self.now))
        again = show_time(parse_stamp(failures[-limit - 1]) + HOUR)
        body = self.render(
            "mail/account_locked.txt", userid=userid, failures=len(failures), again=again
        )
        self.mail_user(userid, f"Password guessing on {userid}", body, "account")

    def abort(self, message: str, board: Board | None = None):
        """Stop the command: every write it made is rolled back and the sender gets the
        error mail (docs/spec/server.md §5.7)."""
        raise CommandError(message, board)

    def syntax_error(self):
        self.abort(f'Syntax is "{self.spec.syntax_for(self.game)}"')

    def answer_error(self, message: str, board: Board | None = None, subject: str | None = None):
        """Answer the sender with an error mail (docs/spec/server.md §5.7) and return: the
        writes made so far are kept (a forfeit, a refusing player marked inactive)."""
        self.refused = True
        self._error_mail(message, board, self.secrets if self.parsed else None, self.game, subject)

    def answer_grammar_error(self, error: GrammarError):
        self.refused = True
        secrets = None
        if error.spec is not None:
            positions = error.spec.secret_positions(error.words)
            secrets = [error.words[i] for i in positions if i < len(error.words)]
        message = error.message
        advice = self._grammar_advice(error)
        if advice:
            message += "\n\n" + advice
        self._error_mail(message, None, secrets, error.game)

    def _grammar_advice(self, error: GrammarError) -> str:
        """What to send instead; for a game's command without the game, the games of the
        boards the named user plays (and which of them has the board number given)."""
        if not normalize(self.request.text) and any(
            line.strip() for line in self.request.body_lines
        ):
            return (
                "Your Subject line is empty: the command goes in the Subject, and the body "
                "is a comment for the other players. Send the mail again with the command "
                "as its Subject. Or, to play on a board, reply to your latest mail about it "
                "with just the move on the first line: a reply needs no Subject and no "
                "password."
            )
        spec = error.game_command
        positions = spec.auth_positions(error.words) if spec is not None else None
        if positions is None or positions[0] >= len(error.words):
            return error.advice
        userid = error.words[positions[0]].lower()
        boards = self.store.boards.active_of_user(userid)
        if not boards:
            return error.advice
        number = error.words[0]
        games = sorted({row.game for row in boards if str(row.number) == number}) or sorted(
            {row.game for row in boards}
        )
        shown = " ".join(mask_unparsed([spec.word, *error.words]))
        return (
            f'Put the game name first: "{games[0]} {shown}". '
            f"{userid} plays on boards of: {', '.join(sorted({r.game for r in boards}))}."
        )

    def _error_mail(self, message, board, secrets, game, subject=None):
        if message == "Invalid userid entered" and credentials_swapped(self.parsed, self.store):
            message += (
                f'\n\nThe userid comes before the password: "{self.spec.syntax_for(self.game)}".'
            )
        if board is None and isinstance(self.grant, Grant):
            board = self._granted_board()
        if subject is None:
            subject = self._error_subject(board, game)
        # A reply's command is its first line, already among the quoted body lines.
        subject_line = normalize(
            self.request.subject if self.request.is_reply else self.request.text
        )
        body_lines = self.request.body_lines[:QUOTED_BODY_LINES]
        if secrets is None:
            # Any word the quote hides may be a password pasted into the body as well.
            words = subject_line.split()
            subject_line = " ".join(mask_unparsed(words))
            hidden = [w for w in words[2:] if len(w) >= 4]
            if words:
                body_lines = [mask_secrets(line, hidden) for line in body_lines]
            else:
                # No Subject: the command, password and all, may be in the body.
                body_lines = [" ".join(mask_unparsed(line.split())) for line in body_lines]
            quoted = [f"Subject: {subject_line}"] + body_lines
        else:
            quoted = [
                mask_secrets(line, secrets) for line in [f"Subject: {subject_line}"] + body_lines
            ]
        quoted, quote_cut = capped_quote(quoted)
        summary = ""
        if board is not None:
            summary = self.render(
                "mail/board.txt",
                **self.board_context(board, self.userid, full_moves=True, timing=True),
            )
        # In the board's thread; to a player of the running board with a token for the
        # position as it is now, so that the error can be answered (docs/spec/server.md
        # §5.3, §11.3).
        answerable = board is not None and self.takes_reply(board, self.userid)
        self.reply(
            subject,
            self.render(
                "mail/error.txt",
                message=message,
                summary=summary,
                quoted=quoted,
                quote_cut=quote_cut,
                answerable=answerable,
            ),
            kind="error",
            board=board,
            token=answerable,
        )

    def _error_subject(self, board, game) -> str:
        """An error about a board, or answering its player's reply, keeps the board's
        subject and stays in its thread (docs/spec/server.md §5.3); others have their own."""
        if board is not None:
            return self.thread_subject(board, self.userid, f"{board.title_name} Error")
        return f"{game.display_name} error" if game is not None else "PBM error"

    def _granted_board(self) -> Board | None:
        """The board of the reply's token, where its game is installed."""
        row = self.store.boards.get(self.grant.game, self.grant.number)
        if row is None or self.grant.game not in self.server.games:
            return None
        return Board(self, row)

    def refuse_reply(self, message: str, player: Grant):
        """A reply refused before it ran (grants.Refused), from the token's own user: in
        the board's thread, and answerable while the board runs."""
        self.userid = player.userid
        self.grant = player
        self.answer_error(message, board=self._granted_board())

    def answer_lost_reply(self):
        """A reply to one of our mails that came to the plain address and matched none of
        them (a client that drops Reply-To, a forward): the boards its origin's players are
        on move on, each with its own reply address, and how to reply (docs/spec/server.md
        §11.3)."""
        self.refused = True
        lines = []
        for userid in self.store.users.with_address(self.sender_key):
            for row in self.store.boards.active_of_user(userid):
                if row.game not in self.server.games:
                    continue
                board = Board(self, row)
                if board.on_move_userid() != userid:
                    continue
                token = self.issue_token(board, userid, self.now)
                lines.append(
                    f"  {board.title_name} ({userid} to move): "
                    f"mailto:{reply_address(self.config, token)}"
                )
        self.reply(
            "PBM error",
            self.render(
                "mail/lost_reply.txt", boards=lines, address=self.config.get("server.address")
            ),
            kind="error",
            token=False,
        )

    def _check_grant_is_current(self):
        """A reply answers the board as it was mailed: after another move it is refused
        with the board as it is now, telling what happened since (docs/spec/server.md
        §11.3). Chat changes nothing and goes on."""
        if self.spec.word == "chat":
            return
        board = self.load_board(self.grant.number)
        mailed = self.grant.move_number
        if board.position.move_number == mailed:
            return
        if not self.request.sender:  # a robot's move, computed on a position since changed
            self.abort(board.guard_error(self.request.text, str(mailed)) or "", board)
        since = [ply for ply in board.plies if ply.ply >= mailed]
        played = "; ".join(_what_was_done(ply) for ply in since) or "a move was taken back"
        said = self.request.text
        not_done = (
            f'Your reply "{said}" was not carried out'
            if said.split()[0].lower() in REPLY_WORDS
            else f"Your move {said} was not played"
        )
        self.abort(
            f"Your reply answered the board mail sent for move #{mailed}, but the board has "
            f"moved on since: {played}. {not_done}. This mail shows the board as it is now: "
            "reply to it to play.",
            board,
        )

    def authenticate(self, userid: str, password: str):
        userid = userid.lower()
        if isinstance(self.grant, (Grant, InvitationGrant)):
            # The command was built from the token (replies.token_command), so it names the
            # token's own user and board; the check is kept against any other use.
            user = self.store.users.get(userid)
            if userid != self.grant.userid or user is None or user.status != "active":
                self.abort("This reply address is not valid for this command")
            self.userid = userid
            if self.sender_key:  # the token came to this address: it receives our mail
                self.proven_userids.append(userid)
            return user
        lock = login_lock(self.store, self.config, userid, self.sender_key, self.now)
        if lock is not None:
            again, whole_account = lock
            if whole_account:
                self.abort(
                    f"Too many failed password attempts for {userid} from addresses not "
                    f"registered to it; try again after {show_time(again)}, or send from "
                    "one of the account's own addresses"
                )
            self.abort(
                f"Too many failed password attempts for {userid}; try again after "
                f"{show_time(again)}"
            )
        user = self.store.users.get(userid)
        active = user is not None and user.status == "active"
        stored = user.password_hash if active else None
        verdict = self.checks.get((userid, password, stored))
        if verdict is None:
            verdict = verify_password(stored, password)
        if not active or not verdict:
            if self.sender_key:
                self.failed_logins.append(userid)
            self.abort("Invalid userid entered" if not active else "Invalid password entered")
        if needs_rehash(stored):
            self.store.users.set_password_hash(userid, hash_password(password))
        self.userid = userid
        if self.sender_key:
            self.proven_userids.append(userid)

    def first_notice_this_hour(self, kind: str) -> bool:
        """True, and recorded, when the origin got no notice of this kind in the last hour."""
        if self.store.limits.limit_reached_at(kind, self.sender_key, stamp(self.now - HOUR), 1):
            return False
        self.store.limits.add_rate_event(kind, self.sender_key, stamp(self.now))
        return True

    def check_daily_limit(self, kind: str, limit_key: str, what: str):
        """At most `limits.<limit_key>` events of a kind per sender in 24 hours."""
        if not self.sender_key:
            return
        limit = self.config.number(f"limits.{limit_key}")
        reached = self.store.limits.limit_reached_at(
            kind, self.sender_key, stamp(self.now - DAY), limit
        )
        if reached is not None:
            again = show_time(parse_stamp(reached) + DAY)
            self.abort(f"Too many {what} from {self.sender_key} today; try again after {again}")
        self.store.limits.add_rate_event(kind, self.sender_key, stamp(self.now))

    def password_hash(self, password: str) -> str:
        """The hash made before the transaction, or one made now."""
        return self.checks.get(("new", password)) or hash_password(password)

    def load_board(self, number: int) -> Board:
        row = self.store.boards.get(self.game.name, number)
        if row is None:
            self.abort(f"{self.game.display_name} board {number} not found")
        return Board(self, row)

    def require_user(self, userid: str):
        """A userid named without a password must exist."""
        user = self.store.users.get(userid.lower())
        if user is None or user.status != "active":
            self.abort(
                with_suggestion(
                    f'No such user "{userid}"', userid, self.store.users.active_userids()
                )
            )
        return user


PLY_DEEDS = {"pass": "passed", "swap": "swapped", "resign": "resigned", "forfeit": "forfeited"}


def _what_was_done(ply) -> str:
    """One ply of the log in the players' words: `bob played e7-c3`, `bob passed`."""
    deed = PLY_DEEDS.get(ply.kind, f"played {ply.text}")
    return f"{ply.userid} {deed}"
