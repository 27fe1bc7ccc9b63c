"""`pbm serve`: receive mail over SMTP (aiosmtpd) and run each message through the same
steps as mail_handler.py (intake's read_for_command, then its command). One writer thread
owns the database connection and commits in groups: it takes every command waiting, runs
each in its own savepoint with the same answers and mails as alone, commits them
together, writes their mails into the Maildir's tmp/, makes commit and mails durable with
one sync, renames the mails into new/ and only then answers each client (250, or 451 to
be retried). The sent marks of a group's mails go into the next group's commit.
mail_handler.py's mail comes in the same way over the home's socket (pbm/handoff.py).

Resources are bounded ([listen] in pbm.ini, docs/security.md): at most max_sessions
connections at once (421 beyond); an idle connection is closed after idle_timeout
seconds; a session holds at most one message of max_message_bytes with max_recipients
recipients (452 beyond); it may send max_stalling_commands commands that do not move a
message on (NOOP, RSET, HELP, a refused RCPT...) between two messages, and is closed at
its first command after max_session_seconds (421 for both), so that no client holds a
slot for ever by keeping busy."""

import asyncio
import logging
import os
import queue
import re
import select
import signal
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass
from functools import partial, wraps

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP

from .clock import now, stamp
from .dispatch import open_server
from .failures import curable_cause
from .handoff import open_handoff
from .homelock import handling_mail
from .intake import DirectServer, failed_outcome
from .maildir import publish_maildir, stage_maildir, sync_together
from .mailout import claim_queued, deliver, new_claim, retry_failed
from .mailout import flush as flush_outbox
from .readerpool import ReaderChecks, ReaderPool
from .replica import ship
from .robots.service import RobotThread

log = logging.getLogger("pbm.serve")
FLUSH_EVERY_SECONDS = 60
# Sent marks wait this long for the next group's commit before they get one of their own.
MARK_AFTER_IDLE_SECONDS = 0.5
PASSWORD_CHECKS_AT_ONCE = 2  # argon2: 19 MiB and a core each
READER_PROCESSES = 2  # each reads one mail at a time, with one argon2 check at most
# The commands that may move a message on: one of them runs even when a session has used
# up its stalling commands, and is its last only if it moves nothing on either.
MESSAGE_COMMANDS = ("MAIL", "RCPT", "DATA")
TOO_MANY_STALLING = "421 4.7.0 Too many commands without a message, bye"
# A path as nearly every client writes it in MAIL and RCPT: <dot-atom@domain>, then the
# parameters. aiosmtpd reads it with the email package's header parser and defines a
# class on every call: a quarter of the SMTP sessions' time in a busy pbm serve. Anything
# else is read by aiosmtpd (tests/test_serve_sessions.py checks both agree).
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
PLAIN_PATH_RE = re.compile(
    rf"<({_ATOM}(?:\.{_ATOM})*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*)>(?:[ \t]*([^ \t(].*))?",
    re.DOTALL,
)


@dataclass
class Command:
    """A mail's request waiting for the writer, and where its outcome goes."""

    request: object
    refusal: str | None
    early: object
    outcome: Future


@dataclass
class WriterJob:
    """Other work for the writer's connection (the outbox flush, closing)."""

    work: object
    outcome: Future


