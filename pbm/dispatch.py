"""The one dispatcher: a request (mail, `multiple` line or command line) in, mails out.

Each request runs in one BEGIN IMMEDIATE transaction together with its inbox key and
every mail it produces, so a command and its mail commit or vanish together. `pbm serve`
runs the requests waiting for it together (Server.batch): each in a savepoint of one
transaction, one commit for all. The Server keeps the transactions, the groups and the
limits; a reply's token is resolved once (grants.py); the command runs in a Context
(context.py), whose mails are composed by its Correspondence (correspondence.py).
"""

import logging
import traceback
from contextlib import contextmanager
from dataclasses import replace

from . import commands  # noqa: F401  (the grammar loads each command module on demand)
from .answers import Answering, Cost, OverCeiling, answer_command, cost_of
from .boardcache import BoardCache, Drawings
from .bounces import clear_on_mail, working_addresses
from .clock import DAY, HOUR, now, parse_stamp, show_time, stamp
from .context import Context, operator_only_message
from .failures import TransientError, is_transient
from .grammar import GrammarError, mask_unparsed, normalize, parse
from .grants import Refused, TokenIssuer, is_whole_command, resolve, subject_is_ours, thread_reply
from .mailout import deliver, queue_measured
from .plugins import GameCatalog, get_migration_sets, keep_entry_points_in, load_game
from .ratings import rating_lines
from .replica import ship
from .replies import Grant
from .request import Request, Result
from .security import (
    hash_password,
    mask_secrets,
    password_check_needed,
    pasted_passwords_of,
    verify_password,
)
from .store import Store
from .templating import text_environment

log = logging.getLogger("pbm.dispatch")
# Answers that may quote or echo what the mail said: every password it holds is masked.
ECHOING_KINDS = ("error", "operator")


