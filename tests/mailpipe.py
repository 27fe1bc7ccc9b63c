"""Mail as an MTA delivers it: pbm.testing.mail's pipe and send, run through this checkout's
mail_handler.py (the script the README points an MTA at), and its inbox to read the answers."""

import functools
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from pbm.testing import mail
from pbm.testing.mail import command_mail, inbox
from tests.conftest import ROOT

MAIL_HANDLER = ROOT / "mail_handler.py"

pipe = functools.partial(mail.pipe, handler=MAIL_HANDLER, cwd=ROOT)
send = functools.partial(mail.send, handler=MAIL_HANDLER, cwd=ROOT)


def pipe_at_once(env, mails, workers: int) -> None:
    """Every mail through its own mail_handler.py process, `workers` at a time, as an MTA
    delivering in parallel; each must be taken (exit 0)."""
    with ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(lambda raw: pipe(env, raw), mails))
    assert all(r.returncode == 0 for r in results), [
        r.stderr[-500:] for r in results if r.returncode
    ]


WITH_MODULES = """
import atexit, json, runpy, sys
atexit.register(lambda: print("modules:", json.dumps(sorted(sys.modules)), file=sys.stderr))
sys.argv = ["mail_handler.py"]
runpy.run_path("mail_handler.py", run_name="__main__")
"""


def modules_loaded_by(env, raw: bytes) -> list[str]:
    """The modules mail_handler.py loaded while it handled the mail."""
    result = subprocess.run(
        [sys.executable, "-c", WITH_MODULES],
        input=raw,
        env=env,
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr.decode()
    (listing,) = [
        line for line in result.stderr.decode().splitlines() if line.startswith("modules: ")
    ]
    return json.loads(listing.removeprefix("modules: "))


__all__ = [
    "MAIL_HANDLER",
    "command_mail",
    "inbox",
    "modules_loaded_by",
    "pipe",
    "pipe_at_once",
    "send",
]
