"""Mail as an MTA delivers it: pbm.testing.mail's pipe and send, run through this checkout's
mail_handler.py (the script the README points an MTA at), and its inbox to read the answers."""

import functools

from pbm.testing import mail
from pbm.testing.mail import command_mail, inbox
from tests.conftest import ROOT

MAIL_HANDLER = ROOT / "mail_handler.py"

pipe = functools.partial(mail.pipe, handler=MAIL_HANDLER, cwd=ROOT)
send = functools.partial(mail.send, handler=MAIL_HANDLER, cwd=ROOT)

__all__ = ["MAIL_HANDLER", "command_mail", "inbox", "pipe", "send"]