class _DryRun(Exception):
    """Raised at the end of a dry-run step so that nothing is kept."""


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
        self._batch: Batch | None = None
        self._answering: Answering | None = (
            None  # the one answer of the `multiple` mail running (answer_once)
        )
        keep_entry_points_in(config.home / "cache")
        self.templates = text_environment(config.home, load_game)
        self.issue_token = TokenIssuer(store, config)
        self.board_cache = BoardCache(store)
        self.drawn = Drawings()
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
        """After a commit: its mails, and then the answer, once the replica holds it
        ([replica] wait); in a batch, the caller's after the batch's commit."""
        if self._batch is not None:
            self._batch.queued.extend(row_ids)
            return
        ship(self.config)
        if row_ids:
            deliver(self.store, self.config, row_ids)

    def execute(self, request: Request, early=None) -> Result:
        """Run one request; `early` is an EarlyCheck of its password already under way."""
        # An early check exists only where its gate found the key new a moment ago
        # (security.password_check_needed); a copy that came since is found by the inbox
        # record in the transaction, while its first is still being delivered.
        if request.key and early is None and self.store.limits.inbox_seen(request.key):
            return self._duplicate(request)
        if request.service is not None:
            # A bounce or an unsubscribe (servicemail.py): no command, no password.
            return self._transaction(request, None, {}, request.service.run)
        if request.stranger:
            return self._answer_stranger(request)
        if request.token is None and request.replied_to and subject_is_ours(request.text):
            # An answer to one of our mails that came to the plain address (docs/spec/server.md
            # §11.3): its board by the Message-ID it answers, or the boards it may mean.
            reply = thread_reply(self.store, request)
            if reply is None:
                return self._transaction(request, None, {}, lambda ctx: ctx.answer_lost_reply())
            request = reply
        if request.is_reply and is_whole_command(request.text, self.games, self._timeouts()):
            # The classic command pasted as a reply's first line runs as that command.
            request = replace(request, token=None, thread_token_id=None)
        grant, text = None, request.text
        if request.is_reply:
            resolved = resolve(self.store, self.config, request, self.games)
            if isinstance(resolved, Refused):
                return self._refuse_reply(resolved)
            grant, text, request = resolved.grant, resolved.command, resolved.request
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

    def answer_once(self, request: Request, count: int, run) -> Result:
        """run(answering) runs the commands of one `multiple` mail in one transaction, each
        in a savepoint of it (a refused one undoes only itself); their answers go in one
        mail and their mail counts against the mail's ceiling (answers.Answering); all of
        it is queued in the transaction and delivered after the commit."""
        outer = self._batch
        batch = outer or Batch(self.store)
        answering = Answering(self, request, count)
        self._batch, self._answering = batch, answering
        try:
            with self.store.write():
                if self._delivered_before(request):
                    return Result(ok=True, duplicate=True)
                run(answering)
                batch.queued.extend(answering.finish())
        finally:
            self._batch, self._answering = outer, None
        if outer is None:
            self._deliver(batch.queued)
        return answering.result

    def _refuse_reply(self, refused: Refused) -> Result:
        """A reply refused before it ran: in its board's thread when its token was its
        player's own, with a token for the board as it is now while it runs."""
        if refused.player is None:
            return self.refuse_message(refused.request, refused.message)
        return self._transaction(
            refused.request,
            None,
            {},
            lambda ctx: ctx.refuse_reply(refused.message, refused.player),
        )

    def refuse_message(self, request: Request, message: str) -> Result:
        """Answer a message we will not run (too large, too many lines) with an error, once."""
        if request.stranger:
            return self._answer_stranger(request)
        return self._transaction(request, None, {}, lambda ctx: ctx.answer_error(message))

    def _answer_stranger(self, request: Request) -> Result:
        """A mail the MTA found fails DMARC for its origin's domain (docs/spec/server.md §7)
        may not come from there: it runs nothing, confirms nothing, and its origin gets one
        short answer an hour, counted under a key of its own so that forged mail never uses
        up or locks the limits of the address it names."""

        def answer(ctx):
            ctx.refused = True
            if not ctx.first_notice_this_hour("stranger_notice"):
                log.warning("DMARC failed: a mail from %s not answered", ctx.sender_key)
                return
            domain = ctx.sender_key.rpartition("@")[2]
            ctx.reply(
                "PBM error",
                f"Your mail failed our mail server's DMARC check for {domain}, so it may not "
                f"be from {ctx.sender_key}: nothing in it was done. Send it again through "
                f"the mail server of {domain}. Until {show_time(ctx.now + HOUR)} further "
                "mails like it get no answer.",
                kind="error",
                token=False,
            )

        return self._transaction(request, None, {}, answer)

    def _delivered_before(self, request: Request) -> bool:
        """Whether this mail (its key) was handled before; if not, it is recorded in the
        inbox in the caller's transaction, so that a delivery again runs nothing."""
        if not request.key:
            return False
        return not self.store.limits.inbox_record(request.key, stamp(now()))

    def _transaction(self, request, parsed, checks, work, grant=None) -> Result:
        """One request: inbox key, rate limit, the command and its mail, committed together;
        then the mail is delivered."""
        try:
            with self.store.write():
                if self._delivered_before(request):
                    return Result(ok=True, duplicate=True)
                clear_on_mail(self.store, request.sender)
                ctx = Context(self, request, parsed, checks, grant)
                if not self._over_rate_limit(ctx):
                    work(ctx)
                result = self.queue_mails(ctx)
        except OverCeiling:
            # Undone, but its wrong passwords stay counted: the ceiling is no free guess.
            for userid in ctx.failed_logins:
                self.store.limits.add_auth_failure(userid, ctx.sender_key, stamp(ctx.now))
            return Result(ok=False, not_run=True)
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
        """At most commands_per_hour commands per origin in a sliding hour (a stranger's mail
        has a limit of its own, _answer_stranger). A refused command is not counted, so a
        flood does not keep the limit shut; each is answered, and the answer caps per address
        (answers.py) bound those answers, so that a loop cannot feed on itself."""
        sender = ctx.sender_key
        if ctx.request.operator or ctx.request.stranger or not sender:
            return False
        limit = self.config.number("limits.commands_per_hour")
        reached = self.store.limits.limit_reached_at(
            "command", sender, stamp(ctx.now - HOUR), limit
        )
        if reached is None:
            self.store.limits.add_rate_event("command", sender, stamp(ctx.now))
            return False
        again = show_time(parse_stamp(reached) + HOUR)
        ctx.answer_error(
            f"Too many requests from {sender}; try again after {again}. Nothing in this mail "
            "was done: send it again after that time."
        )
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
        """Queue the command's mail; its direct answers go out as one (answers.py), with
        those of the other commands of a `multiple` mail when it is one of them."""
        result = Result(ok=not ctx.refused)
        answers, cost = [], Cost()
        # Addresses that bounce are not mailed (docs/spec/server.md §5.9); the sender's
        # own mail has just cleared theirs.
        failing = self.store.delivery.any_failing()
        for mail in ctx.mails:
            if mail.to_sender or mail.kind in ECHOING_KINDS:
                # The passwords, not the guess at a swapped userid that the quote hides.
                passwords = ctx.pasted + (ctx.parsed.secrets if ctx.parsed else [])
                mail.subject = mask_secrets(mail.subject, passwords)
                mail.body = mask_secrets(mail.body, passwords)
            if mail.to_sender and ctx.request.operator:
                result.printed.append(mail)
            elif mail.to_sender:
                answers.append(mail)
            else:
                if failing and mail.userid is not None:
                    mail.to = working_addresses(self.store, mail.to)
                mail.to = self._within_unconfirmed_cap(ctx, mail)
                if mail.to:
                    self._tell_of_held_mail(mail)
                    row_id, size = queue_measured(
                        self.store, self.config, mail, ctx.request.message_id, ctx.request.key
                    )
                    result.queued.append((row_id, mail))
                    if self._answering is not None:
                        cost.add(cost_of(self.store, mail, size))
        if self._answering is not None:
            self._answering.add(ctx, answers, cost)
        elif answers:
            answer_command(self, ctx, answers, result)
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
                if self.store.limits.limit_reached_at("unconfirmed_mail", key, since, limit):
                    log.warning("unconfirmed address cap: %s mail to %s held back", mail.kind, key)
                    self.store.limits.hold_mail(mail.userid, key, mail.kind, at)
                    continue
                self.store.limits.add_rate_event("unconfirmed_mail", key, at)
            kept.append(address)
        return kept

    def _tell_of_held_mail(self, mail):
        """Mail held back by the unconfirmed-address cap is never silent: the next mail that
        reaches the player says, one line an address, how many and how to confirm it."""
        held = self.store.limits.held_mails_of(mail.userid) if mail.userid else []
        if not held:
            return
        self.store.limits.forget_held_mails(mail.userid)
        lines = [
            self.render(
                "mail/held_back.txt",
                userid=mail.userid,
                address=address,
                count=count,
                limit=self.config.number("limits.mails_to_unconfirmed_address_per_day"),
            )
            for address, count in held
        ]
        mail.body = mail.body.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"
        if mail.html is not None:
            # deferred: the html package is for mail with pictures, not every move's
            from html import escape as html_escape

            notes = "".join(f"<p>{html_escape(line)}</p>" for line in lines)
            mail.html = mail.html._replace(
                html=mail.html.html.replace("</body>", notes + "</body>", 1)
            )

    def _internal_error(self, request: Request, error: Exception) -> Result:
        details = mask_secrets(
            "".join(traceback.format_exception(error)), pasted_passwords_of(request, self.store)
        )
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
