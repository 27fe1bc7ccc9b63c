"""`pbm serve`'s mail read in processes of their own (issue 31): parsing a mail and its
early password check (the gate's reads, argon2) cost the server a third of its CPU a
move, and under load the server is held to one core by its GIL. A reader process takes a
mail's bytes and envelope and gives back the Request, the refusal and the early check
(security.EarlyCheck, its verdict reached), as intake.read_for_command gives them.

The frame each way: four bytes of length (big-endian), then a pickle. Pickles cross only
between `pbm serve` and the processes it started, over a socket pair of their own; what
a mail carries is never unpickled, only read by the reader. A reader that dies (or sends
no frame) costs its mail a 451, and a new one is started for the next mail."""

import asyncio
import ctypes
import logging
import os
import pickle
import signal
import socket
import struct
import subprocess
import sys
import threading

from .failures import TransientError
from .grammar import password_of
from .security import EarlyCheck, PasswordCache, password_check_needed
from .store import Store

log = logging.getLogger("pbm.serve")
LENGTH = struct.Struct(">I")
PR_SET_PDEATHSIG = 1  # linux/prctl.h


class ReaderChecks:
    """The early password check of a reader: its own connection to the database, its
    cache of successful checks, at most `parallel` argon2 checks at once."""

    def __init__(self, config, parallel: int):
        self.config = config
        self.passwords = PasswordCache()
        self.gate = threading.BoundedSemaphore(parallel)
        self._local = threading.local()

    def early_check(self, config, request):
        pair = password_of(request.text)
        if pair is None:
            return None
        try:
            store = self._store()
            if not password_check_needed(store, self.config, request, pair[0]):
                return None
            stored = store.users.password_hash(pair[0])
        except Exception:
            store, self._local.store = getattr(self._local, "store", None), None
            if store is not None:  # reopened next time, like the writer's
                store.close()
            raise
        with self.gate:
            return EarlyCheck(*pair, stored, cache=self.passwords, background=False)

    def _store(self):
        if getattr(self._local, "store", None) is None:
            self._local.store = Store.open(self.config.db_path)
        return self._local.store


class Reader:
    """One reader process and the server's end of its socket pair."""

    def __init__(self, home):
        ours, theirs = socket.socketpair()
        with theirs:
            self.process = subprocess.Popen(
                # -P: the server's working folder is not searched for modules
                [
                    sys.executable,
                    "-P",
                    "-m",
                    "pbm.readerpool",
                    str(theirs.fileno()),
                    str(os.getpid()),
                ],
                pass_fds=[theirs.fileno()],
                env=dict(os.environ, PBM_HOME=str(home)),
            )
        self.socket = ours
        self.streams = None

    async def read(self, work: tuple):
        if self.streams is None:
            self.streams = await asyncio.open_connection(sock=self.socket)
        reader, writer = self.streams
        frame = pickle.dumps(work, protocol=pickle.HIGHEST_PROTOCOL)
        writer.write(LENGTH.pack(len(frame)) + frame)
        await writer.drain()
        (length,) = LENGTH.unpack(await reader.readexactly(LENGTH.size))
        return pickle.loads(await reader.readexactly(length))

    def close(self):
        if self.streams is not None:
            try:  # off its event loop first: a new socket may get the same number
                self.streams[1].close()
            except RuntimeError:  # the event loop is closed: nothing to take it off
                pass
        self.socket.close()
        try:
            self.process.wait(timeout=10)  # it ends at the end of its stream
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class ReaderPool:
    """`size` reader processes, started at the first mail; each reads one mail at a time.
    A sender's mails go to the same reader, whose cache of checks then knows its pair:
    each reader paid argon2 again for each player it had not seen."""

    def __init__(self, config, size: int):
        self.config = config
        self.readers: list[Reader | None] = [None] * size
        self.turns: list[asyncio.Lock] | None = None

    async def read(self, raw: bytes, size: int, sender: str, recipients: list[str]):
        """(request, refusal, early) for the mail, or None when it gets no answer; raises
        what the reading raised, or TransientError when the reader died."""
        if self.turns is None:  # made on the event loop that uses them
            self.turns = [asyncio.Lock() for _ in self.readers]
        index = hash(sender.lower()) % len(self.readers)
        async with self.turns[index]:
            reader = self.readers[index]
            if reader is None:
                reader = self.readers[index] = Reader(self.config.home)
            try:
                kind, value = await reader.read((raw, size, sender, recipients))
            except Exception as error:  # its stream is no longer in step: a new reader
                log.error("a reader process ended: %r", error)
                self.readers[index] = None  # a new one for the next mail
                reader.close()
                raise TransientError("a reader process ended while reading the mail") from None
        if kind == "error":
            raise value
        return value

    def close(self):
        for reader in self.readers:
            if reader is not None:
                reader.close()
        self.readers = [None] * len(self.readers)


def die_with(server_pid: int) -> None:
    """A reader lives no longer than its server (Linux's parent-death signal): when a kill
    ends `pbm serve` (a lost host, as the restore drill plays it), its readers end at once
    too, touching nothing of the home. Left to find the end of their stream, they closed
    the database after the kill and SQLite removed its files."""
    prctl = getattr(ctypes.CDLL(None), "prctl", None)
    if prctl is not None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != server_pid:  # the server was gone before the signal was set
        os._exit(0)


def serve_reads(connection: socket.socket) -> None:
    """A reader process: mails in, (request, refusal, early) out, until the stream ends."""
    # deferred: the reader process's own start
    from . import commands  # noqa: F401  (the command table says where passwords stand)
    from .config import Config, resolve_home
    from .failures import curable_cause
    from .intake import read_for_command
    from .mailin import setup_logging

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for `pbm serve`, which ends us
    config = Config.load(resolve_home())
    setup_logging(config)
    checks = ReaderChecks(config, parallel=1)
    stream = connection.makefile("rwb")
    while header := stream.read(LENGTH.size):
        (length,) = LENGTH.unpack(header)
        raw, size, sender, recipients = pickle.loads(stream.read(length))
        try:
            answer = ("read", read_for_command(config, raw, size, sender, recipients, checks))
            frame = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as error:
            if curable_cause(error, config.home) is None:  # its traceback stays here
                log.exception("a reader process: unexpected failure reading a mail")
            frame = pickle.dumps(("error", _portable(error)), protocol=pickle.HIGHEST_PROTOCOL)
        stream.write(LENGTH.pack(len(frame)) + frame)
        stream.flush()


def _portable(error: Exception) -> Exception:
    """The error as it can cross to the server: itself, or a RuntimeError naming it."""
    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:
        return RuntimeError(f"{type(error).__name__}: {error}")


if __name__ == "__main__":
    die_with(int(sys.argv[2]))
    serve_reads(socket.socket(fileno=int(sys.argv[1])))