class MailService:
    """The aiosmtpd handler: RCPT for our address only, DATA answered after commit."""

    def __init__(self, config):
        self.config = config
        local, _, domain = config.get("server.address").lower().rpartition("@")
        self.local, self.domain = local, domain
        self.max_recipients = config.number("listen.max_recipients")
        # The pipe's mail (pbm/handoff.py) is read on these threads, one a connection,
        # which then wait for the writer; the operator is told here of a mail left to
        # retry, off the event loop. SMTP mail is read in the reader processes.
        self.readers = ThreadPoolExecutor(
            max_workers=config.number("listen.max_sessions"), thread_name_prefix="pbm-read"
        )
        self.checks = ReaderChecks(config, parallel=PASSWORD_CHECKS_AT_ONCE)
        self.pool = ReaderPool(config, READER_PROCESSES)
        self._opened = None
        self._server = None
        self.maildir = not config.get("smtp.host")
        self.unmarked: list[int] = []  # rows in new/ whose sent mark waits for a commit
        self.held = []  # (mails, rows) of groups whose wait for the replica failed
        self.jobs = queue.SimpleQueue()
        self.groups = self.commands = 0
        self.writer_cpu = 0.0
        self.writer = threading.Thread(target=self._write, name="pbm-db", daemon=True)
        self.writer.start()
        self.robots = RobotThread(config, self.run_on_writer)

    def accepts(self, address: str) -> bool:
        local, _, domain = address.lower().rpartition("@")
        return domain == self.domain and (local == self.local or local.startswith(self.local + "+"))

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if not self.accepts(address):
            return "550 5.1.1 No such mailbox here"
        if len(envelope.rcpt_tos) >= self.max_recipients:
            return "452 4.5.3 Too many recipients"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server, session, envelope):
        """The mail read in a reader process, its command on the writer, and the event
        loop woken once for each group's answers."""
        raw = envelope.original_content or envelope.content
        loop = asyncio.get_running_loop()
        try:
            with ExitStack() as lock:
                lock.enter_context(handling_mail(self.config.home))
                # Shielded: a reader hung up on in the middle would answer the next mail.
                read = await asyncio.shield(
                    self.pool.read(raw, len(raw), envelope.mail_from or "", list(envelope.rcpt_tos))
                )
                if read is None:
                    return "250 2.0.0 Message accepted"
                held = lock.pop_all()
            outcome = loop.create_future()
            outcome.add_done_callback(partial(released, held))
            self.jobs.put(Command(*read, outcome))
            await asyncio.shield(outcome)
        except Exception as error:
            await loop.run_in_executor(self.readers, failed_outcome, error, self.config.home)
            return "451 4.3.0 Temporary failure, please try again later"
        return "250 2.0.0 Message accepted"

    def early_check(self, config, request):
        """The password check of a mail handed over by the pipe, on its reader thread."""
        return self.checks.early_check(config, request)

    def run(self, request, refusal, early):
        """The command's Result once its group is durable; raises what made it fail."""
        outcome = Future()
        self.jobs.put(Command(request, refusal, early, outcome))
        return outcome.result()

    def call(self, work):
        """work() on the writer's thread, between groups."""
        outcome = Future()
        self.jobs.put(WriterJob(work, outcome))
        return outcome.result()

    # -- the writer -------------------------------------------------------------------

    def _write(self):
        """The writer's loop: the commands waiting make one group; other work runs
        between groups; sent marks left waiting get a commit of their own when idle."""
        while True:
            commands, tasks = [], []
            self._take_more(commands, tasks, wait=True)
            if commands:
                started = time.thread_time()
                self._run_group(commands, tasks)
                self.writer_cpu += time.thread_time() - started
            for task in tasks:
                try:
                    task.outcome.set_result(task.work())
                except Exception as error:
                    task.outcome.set_exception(error)
                if task.work == self._stop:
                    return

    def _run_group(self, commands, tasks):
        """Group commit: the commands, those that come while they run (until none is
        waiting: each session has one at most), the sent marks waiting and the claim of
        the new mails in one transaction; then the mails into tmp/ and one sync for all.
        Other work that comes meanwhile goes to `tasks`, for after the group."""
        try:
            server = self._pipeline()
            # Into the Maildir, the group's mails are delivered right after its commit:
            # written claimed, they need no claim of their own.
            claiming = (
                server.store.outbox.writing_claimed(new_claim(now()))
                if self.maildir
                else nullcontext({})
            )
            with server.batch() as batch, claiming as written:
                outcomes = []
                while len(outcomes) < len(commands):
                    command = commands[len(outcomes)]
                    work = partial(
                        DirectServer(server).run, command.request, command.refusal, command.early
                    )
                    outcomes.append(batch.run(work))
                    if len(outcomes) == len(commands):
                        self._take_more(commands, tasks)
                if self.unmarked:
                    server.store.outbox.mark_sent_many(self.unmarked, stamp(now()))
                rows = (
                    claim_queued(server.store, written, batch.queued, now()) if self.maildir else []
                )
                # Read here, where the writer's connection has it at hand: a round of the
                # robots' own connection costs a move a few hundred microseconds of CPU.
                robots = server.store.robots.any()
            self.unmarked = []
            mails = stage_maildir(self.config, rows)
            sync_together([*server.store.commit_paths(), *mails.paths(self.config)])
        except Exception as error:
            # Nothing is answered 250 before its commit is durable: all are retried.
            self._fail(commands, error)
            self._close_database()
            return
        try:
            ship(self.config)  # one wait for the whole group ([replica] wait)
        except Exception as error:
            # Committed but not on the replica: the mails wait for a later wait that
            # succeeds, the clients retry and find their commands done (duplicates).
            self.held.append((mails, batch.queued))
            self._fail(commands, error)
            return
        self._release_held(server)
        self._guarded(self._deliver, server, mails, batch.queued)
        self._committed(commands, outcomes, robots)
        if any(isinstance(outcome, Exception) for outcome in outcomes):
            self._close_database()  # reopened next time: the operator's cure is seen

    def _take_more(self, commands, tasks, wait=False):
        """Every job waiting, into commands or tasks. With `wait`, at least one; or none
        after MARK_AFTER_IDLE_SECONDS idle with sent marks to commit, which commits them."""
        while True:
            try:
                if wait:
                    job = self.jobs.get(timeout=MARK_AFTER_IDLE_SECONDS if self.unmarked else None)
                else:
                    job = self.jobs.get_nowait()
            except queue.Empty:
                if wait:
                    self._guarded(self._mark_sent)
                return
            wait = False
            (commands if isinstance(job, Command) else tasks).append(job)

    def _fail(self, commands, error):
        self._count(commands)
        self._answer(commands, [error] * len(commands))

    def _release_held(self, server):
        """The mails of groups whose wait failed, once a later wait has succeeded."""
        held, self.held = self.held, []
        for mails, queued in held:
            self._guarded(self._deliver, server, mails, queued)

    def _count(self, commands):
        self.groups += 1
        self.commands += len(commands)

    def _committed(self, commands, outcomes, robots: bool):
        """The one place where a group has committed, durably, and its mails are
        delivered (as mail_handler.py answers after delivery): each client is answered,
        and the robots, if the server has any, look for boards where they are on move."""
        self._count(commands)
        self._answer(commands, outcomes)
        if robots:
            self.robots.poke()  # a robot may be on move now

    def _answer(self, commands, outcomes):
        """Each command's outcome to its waiter: a thread (the handoff's) through its
        future, the event loop (SMTP's) once for all of its commands."""
        on_loop = []
        for command, outcome in zip(commands, outcomes):
            if isinstance(command.outcome, asyncio.Future):
                on_loop.append((command.outcome, outcome))
            else:
                settle(command.outcome, outcome)
        if on_loop:
            try:
                on_loop[0][0].get_loop().call_soon_threadsafe(settle_all, on_loop)
            except RuntimeError:  # the listener has stopped: nobody is left to answer
                log.debug("%d answers after the listener stopped", len(on_loop))

    def _deliver(self, server, mails, queued):
        """The group's mails: renamed into new/, marked sent with the next commit; over
        SMTP, each marked sent as soon as the relay has it."""
        store, moment = server.store, now()
        if not self.maildir:
            deliver(store, self.config, queued)
            return
        publish_maildir(self.config, mails)
        counts = {"sent": 0, "retry": 0, "failed": 0}
        alerts = retry_failed(store, self.config, mails, moment, counts)
        self.unmarked.extend(row.id for row in mails.delivered)
        if alerts:
            deliver(store, self.config, alerts)

    def _mark_sent(self):
        if self.unmarked:
            self._pipeline().store.outbox.mark_sent_many(self.unmarked, stamp(now()))
            self.unmarked = []

    def _guarded(self, work, *args):
        """Work after the answers: a failure is logged, the rows it left claimed are taken
        over by a later flush."""
        try:
            work(*args)
        except Exception as error:
            log.error("after a commit: %s", error)
            self._close_database()

    def run_on_writer(self, work):
        """work(server) on the writer's thread between groups, as a command of its own (a
        robot's: it commits and delivers its mails itself)."""

        def job():
            try:
                return work(self._pipeline())
            except Exception:
                self._close_database()
                raise

        return self.call(job)

    def _close_database(self):
        opened, self._opened, self._server = self._opened, None, None
        if opened is not None:
            try:
                opened.__exit__(None, None, None)
            except Exception as error:
                log.warning("closing the database: %s", error)

    def _pipeline(self):
        if self._server is None:
            self._opened = open_server(self.config)
            self._server = self._opened.__enter__()
        return self._server

    def flush(self):
        self._mark_sent()
        flush_outbox(self._pipeline().store, self.config)  # waits for the replica first
        self._release_held(self._pipeline())

    def _stop(self):
        self._guarded(self._mark_sent)
        self._close_database()
        if self.groups:
            log.info(
                "writer: %d commands in %d groups (%.1f a group), %.3f s CPU, "
                "%.2f ms CPU a command",
                self.commands,
                self.groups,
                self.commands / self.groups,
                self.writer_cpu,
                self.writer_cpu / self.commands * 1000,
            )

    def close(self):
        # The readers first, while the writer still runs: a mail handed over by the pipe
        # that was being read when the handoff stopped queues its command after, and waits
        # for its answer. An SMTP mail being read then is not run: its client, cut off
        # unanswered, sends it again.
        self.readers.shutdown()
        self.pool.close()
        self.robots.close()
        self.call(self._stop)
        self.writer.join()


