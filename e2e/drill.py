"""The replication drill's players and bookkeeping (test_replication_drill.py).

Four pairs of players each play Lox boards, one move at a time, through the pipe
(mail_handler.py run as pbm, as Postfix's pipe runs it) or over SMTP to `pbm serve`. A move
counts as acknowledged when the handler exits 0, or when `pbm serve` answers 250; the time
of that is kept with the board's seed (which tells a board from a later one given the same
number) and its ply. At a kill every process of the home is ended with SIGKILL, by the ids
the drill started them with. The database's own log is the truth the players read their
boards from, before each move and after each restore."""

import os
import random
import signal
import smtplib
import subprocess
import threading
import time
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import make_msgid

from conftest import INSTALL_DIR, PBM_HOME, SERVER

from pbm.store import Store

GAME, SIZE = "lox", "9"
PLIES_A_BOARD = 40  # then a new board: no board gets near its end or a forced pass
PASSWORD = "drill-pass"
DOMAIN = "drill.test"
RETRY_SECONDS = 0.3
# Four pairs: four mail processes (or SMTP sessions) at once.
PAIRS = [(f"drill{n}a", f"drill{n}b") for n in range(1, 5)]
PYTHON = INSTALL_DIR / ".venv" / "bin" / "python"


@dataclass(frozen=True)
class Ack:
    """A move the server acknowledged: exit 0 or 250, at `at` (time.monotonic())."""

    number: int
    seed: int
    ply: int
    cell: str
    at: float


@dataclass
class Round:
    acks: list = field(default_factory=list)
    retried: int = 0  # mails left with the sender to retry (exit 75, 451)
    killed_at: float | None = None


def as_pbm_argv(user: str, group: str, *argv, env=()):
    """argv run as the pbm user by exec, so that the id the drill holds is the process's."""
    return [
        "setpriv",
        f"--reuid={user}",
        f"--regid={group}",
        "--init-groups",
        "--reset-env",
        "env",
        *env,
        *argv,
    ]


class Home:
    """Reading the live database (or a restored one) as the players' truth."""

    def __init__(self, path=PBM_HOME / "pbm.db"):
        self.path = path

    def board_of(self, userid):
        """(number, seed, seat userids, plies) of the pair's newest active board, or None."""
        store = Store.open_read_only(self.path)
        try:
            boards = [b for b in store.boards.active_of_user(userid) if b.game == GAME]
            if not boards:
                return None
            board = max(boards, key=lambda b: b.number)
            return (
                board.number,
                board.seed,
                store.boards.seat_userids(board.id),
                [p.text for p in store.boards.plies(board.id)],
            )
        finally:
            store.close()

    def played(self, number, seed, ply, cell) -> bool:
        store = Store.open_read_only(self.path)
        try:
            board = store.boards.get(GAME, number)
            if board is None or board.seed != seed:
                return False
            return any(
                p.ply == ply and p.text.lower() == cell for p in store.boards.plies(board.id)
            )
        finally:
            store.close()

    def moves(self) -> set:
        """(number, seed, ply, cell) of every live ply of every Lox board."""
        store = Store.open_read_only(self.path)
        try:
            found = set()
            for board in store.boards.of_game(GAME, include_archived=True):
                for ply in store.boards.plies(board.id):
                    found.add((board.number, board.seed, ply.ply, ply.text.lower()))
            return found
        finally:
            store.close()

    def integrity(self) -> str:
        store = Store.open_read_only(self.path)
        try:
            return store.integrity_check()
        finally:
            store.close()


