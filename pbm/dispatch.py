"""The one dispatcher: a request (mail, `multiple` line or command line) in, mails out.

Each request runs in one BEGIN IMMEDIATE transaction together with its inbox key and
every mail it produces, so a command and its mail commit or vanish together. `pbm serve`
runs the requests waiting for it together (Server.batch): each in a savepoint of one
transaction, one commit for all.
"""

import logging
import traceback
from contextlib import contextmanager
from dataclasses import replace

from . import commands  # noqa: F401  (the grammar loads each command module on demand)
from .boards import Board
from .bounces import clear_on_mail, working_addresses
from .clock import DAY, HOUR, now, parse_stamp, show_time, stamp
from .failures import TransientError, is_transient
from .grammar import GrammarError, mask_unparsed, normalize, parse, with_suggestion
from .htmlmail import board_part
from .mailout import Mail, deliver, queue
from .plugins import GameCatalog, get_migration_sets, load_game
from .ratings import rating_lines
from .replies import LIFETIME as TOKEN_LIFETIME
from .replies import (
    TOKEN_PASSWORD,
    Grant,
    InvitationGrant,
    ResetGrant,
    mac_matches,
    new_token,
    reply_address,
    split_token,
    token_command,
)
from .request import Request, Result
from .security import (
    hash_password,
    login_lock,
    mask_secrets,
    needs_rehash,
    password_check_needed,
    verify_password,
)
from .store import Store
from .summary import board_context
from .templating import text_environment
from .unsubscribe import list_headers, list_id

log = logging.getLogger("pbm.dispatch")
# Mail a user did not ask for, capped per day so nobody can be mail-bombed through us.
CAPPED_KINDS = ("message", "chat", "new_board", "invitation")

QUOTED_BODY_LINES = 20


class _DryRun(Exception):
    """Raised at the end of a dry-run step so that nothing is kept."""


class CommandError(Exception):
    """A refusal: the message goes to the sender, with the board's summary if given."""

    def __init__(self, message: str, board: Board | None = None):
        super().__init__(message)
        self.message = message
        self.board = board


@contextmanager
def open_server(config, games=None):
    """A server on $PBM_HOME's database; refuses to run on a schema not yet migrated."""
    if not config.db_path.exists():
        raise TransientError(f"No database at {config.db_path}: run `pbm init`")
    store = Store.open(config.db_path)
    try:
        server = Server(config, store, games)
        pending = server.pending_migrations()
        if pending:
            raise TransientError(f"{len(pending)} migrations pending: run `pbm migrate`")
        yield server
    finally:
        store.close()


class Batch:
    """Requests run in one transaction (Server.batch), and the outbox rows they queued,
    delivered by the caller after the commit."""

    def __init__(self, store):
        self.store = store
        self.queued: list[int] = []

    def run(self, work):
        """work() in the batch: its value, or the exception it raised after its writes were
        rolled back (its own answer: SMTP 451). An error that cost the whole transaction is
        raised: every request of the batch must then be retried."""
        try:
            return work()
        except Exception as error:
            if not self.store.in_transaction:
                raise
            return error