def released(lock, outcome):
    """The home's lock let go once the command has run, also for a client that hung up
    (its command runs all the same: the future is shielded from its cancellation)."""
    lock.close()
    outcome.exception()  # retrieved: the client that hung up is told nothing


def settle(future, outcome):
    """A future given its outcome: a result, or the exception it carries."""
    if future.done():  # an SMTP client that hung up: its command ran all the same
        return
    if isinstance(outcome, Exception):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


def settle_all(pairs):
    for future, outcome in pairs:
        settle(future, outcome)


class BoundedSMTP(SMTP):
    """An SMTP session that counts itself: beyond the cap a connection gets 421 and is
    closed before any session state is made. A session that keeps busy without moving a
    message on, or keeps on too long, is closed with 421 too: the idle timeout alone let
    four clients sending NOOP every 3 s hold every slot."""

    def __init__(self, handler, sessions, max_stalling: int, max_seconds: int, **kwargs):
        super().__init__(handler, **kwargs)
        self.sessions = sessions
        self.counted = False
        self.max_stalling, self.max_seconds = max_stalling, max_seconds
        self.stalling = 0
        self.started = time.monotonic()
        # aiosmtpd has a hook for some commands only, and none for one it refuses (RCPT
        # before MAIL, say): every command passes through its table of command methods.
        self._smtp_methods = {
            name: self._bounded(name, method) for name, method in self._smtp_methods.items()
        }

    def _bounded(self, command: str, method):
        @wraps(method)  # keeps the syntax that HELP shows
        async def bounded(arg):
            if time.monotonic() - self.started >= self.max_seconds:
                await self._close("421 4.7.0 Session too long, try again later")
                return
            if self.stalling >= self.max_stalling and command not in MESSAGE_COMMANDS:
                await self._close(TOO_MANY_STALLING)
                return
            envelope = self.envelope
            before = (envelope.mail_from, len(envelope.rcpt_tos))
            await method(arg)
            if command == "DATA" and self.envelope is not envelope:
                self.stalling = 0  # a message was taken (or refused for its size)
                return
            moved_on = (  # MAIL FROM:<> (a bounce) starts a message too: mail_from ""
                command == "MAIL" and before[0] is None and envelope.mail_from is not None
            ) or (command == "RCPT" and len(envelope.rcpt_tos) > before[1])
            if not moved_on:
                self.stalling += 1
                if self.stalling > self.max_stalling:  # a MAIL, RCPT or DATA refused
                    await self._close(TOO_MANY_STALLING)

        return bounded

    def _getaddr(self, arg):
        match = PLAIN_PATH_RE.fullmatch(arg or "")
        if match is None:
            return super()._getaddr(arg)
        address, rest = match.group(1), match.group(2) or ""
        if self.local_part_limit and len(address.rpartition("@")[0]) > self.local_part_limit:
            return None, None
        return address, rest

    async def _close(self, status: str):
        log.debug("%s: closing a session", status)  # every client may do it: no log flood
        await self.push(status)
        if self.transport is not None:
            self.transport.close()

    def connection_made(self, transport):
        if not self.sessions.acquire(blocking=False):
            log.debug("too many sessions: refused a connection with 421")  # no log flood
            transport.write(b"421 4.3.2 Too many connections, try again later\r\n")
            transport.close()
            return
        self.counted = True
        super().connection_made(transport)

    def connection_lost(self, error):
        if not self.counted:
            return
        self.counted = False
        self.sessions.release()
        super().connection_lost(error)


