"""`pbm serve`: receive mail over SMTP (aiosmtpd) and run each message through the same
process_message as mail_handler.py. One worker thread owns the database connection, so
commands are written one at a time, as by a single MTA pipe; replies go out the same way.
Resources are bounded: at most [listen] max_sessions connections at once (421 beyond), an
idle connection is closed after [listen] idle_timeout seconds, and a session holds at most
one message of max_message_bytes."""

import asyncio
import logging
import signal
import threading
from concurrent.futures import ThreadPoolExecutor

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP

from .dispatch import open_server
from .failures import curable_cause
from .grammar import password_of
from .intake import DirectServer, process_message
from .mailout import flush as flush_outbox
from .robots.service import RobotThread
from .security import EarlyCheck, PasswordCache, password_check_needed
from .store import Store

log = logging.getLogger("pbm.serve")
FLUSH_EVERY_SECONDS = 60


class MailService:
    """The aiosmtpd handler: RCPT for our address only, DATA answered after commit."""

    def __init__(self, config):
        self.config = config
        local, _, domain = config.get("server.address").lower().rpartition("@")
        self.local, self.domain = local, domain
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pbm-db")
        # Reading and password checking run beside the writer: argon2 uses the other core.
        self.readers = ThreadPoolExecutor(max_workers=2, thread_name_prefix="pbm-read")
        self.passwords = PasswordCache()
        self._local = threading.local()
        self._opened = None
        self._server = None
        self.robots = RobotThread(config, self.run_on_writer)

    def accepts(self, address: str) -> bool:
        local, _, domain = address.lower().rpartition("@")
        return domain == self.domain and (local == self.local or local.startswith(self.local + "+"))

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if not self.accepts(address):
            return "550 5.1.1 No such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server, session, envelope):
        raw = envelope.original_content or envelope.content
        loop = asyncio.get_running_loop()
        # Reading and the password check run on a reader thread; the command on the writer.
        outcome = await loop.run_in_executor(
            self.readers,
            lambda: process_message(
                raw,
                len(raw),
                envelope.mail_from or "",
                pipeline=self,
                config=self.config,
                envelope_recipients=list(envelope.rcpt_tos),
            ),
        )
        if outcome.consumed:
            return "250 2.0.0 Message accepted"
        return "451 4.3.0 Temporary failure, please try again later"

    def early_check(self, config, request):
        """The password check, off the writer's thread."""
        pair = password_of(request.text)
        if pair is None:
            return None
        try:
            store = self._reader_store()
            if not password_check_needed(store, self.config, request, pair[0]):
                return None
            stored = store.users.password_hash(pair[0])
        except Exception:
            store, self._local.store = getattr(self._local, "store", None), None
            if store is not None:  # reopened next time, like the writer's
                store.close()
            raise
        return EarlyCheck(*pair, stored, cache=self.passwords, background=False)

    def run(self, request, refusal, early):
        return self.worker.submit(self._process, request, refusal, early).result()

    def _reader_store(self):
        if getattr(self._local, "store", None) is None:
            self._local.store = Store.open(self.config.db_path)
        return self._local.store

    def _process(self, request, refusal, early):
        try:
            result = DirectServer(self._pipeline()).run(request, refusal, early)
        except Exception:
            self._close_database()  # reopened next time: the operator's cure is seen
            raise
        self.robots.poke()  # the command has committed: a robot may be on move
        return result

    def run_on_writer(self, work):
        """work(server) on the writer's thread, as a command of its own (a robot's)."""

        def job():
            try:
                return work(self._pipeline())
            except Exception:
                self._close_database()
                raise

        return self.worker.submit(job).result()

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
        flush_outbox(self._pipeline().store, self.config)

    def close(self):
        self.robots.close()
        self.worker.submit(self._close_database).result()
        self.worker.shutdown()
        self.readers.shutdown()


class BoundedSMTP(SMTP):
    """An SMTP session that counts itself: beyond the cap a connection gets 421 and is
    closed before any session state is made."""

    def __init__(self, handler, sessions, **kwargs):
        super().__init__(handler, **kwargs)
        self.sessions = sessions
        self.counted = False

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
    def __init__(self, handler, max_sessions: int, **kwargs):
        self.sessions = threading.BoundedSemaphore(max_sessions)
        super().__init__(handler, **kwargs)

    def factory(self):
        return BoundedSMTP(self.handler, self.sessions, **self.SMTP_kwargs)


def serve(config, host: str, port: int, ready=None):
    """Run until SIGINT or SIGTERM; `ready` is called once the port listens."""
    with open_server(config):
        pass  # refuse to start on a missing or unmigrated database, before listening
    service = MailService(config)
    controller = BoundedController(
        service,
        max_sessions=config.number("listen.max_sessions"),
        timeout=config.number("listen.idle_timeout"),
        hostname=host,
        port=port,
        data_size_limit=config.number("limits.max_message_bytes"),
        server_hostname=config.server_domain,
        ident="pbm",
    )
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    controller.start()
    log.info("pbm serve listening on %s:%s", host, port)
    if ready is not None:
        ready()
    service.robots.poke()  # robots put on move before the start
    try:
        while not stop.wait(FLUSH_EVERY_SECONDS):
            try:
                service.worker.submit(service.flush).result()
            except Exception as error:
                cause = curable_cause(error, config.home)
                if cause is None:
                    raise
                log.error("outbox flush failed: %s", cause.line())
    finally:
        controller.stop()
        service.close()
