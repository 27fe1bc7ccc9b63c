"""`pbm serve`: receive mail over SMTP (aiosmtpd) and run each message through the same
pipeline as mail_handler.py. One worker thread owns the database connection, so commands
are written one at a time, as by a single MTA pipe; replies go out the same way."""

import asyncio
import logging
import signal
import threading
from concurrent.futures import ThreadPoolExecutor

from aiosmtpd.controller import Controller

from .dispatch import is_transient, open_server
from .mailin import read_message
from .security import EarlyCheck, PasswordCache

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
        try:
            prepared = await loop.run_in_executor(
                self.readers, self._prepare, raw, envelope.mail_from or ""
            )
            await loop.run_in_executor(self.worker, self._process, *prepared)
        except Exception as error:
            if is_transient(error):
                log.warning("temporary failure, the client should retry: %s", error)
                return "451 4.3.0 Temporary failure, please try again later"
            log.exception("unexpected failure outside a command")
        return "250 2.0.0 Message accepted"

    def _prepare(self, raw: bytes, envelope_sender: str):
        """Parse the message and check its password, off the writer's thread."""
        from .grammar import password_of

        request, refusal = read_message(self.config, raw, len(raw), envelope_sender)
        early = None
        if request is not None and refusal is None:
            pair = password_of(request.text)
            if pair is not None:
                stored = self._reader_store().users.password_hash(pair[0])
                early = EarlyCheck(*pair, stored, cache=self.passwords, background=False)
        return request, refusal, early

    def _reader_store(self):
        from .store import Store

        if getattr(self._local, "store", None) is None:
            self._local.store = Store.open(self.config.db_path)
        return self._local.store

    def _process(self, request, refusal, early):
        if request is None:
            return
        server = self._pipeline()
        if refusal is not None:
            server.refuse_message(request, refusal)
        else:
            server.execute(request, early=early)

    def _pipeline(self):
        if self._server is None:
            self._opened = open_server(self.config)
            self._server = self._opened.__enter__()
        return self._server

    def flush(self):
        from .mailout import flush

        flush(self._pipeline().store, self.config)

    def close(self):
        def shut():
            if self._opened is not None:
                self._opened.__exit__(None, None, None)

        self.worker.submit(shut).result()
        self.worker.shutdown()
        self.readers.shutdown()


def serve(config, host: str, port: int, ready=None):
    """Run until SIGINT or SIGTERM; `ready` is called once the port listens."""
    with open_server(config):
        pass  # refuse to start on a missing or unmigrated database, before listening
    service = MailService(config)
    controller = Controller(
        service,
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
    try:
        while not stop.wait(FLUSH_EVERY_SECONDS):
            service.worker.submit(service.flush).result()
    finally:
        controller.stop()
        service.close()