class BoundedController(Controller):
    def __init__(self, handler, config, **kwargs):
        self.sessions = threading.BoundedSemaphore(config.number("listen.max_sessions"))
        self.max_stalling = config.number("listen.max_stalling_commands")
        self.max_seconds = config.number("listen.max_session_seconds")
        super().__init__(handler, **kwargs)

    def factory(self):
        return BoundedSMTP(
            self.handler, self.sessions, self.max_stalling, self.max_seconds, **self.SMTP_kwargs
        )


class StopSignals:
    """SIGINT and SIGTERM, waited for on a pipe that Python's C-level handler writes to.
    No Python code of ours runs in the signal: a handler that set a threading.Event
    deadlocked when the signal came while the main thread held that Event's lock, on its
    way into or out of Event.wait (seen in CI: a pbm serve that never exited)."""

    def __init__(self):
        self.read_end, self.write_end = os.pipe()
        os.set_blocking(self.write_end, False)
        self.previous_fd = signal.set_wakeup_fd(self.write_end, warn_on_full_buffer=False)
        self.previous = {
            signum: signal.signal(signum, lambda *_: None)
            for signum in (signal.SIGINT, signal.SIGTERM)
        }

    def wait(self, seconds: float) -> bool:
        """True once either signal has come, at the latest after `seconds`."""
        return bool(select.select([self.read_end], [], [], seconds)[0])

    def close(self):
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)
        signal.set_wakeup_fd(self.previous_fd)
        os.close(self.read_end)
        os.close(self.write_end)


