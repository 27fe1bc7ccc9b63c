"""The pipe's mail handed to a running `pbm serve` (issue 31): mail_handler.py connects to
the Unix socket `serve.sock` in the home and, when `pbm serve` listens there, sends the
mail and exits with its answer. The mail then costs a bare Python start and the command's
work in the server, where pbm is loaded and the database open already; without a server
the pipe handles the mail itself, as before.

The frame, written by mail_handler.py (which loads nothing of pbm's to write it): a line
with the length of the environment block; the block, `NAME=value` entries each ended by
a NUL, of the pipe's envelope variables only; then the mail until the end of the stream.
The answer is one line: `0`, or `75 <cause>` for a mail to be retried.

The socket is the owner's only (0600, in the private home): whoever may write it could run
mail_handler.py with any $SENDER just as well."""

import logging
import os
import socketserver
import threading
from pathlib import Path

from .intake import process_message
from .mailin import read_limited, recipients_from_environment

log = logging.getLogger("pbm.serve")
SOCKET_NAME = "serve.sock"  # mail_handler.py has its own copy: it must not import pbm
ENVELOPE_VARIABLES = ("SENDER", "ORIGINAL_RECIPIENT", "RECIPIENT")
MAX_ENVIRONMENT_BYTES = 65536
# AF_UNIX takes at most 107 bytes of path: a home deeper than that gets no handoff.
MAX_SOCKET_PATH_BYTES = 107


def read_environment(stream) -> dict[str, str]:
    """The envelope variables of a frame; ValueError when it is not one."""
    length = int(stream.readline(16))
    if not 0 <= length <= MAX_ENVIRONMENT_BYTES:
        raise ValueError(f"an environment block of {length} bytes")
    block = stream.read(length)
    if len(block) != length:
        raise ValueError("the frame ends inside its environment block")
    environ = {}
    for entry in block.split(b"\0")[:-1]:
        name, _, value = os.fsdecode(entry).partition("=")
        if name in ENVELOPE_VARIABLES:
            environ[name] = value
    return environ


class HandoffServer(socketserver.UnixStreamServer):
    """Each connection is one mail, read and run on the service's reader threads, as a
    mail over SMTP is: its command joins the writer's next group."""

    def __init__(self, service, path: Path):
        self.service = service
        self.path = path
        self.thread = None
        super().__init__(str(path), HandoffRequest, bind_and_activate=False)
        path.unlink(missing_ok=True)  # left by a pbm serve that was killed
        try:
            self.server_bind()
            os.chmod(path, 0o600)
            self.server_activate()
        except BaseException:
            self.server_close()
            raise

    def start(self):
        self.thread = threading.Thread(target=self.serve_forever, name="pbm-handoff", daemon=True)
        self.thread.start()

    def stop(self):
        """No new mail: the one being read finishes on its reader thread."""
        if self.thread is not None:
            self.shutdown()
            self.thread.join()
        self.server_close()

    def process_request(self, request, client_address):
        self.service.readers.submit(self._handle, request, client_address)

    def _handle(self, request, client_address):
        try:
            self.finish_request(request, client_address)
        except Exception:
            log.exception("a mail handed over by mail_handler.py")
        finally:
            self.shutdown_request(request)

    def server_close(self):
        super().server_close()
        self.path.unlink(missing_ok=True)


class HandoffRequest(socketserver.StreamRequestHandler):
    def handle(self):
        service, config = self.server.service, self.server.service.config
        self.connection.settimeout(config.number("listen.idle_timeout"))
        try:
            environ = read_environment(self.rfile)
        except ValueError as error:
            self.wfile.write(f"75 pbm serve could not read the handoff: {error}\n".encode())
            return
        raw, size = read_limited(self.rfile, config.number("limits.max_message_bytes"))
        outcome = process_message(
            raw,
            size,
            environ.get("SENDER"),
            pipeline=service,
            config=config,
            envelope_recipients=recipients_from_environment(environ),
        )
        answer = "0" if outcome.consumed else f"75 {outcome.cause.line()}"
        self.wfile.write(answer.encode(errors="replace") + b"\n")


def open_handoff(service) -> HandoffServer | None:
    """The handoff socket of the service's home, bound and listening; None (and a warning)
    when the home's path is too long for a Unix socket."""
    path = service.config.home / SOCKET_NAME
    if len(os.fsencode(path)) > MAX_SOCKET_PATH_BYTES:
        log.warning("no handoff from mail_handler.py: %s is too long for a Unix socket", path)
        return None
    return HandoffServer(service, path)