class Server:
    def __init__(self, config, store, games: dict | None = None):
        self.config = config
        self.store = store
        self._batch = None
        self.templates = text_environment(config.home, load_game)
        if games is None:
            self.games = GameCatalog(on_load=self._use_game)
        else:
            self.games = games
            for game in games.values():
                self._use_game(game)

    def _use_game(self, game):
        """A game loaded for this run: its plugin's tables must be migrated before use."""
        pending = self.store.pending_migrations(get_migration_sets(load_all=False))
        if pending:
            raise TransientError(f"{len(pending)} migrations pending: run `pbm migrate`")
        game.templates = self.templates

    # -- services for commands ------------------------------------------------------

    def pending_migrations(self):
        """The core's pending steps and those of the plugins loaded so far; a game loaded
        later is checked as it loads (_use_game)."""
        plugin_sets = get_migration_sets(load_all=False)
        return self.store.core_pending() + (
            self.store.pending_migrations(plugin_sets) if plugin_sets else []
        )

    def game_for_board(self, name: str):
        if name not in self.games:
            raise TransientError(f'The plugin of game "{name}" is not installed')
        return self.games[name]

    def timeout_defaults(self) -> dict:
        return {
            "nag_days": self.config.number("timeouts.nag_days"),
            "forfeit_days": self.config.number("timeouts.forfeit_days"),
        }

    def rating_lines(self, board, result) -> list[str]:
        return rating_lines(self.store, result)

    def render(self, template: str, **values) -> str:
        return self.templates.get_template(template).render(**values).strip("\n")

    # -- the pipeline ----------------------------------------------------------------

    @contextmanager
    def batch(self):
        """Group commit: every request executed inside runs in a savepoint of one
        transaction (Store.group), with the same answers and mails as alone; their
        delivery waits for the caller, after the commit, in Batch.queued. The commit is
        not synced yet: nobody may be told before the caller has synced it."""
        batch = Batch(self.store)
        self._batch = batch
        try:
            with self.store.group():
                yield batch
        finally:
            self._batch = None

    def _deliver(self, row_ids):
        if self._batch is not None:
            self._batch.queued.extend(row_ids)
        elif row_ids:
            deliver(self.store, self.config, row_ids)

    def execute(self, request: Request, early=None) -> Result:
        """Run one request; `early` is an EarlyCheck of its password already under way."""
        if request.key and self.store.limits.inbox_seen(request.key):
            return self._duplicate(request)
        if request.service is not None:
            # A bounce or an unsubscribe (servicemail.py): no command, no password.
            return self._transaction(request, None, {}, request.service.run)
        grant, text = None, request.text
        if request.token is not None:
            reset = self.store.users.reset_by_token(split_token(request.token)[0])
            if reset is not None:
                grant, text, problem = self._reset_token_command(request, reset)
                # The reply's first line is a new password: nothing the reply says is kept or
                # quoted, only the command built here, whose password the quote masks.
                request = replace(request, text=text[0] if text else "", body="", body_lines=[])
            else:
                grant, text, problem = self._invitation_reply(request) or self._token_command(
                    request
                )
                if problem is None:
                    request = replace(request, body=self._token_body(request, text))
            if problem is not None:
                return self.refuse_message(request, problem)
            text = text[0]
        try:
            parsed, grammar_error = parse(text, self.games, self._timeouts()), None
        except GrammarError as error:
            parsed, grammar_error = None, error
        if parsed is not None and parsed.spec.batch:
            return self._run_batch(request, parsed)
        checks = self._verify_passwords(request, parsed, early) if parsed and not grant else {}

        def work(ctx):
            if grammar_error is not None:
                ctx.answer_grammar_error(grammar_error)
            else:
                ctx.run()

        try:
            return self._transaction(request, parsed, checks, work, grant)
        except Exception as error:
            if is_transient(error):
                raise
            return self._internal_error(request, error)

    def execute_for_robot(self, text: str, grant: Grant) -> Result:
        """A robot's command (docs/spec/server.md §11.7): the grant stands for its password
        as a reply token's does and makes its `#n` guard current, so a move computed on a
        position that has since changed is refused; everything else is any player's path.
        The robot has no address: what would answer it is returned in Result.printed."""
        parsed = parse(text, self.games, self._timeouts())
        try:
            return self._transaction(Request(text=text), parsed, {}, lambda ctx: ctx.run(), grant)
        except Exception as error:
            if is_transient(error):
                raise
            return self._internal_error(Request(text=text), error)

    def _run_batch(self, request: Request, parsed) -> Result:
        """A batch command runs its steps in transactions of their own (spec.batch): the
        handler gets the same Context as any other and returns their combined Result."""
        if parsed.spec.operator_only and not request.operator:
            return self.refuse_message(request, operator_only_message(parsed.spec))
        return parsed.spec.handler(Context(self, request, parsed, {}))

    def _token_command(self, request):
        """(grant, (command text, body prefix), None) for a reply to a valid token, else
        (None, None, what is wrong) (docs/spec/server.md §11.3)."""
        token_id, _ = split_token(request.token)
        row = self.store.tokens.get(token_id)
        if row is None or not mac_matches(self.config.secret_key, request.token, row):
            return (
                None,
                None,
                (
                    "This reply address is not valid. Reply to the latest mail "
                    "about your board or password reset, or send the command with "
                    "your password."
                ),
            )
        if not self.sender_is_registered(row.userid, request.sender):
            return (
                None,
                None,
                (
                    "This reply address works only from the addresses of the "
                    "player it was sent to; send the command with your password."
                ),
            )
        board = self.store.boards.get(row.game, row.number)
        if board is None or board.status != "active" or parse_stamp(row.expires_at) <= now():
            return (
                None,
                None,
                (
                    "This reply address has expired (the game has ended, or 30 "
                    "days have passed); send the command with your password."
                ),
            )
        if not request.text:
            return (
                None,
                None,
                (
                    "Your reply is empty: write your move (or pass, resign, "
                    "accept, reject, confirm, queue <move>, chat <text>) on the "
                    "first line of your reply."
                ),
            )
        grant = Grant(row.game, row.number, row.userid, row.move_number)
        return grant, token_command(row.game, row.number, row.userid, request.text), None

    def _invitation_reply(self, request):
        """The answer a reply to an invitation mail runs (docs/spec/server.md §11.3), as
        _token_command gives a board reply's; None for a token of another kind."""
        from .invitations import invitation_reply  # deferred: only such a reply needs it

        return invitation_reply(self, request)

    @staticmethod
    def _reset_token_command(request, reset):
        """(grant, (reset command, ""), None) for a reply to a password reset mail, else
        (None, None, what is wrong). The reset command checks the token, the sender and the
        expiry itself, in its transaction, counting a failure as a wrong code."""
        words = request.text.split()
        if len(words) != 1:
            return (
                None,
                None,
                (
                    "Write only your new password, one word without spaces, on the first "
                    "line of your reply to the reset mail. Nothing was changed."
                ),
            )
        grant = ResetGrant(reset.userid, reset.token_id)
        return grant, (f"reset {reset.userid} {TOKEN_PASSWORD} {words[0]}", ""), None

    @staticmethod
    def _token_body(request, text) -> str:
        prefix = text[1]
        return f"{prefix}\n{request.body}".strip("\n") if prefix else request.body

    def sender_is_registered(self, userid: str, sender: str | None) -> bool:
        addresses = {a.lower() for a in self.store.users.addresses(userid)}
        return bool(sender) and sender.lower() in addresses

    def issue_token(self, board, userid: str, moment) -> str:
        """A new reply token for one recipient of one mail about a running board."""
        move_number = board.position.move_number
        token_id, token = new_token(
            self.config.secret_key, board.game.name, board.number, userid, move_number
        )
        self.store.tokens.add(
            token_id,
            board.game.name,
            board.number,
            userid,
            move_number,
            stamp(moment),
            stamp(moment + TOKEN_LIFETIME),
        )
        return token

    def refuse_message(self, request: Request, message: str) -> Result:
        """Answer a message we will not run (too large, too many lines) with an error, once."""
        return self._transaction(request, None, {}, lambda ctx: ctx.answer_error(message))

    def _transaction(self, request, parsed, checks, work, grant=None) -> Result:
        """One request: inbox key, rate limit, the command and its mail, committed together;
        then the mail is delivered."""
        with self.store.write():
            if request.key:
                if self.store.limits.inbox_seen(request.key):
                    return Result(ok=True, duplicate=True)
                self.store.limits.inbox_add(request.key, stamp(now()))
            clear_on_mail(self.store, request.sender)
            ctx = Context(self, request, parsed, checks, grant)
            if not self._over_rate_limit(ctx):
                work(ctx)
            result = self.queue_mails(ctx)
        self._deliver([row_id for row_id, _ in result.queued])
        return result

    def run_step(self, work, dry_run=False) -> Exception | None:
        """work(ctx) for housekeeping (cleanup), in a transaction of its own with the mails it
        queues, delivered after; a dry run keeps nothing. A failure that is not transient is
        rolled back and returned, so that a run over many boards can go on."""
        try:
            with self.store.write():
                ctx = Context(self, Request(text="cleanup"), None, {})
                work(ctx)
                if dry_run:
                    raise _DryRun()
                queued = self.queue_mails(ctx)
        except _DryRun:
            return None
        except Exception as error:
            if is_transient(error):
                raise
            return error
        self._deliver([row_id for row_id, _ in queued.queued])
        return None

    def _duplicate(self, request: Request) -> Result:
        """A message seen before runs nothing, but finishes a delivery a crash cut short."""
        log.info("duplicate message %s skipped", request.key)
        self._deliver(self.store.outbox.pending_for(request.key))
        return Result(ok=True, duplicate=True)

    def _over_rate_limit(self, ctx) -> bool:
        """At most commands_per_hour commands per sender in a sliding hour: the first one over
        is answered, later ones are dropped unanswered (so a loop cannot feed on itself)."""
        sender = (ctx.request.sender or "").lower()
        if ctx.request.operator or not sender:
            return False
        limit = self.config.number("limits.commands_per_hour")
        moment = ctx.now
        recent = self.store.limits.rate_events("command", sender, stamp(moment - HOUR))
        self.store.limits.add_rate_event("command", sender, stamp(moment))
        if len(recent) < limit:
            return False
        if len(recent) == limit:
            again = show_time(parse_stamp(recent[0]) + HOUR)
            ctx.answer_error(f"Too many requests from {sender}; try again after {again}")
        else:
            ctx.refused = True
            log.warning("rate limit: dropped a command from %s", sender)
        return True

    def _timeouts(self) -> tuple[int, int]:
        return self.config.number("timeouts.nag_days"), self.config.number("timeouts.forfeit_days")

    def _verify_passwords(self, request, parsed, early=None) -> dict:
        """argon2 is slow: check and hash passwords before taking the write lock, and only
        for a command that will get as far as its password."""
        checks = {}
        pair = parsed.auth_pair()
        # An early check exists only where the same gate passed a moment ago.
        needed = early is not None or password_check_needed(
            self.store, self.config, request, pair[0] if pair else None
        )
        if not needed:
            return checks
        if pair is not None:
            userid, password = pair
            stored = self.store.users.password_hash(userid)
            verdict = early.verdict(userid, password, stored) if early is not None else None
            if verdict is None:
                verdict = verify_password(stored, password)
            checks[(userid, password, stored)] = verdict
        for position in parsed.spec.new_secrets:
            if position < len(parsed.args):
                checks[("new", parsed.args[position])] = hash_password(parsed.args[position])
        return checks

    def queue_mails(self, ctx) -> Result:
        result = Result(ok=not ctx.refused)
        # Addresses that bounce are not mailed (docs/spec/server.md §5.9); the sender's
        # own mail has just cleared theirs.
        failing = self.store.delivery.any_failing()
        for mail in ctx.mails:
            if mail.to_sender and ctx.request.operator:
                result.printed.append(mail)
                continue
            if failing and mail.userid is not None and not mail.to_sender:
                mail.to = working_addresses(self.store, mail.to)
            mail.to = self._within_unconfirmed_cap(ctx, mail)
            if mail.to:
                row_id = queue(
                    self.store, self.config, mail, ctx.request.message_id, ctx.request.key
                )
                result.queued.append((row_id, mail))
        return result

    def _within_unconfirmed_cap(self, ctx, mail) -> list[str]:
        """The recipients a user's mail may go to: an address no command of that account
        has come from gets at most mails_to_unconfirmed_address_per_day mails a day in all,
        whatever the command (issue 13.6). Answers to the sender and the operator's own
        commands are not capped here (commands_per_hour bounds the former)."""
        if mail.to_sender or mail.userid is None or ctx.request.operator:
            return mail.to
        limit = self.config.number("limits.mails_to_unconfirmed_address_per_day")
        since, at = stamp(ctx.now - DAY), stamp(ctx.now)
        kept = []
        for address in mail.to:
            key = address.lower()
            if not self.store.limits.address_proven(mail.userid, key):
                if len(self.store.limits.rate_events("unconfirmed_mail", key, since)) >= limit:
                    log.warning("unconfirmed address cap: %s mail to %s not sent", mail.kind, key)
                    continue
                self.store.limits.add_rate_event("unconfirmed_mail", key, at)
            kept.append(address)
        return kept

    def _internal_error(self, request: Request, error: Exception) -> Result:
        details = "".join(traceback.format_exception(error))
        log.error("internal error on %r:\n%s", mask_unparsed(request.text.split()), details)

        def answer(ctx):
            ctx.refused = True
            ctx.reply("PBM error", self.render("mail/internal_error.txt"), kind="error")
            operator = self.config.get("server.operator_address")
            if operator:
                body = self.render(
                    "mail/operator_alert.txt",
                    command=" ".join(mask_unparsed(normalize(request.text).split())),
                    sender=request.sender or "the command line",
                    details=details,
                )
                ctx.mail_address(operator, "PBM internal error", body, "operator")

        return self._transaction(request, None, {}, answer)


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