def serve(config, host: str, port: int, ready=None):
    """Run until SIGINT or SIGTERM; `ready` is called once the port listens."""
    with open_server(config):
        pass  # refuse to start on a missing or unmigrated database, before listening
    service = MailService(config)
    controller = BoundedController(
        service,
        config,
        timeout=config.number("listen.idle_timeout"),
        hostname=host,
        port=port,
        data_size_limit=config.number("limits.max_message_bytes"),
        server_hostname=config.server_domain,
        ident="pbm",
    )
    stop = StopSignals()
    controller.start()
    handoff = None
    try:
        handoff = open_handoff(service)  # mail_handler.py's mail, when it comes here
        if handoff is not None:
            handoff.start()
        log.info("pbm serve listening on %s:%s", host, port)
        if ready is not None:
            ready()
        service.robots.poke()  # robots put on move before the start
        while True:  # the first flush finishes deliveries that a crash cut short
            try:
                service.call(service.flush)
            except Exception as error:
                cause = curable_cause(error, config.home)
                if cause is None:
                    raise
                log.error("outbox flush failed: %s", cause.line())
            if stop.wait(FLUSH_EVERY_SECONDS):
                break
    finally:
        controller.stop()
        if handoff is not None:
            handoff.stop()
        service.close()
        stop.close()