class Drill:
    """The players of one run, the processes they started, and the kill."""

    def __init__(self, transport: str, user: str, group: str):
        self.transport = transport  # "pipe" or "serve"
        self.user, self.group = user, group
        self.pairs = PAIRS
        self.home = Home()
        self.lock = threading.Lock()
        self.live: set = set()  # processes of the home, by the Popen the drill holds
        self.killing = False
        self.port = None
        self.round = Round()
        self.rounds: list[Round] = []
        self.errors: list[str] = []

    # -- the processes of the home --------------------------------------------------------

    def start(self, argv, env=(), **kwargs) -> subprocess.Popen | None:
        """A process of the home (`env`: NAME=value settings), unless the kill has begun."""
        with self.lock:
            if self.killing:
                return None
            command = as_pbm_argv(self.user, self.group, *argv, env=env)
            process = subprocess.Popen(command, **kwargs)
            self.live.add(process)
            return process

    def ended(self, process):
        with self.lock:
            self.live.discard(process)

    def kill_everything(self) -> float:
        """SIGKILL to every process of the home at once; the moment of the kill."""
        with self.lock:
            self.killing = True
            for process in self.live:
                try:
                    os.kill(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            moment = time.monotonic()
            processes, self.live = list(self.live), set()
        for process in processes:
            process.wait()
        self.round.killed_at = moment
        return moment

    def next_round(self):
        self.rounds.append(self.round)
        self.round = Round()
        self.killing = False

    # -- playing -------------------------------------------------------------------------

    def play(self, until_acks: int, jitter: float, seed: int):
        """The players play until this round has `until_acks` acknowledged moves and then
        `jitter` seconds more; then everything is killed. Returns the kill's moment."""
        from pbm.plugins import load_game

        self.game = load_game(GAME)  # once: the players' threads share it
        stop = threading.Event()
        players = [
            threading.Thread(target=self._player, args=(pair, stop, seed * 100 + n), daemon=True)
            for n, pair in enumerate(self.pairs)
        ]
        for thread in players:
            thread.start()
        deadline = time.monotonic() + 600
        while len(self.round.acks) < until_acks and not self.errors:
            assert time.monotonic() < deadline, "the players stalled"
            time.sleep(0.02)
        time.sleep(jitter)
        moment = self.kill_everything()
        stop.set()
        for thread in players:
            thread.join(timeout=120)
        assert not self.errors, self.errors
        return moment

    def _player(self, pair, stop, seed):
        game, rng = self.game, random.Random(seed)
        sender = _SmtpSender(self) if self.transport == "serve" else _PipeSender(self)
        try:
            while not stop.is_set() and not self.killing:
                board = self.home.board_of(pair[0])
                state = None
                if board is not None:
                    number, board_seed, seats, plies = board
                    state = game.initial_state(game.parse_options({"size": SIZE}, 2), 2, 0)
                    for ply, text in enumerate(plies):
                        state = game.apply_move(state, ply % 2, text)
                    seat = game.to_move(state)
                    cells = sorted(m for m in game.legal_moves(state, seat) if m != "swap")
                if board is None or len(plies) >= PLIES_A_BOARD or not cells or game.outcome(state):
                    sender.send(pair[0], f"{GAME} challenge {pair[0]} {pair[1]} -size={SIZE}")
                    continue
                cell, ply = rng.choice(cells), len(plies) + 1
                mover = seats[seat]
                at = sender.send(mover, f"{GAME} move {number} {mover} {PASSWORD} {cell}#{ply}")
                if at is None:
                    continue
                self.round.acks.append(Ack(number, board_seed, ply, cell, at))
                if not self.home.played(number, board_seed, ply, cell):
                    self.errors.append(
                        f"{pair}: move {number}#{ply} {cell} acknowledged, not played"
                    )
                    return
        except Exception as error:  # the kill ends a player as it ends the server
            if not self.killing:
                self.errors.append(f"{pair}: {type(error).__name__}: {error}")
        finally:
            sender.close()


def command_mail(userid: str, subject: str) -> bytes:
    message = EmailMessage()
    message["From"] = f"{userid}@{DOMAIN}"
    message["To"] = SERVER
    message["Subject"] = subject
    message["Message-ID"] = make_msgid(domain=DOMAIN)
    message.set_content("drill\n")
    return message.as_bytes()


class _PipeSender:
    """Each mail into mail_handler.py as Postfix's pipe runs it; exit 75 is retried."""

    def __init__(self, drill):
        self.drill = drill

    def send(self, userid, subject):
        """The moment of the acknowledgement, or None when the kill came first."""
        raw = command_mail(userid, subject)
        while not self.drill.killing:
            process = self.drill.start(
                [str(PYTHON), str(INSTALL_DIR / "mail_handler.py")],
                env=(f"PBM_HOME={PBM_HOME}", f"SENDER={userid}@{DOMAIN}"),
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            if process is None:
                return None
            try:
                _, err = process.communicate(raw, timeout=300)
            finally:
                self.drill.ended(process)
            moment = time.monotonic()
            if process.returncode == 0:
                return moment
            if process.returncode != os.EX_TEMPFAIL:
                if not self.drill.killing:
                    raise AssertionError(f"exit {process.returncode}: {err.decode()[-800:]}")
                return None
            self.drill.round.retried += 1
            time.sleep(RETRY_SECONDS)
        return None

    def close(self):
        pass


class _SmtpSender:
    """Each mail over SMTP to `pbm serve`, one session a player; 451 is retried."""

    def __init__(self, drill):
        self.drill = drill
        self.client = None

    def send(self, userid, subject):
        raw = command_mail(userid, subject)
        while not self.drill.killing:
            try:
                if self.client is None:
                    self.client = smtplib.SMTP("127.0.0.1", self.drill.port, timeout=300)
                self.client.sendmail(f"{userid}@{DOMAIN}", [SERVER], raw)
                return time.monotonic()
            except smtplib.SMTPResponseException as error:
                if error.smtp_code != 451:
                    raise
                self.drill.round.retried += 1
                time.sleep(RETRY_SECONDS)
            except (OSError, smtplib.SMTPServerDisconnected):
                self.client = None
                if not self.drill.killing:
                    raise
        return None

    def close(self):
        if self.client is not None:
            try:
                self.client.quit()
            except (OSError, smtplib.SMTPException):
                pass