class Context:
    """What a command function works with: the request, the store, the mails it sends."""

    def __init__(self, server: Server, request: Request, parsed, checks: dict, grant=None):
        self.server = server
        self.grant = grant  # a reply token's: stands for the password of its user and board
        self.store = server.store
        self.config = server.config
        self.parsed = parsed
        self.game = parsed.game if parsed else None
        self.checks = checks
        # Passwords are masked out of the body before any command stores or mails it.
        self.secrets = secrets_to_mask(parsed, self.store)
        self.request = masked_request(request, self.secrets)
        self.now = now()
        self.mails: list[Mail] = []
        self.refused = False
        self.userid: str | None = None  # the authenticated user
        self.board: Board | None = None  # the board loaded before the password (before_auth)
        self.invitation = None  # or the invitation it answers (docs/spec/server.md §11.1)
        self.failed_logins: list[str] = []
        self.proven_userids: list[str] = []  # accounts whose password came from the sender
        self.sender_key = (request.sender or "").lower()
        # Boards drawn in this run, as text and as pictures, by state and perspective: each
        # once, however many recipients share them (summary.py, htmlmail.py).
        self.drawn: dict = {}

    @property
    def args(self) -> list[str]:
        return self.parsed.args

    @property
    def spec(self):
        return self.parsed.spec

    # -- running and refusing ---------------------------------------------------------

    def run(self):
        """The command as its declaration says: operator check, the checks that come before
        the password, the password, then the handler; an abort rolls all its writes back."""
        try:
            with self.store.savepoint():
                if self.spec.operator_only and not self.request.operator:
                    self.abort(operator_only_message(self.spec))
                if isinstance(self.grant, Grant):
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
        # So do right passwords: the sender's address is confirmed for that account.
        for userid in self.proven_userids:
            self.store.limits.add_address_proof(userid, self.sender_key, stamp(self.now))

    def _tell_owner_of_guessing(self, userid: str):
        """Once a day at most, mail the owner that their account is locked to strangers."""
        limit = self.config.number("limits.failed_logins_per_account_per_hour")
        failures = self.store.limits.auth_failures_of_user(userid, stamp(self.now - HOUR))
        if len(failures) <= limit or self.store.users.password_hash(userid) is None:
            return
        if self.store.limits.rate_events("lock_notice", userid, stamp(self.now - DAY)):
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
        if subject is None:
            if board is not None:
                subject = f"{board.title_name} Error"
            elif game is not None:
                subject = f"{game.display_name} error"
            else:
                subject = "PBM error"
        subject_line = normalize(self.request.text)
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
        summary = ""
        if board is not None:
            summary = self.render(
                "mail/board.txt",
                **self.board_context(board, self.userid, full_moves=True, timing=True),
            )
        # The thread's References, so Thunderbird and mutt file it with the board; its own
        # subject, so the refusal stands out (docs/spec/server.md §5.3). No reply token: it
        # does not ask for a move, it says why one was not made.
        self.reply(
            subject,
            self.render("mail/error.txt", message=message, summary=summary, quoted=quoted),
            kind="error",
            board=board,
            token=False,
        )

    # -- authentication and lookups ---------------------------------------------------

    def _check_grant_is_current(self):
        """A reply answers the board as it was mailed: after another move it is refused
        with the current board, as a stale `#n` guard is. Chat changes nothing and goes on."""
        if self.spec.word == "chat":
            return
        board = self.load_board(self.grant.number)
        error = board.guard_error(self.request.text, str(self.grant.move_number))
        if error:
            self.abort(error + "; your reply answered an earlier mail", board)

    def authenticate(self, userid: str, password: str):
        userid = userid.lower()
        if isinstance(self.grant, (Grant, InvitationGrant)):
            # The command was built from the token (replies.token_command), so it names the
            # token's own user and board; the check is kept against any other use.
            user = self.store.users.get(userid)
            if userid != self.grant.userid or user is None or user.status != "active":
                self.abort("This reply address is not valid for this command")
            self.userid = userid
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

    def check_daily_limit(self, kind: str, limit_key: str, what: str):
        """At most `limits.<limit_key>` events of a kind per sender in 24 hours."""
        if not self.sender_key:
            return
        limit = self.config.number(f"limits.{limit_key}")
        recent = self.store.limits.rate_events(kind, self.sender_key, stamp(self.now - DAY))
        if len(recent) >= limit:
            again = show_time(parse_stamp(recent[-limit]) + DAY)
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

    # -- mail ------------------------------------------------------------------------

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
        to = [self.request.sender] if self.request.sender else []
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
        if not headers or userid is None or not board.active or not board.playing_seats_of(userid):
            return headers
        token = self.server.issue_token(board, userid, self.now)
        headers["Reply-To"] = reply_address(self.config, token)
        return headers

    def _mail_cap_reached(self, userid: str) -> bool:
        limit = self.config.number("limits.mails_per_user_per_day")
        since = stamp(self.now - DAY)
        queued_now = sum(1 for m in self.mails if m.userid == userid and m.kind in CAPPED_KINDS)
        return self.store.outbox.count_to_user(userid, CAPPED_KINDS, since) + queued_now >= limit

    def mail_address(self, address: str, subject: str, body: str, kind: str):
        """A mail to an address of the configuration (broadcast list, operator)."""
        self.mails.append(Mail(kind, subject, body, [address]))

    def sender_is_among(self, addresses) -> bool:
        sender = (self.request.sender or "").lower()
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
        return f"{board.title_name}: {' vs '.join(board.seat_userids)}"

    def thread_root(self, board, userid) -> str:
        """The Message-ID every mail about a board to one recipient refers to: one thread
        per board and recipient in any mail client that reads References."""
        return f"<{board.game.name}.{board.number}.{userid or 'spectator'}@{self.config.server_domain}>"

    def announce(self, board, *, new=False, title=None, spectator_to_sender=False, kind="board"):
        """Board mails to the audience, each in their own perspective, with this run's
        events (docs/spec/server.md §3.5.2); and the notifiers' mails when the game ended in this
        run, and the winners' announcement when it was a tournament's last board
        (docs/spec/server.md §11.9). A board removed in this run gets the notice of its
        removal instead."""
        if board.removed_event is not None:
            self._announce_removal(board)
            return
        recipients = []
        for userid in board.audience():
            body, html = self.board_mail(
                board,
                userid,
                self.board_context(
                    board, userid, events=board.events, title=title, next_steps=True
                ),
            )
            addresses = self.store.users.addresses(userid)
            # The sender's own board mail answers their command: it goes In-Reply-To it.
            self.mail_user(
                userid,
                self.board_subject(board, userid, new),
                body,
                kind,
                addresses,
                board=board,
                reply=self.sender_is_among(addresses),
                html=html,
                stream=None if board.playing_seats_of(userid) else "subscription",
            )
            recipients.extend(addresses)
        if spectator_to_sender and not self.sender_is_among(recipients):
            body = self.render(
                "mail/board.txt",
                **self.board_context(board, None, events=board.events, title=title),
            )
            self.reply(self.board_subject(board, None, new), body, kind="board")
        if board.finished_now:
            title = f"Notification of {board.title_name}"
            for userid in board.notifiers():
                context = self.board_context(board, None, title=title)
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
        body = self.render(
            "mail/error.txt",
            message=message,
            summary=self.render("mail/board.txt", **self.board_context(board, userid)),
            quoted=[],
        )
        self.mail_user(userid, f"Queued move not played ({board.title_name})", body, "error")
