"""The robots of `pbm serve` (docs/spec/server.md §11.7): a thread of their own reads the
boards and searches, and hands each decided command to the writer as any other command,
so the writer never waits for a search."""

import logging
import threading

from ..dispatch import open_server
from .runner import report_to_operator, run_robots

log = logging.getLogger("pbm.robots")
ROUND_SECONDS = 300  # one round's bound; a poke during a round starts another after it


class RobotThread:
    def __init__(self, config, run_on_writer):
        """`run_on_writer(function)` runs function(server) on the writer's thread and
        returns its result."""
        self.config = config
        self.run_on_writer = run_on_writer
        self.wake = threading.Event()
        self.stopping = False
        self.thread = threading.Thread(target=self._loop, name="pbm-robots", daemon=True)
        self.thread.start()

    def poke(self):
        """A command has committed: a robot may be on move now."""
        self.wake.set()

    def close(self):
        self.stopping = True
        self.wake.set()
        self.thread.join()

    def _submit(self, text, grant):
        return self.run_on_writer(lambda server: server.execute_for_robot(text, grant))

    def _report(self, kind, line):
        report_to_operator(self.config.home, kind, line)

    def _loop(self):
        # Its own connection, kept between rounds: reading and searching never hold the
        # writer's, and a round with no robot on move costs a query, not a new server
        # (0.5 ms of CPU under the writer's GIL after every commit).
        opened = server = None
        while True:
            self.wake.wait()
            self.wake.clear()
            if self.stopping:
                break
            try:
                if server is None:
                    opened = open_server(self.config)
                    server = opened.__enter__()
                run_robots(server, self._submit, self._report, ROUND_SECONDS, lambda: self.stopping)
            except Exception:
                log.exception("the robots' round failed; the next command starts another")
                opened, server = self._closed(opened), None  # reopened: the cure is seen
        self._closed(opened)

    @staticmethod
    def _closed(opened):
        if opened is not None:
            try:
                opened.__exit__(None, None, None)
            except Exception as error:
                log.warning("closing the robots' database: %s", error)
        return None
