"""Mail as an MTA delivers it: pbm.testing.mail's pipe and send, run through this checkout's
mail_handler.py (the script the README points an MTA at), and its inbox to read the answers."""

import functools
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


__all__ = ["MAIL_HANDLER", "command_mail", "inbox", "pipe", "pipe_at_once", "send"]
