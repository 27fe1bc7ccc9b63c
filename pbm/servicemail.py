"""Mail to the server's service addresses, which carry no command (docs/spec/server.md
§5.9, §5.10): bounces to the VERP sender of our mail (bounces.py) and List-Unsubscribe
requests by mail (unsubscribe.py). Imported by every mail, so it only looks at the recipients;
the modules that act are loaded for the mails that need them."""

BOUNCE_MARK = "+bounce-"
UNSUBSCRIBE_MARK = "+unsubscribe-"


def service_mail(config, message, raw: bytes, recipients, readable: bool):
    """What a mail to a service address asks for (an object with `run(ctx)` and
    `answered`), or None for a mail to any other address. `readable`: the whole mail could
    be parsed (not too large, not beyond the bounds); a bounce that is not is recorded as
    saying nothing."""
    for recipient in recipients:
        lowered = recipient.lower()
        if BOUNCE_MARK in lowered:
            from .bounces import BounceReport, parse_bounce_recipient, read_failure

            bounce_id = parse_bounce_recipient(config, recipient)
            if bounce_id is not None:
                failure = read_failure(message, raw) if readable else None
                return BounceReport(bounce_id, failure)
        if UNSUBSCRIBE_MARK in lowered:
            from .unsubscribe import UnsubscribeByMail, token_of_recipient

            token = token_of_recipient(config, recipient)
            if token is not None:
                return UnsubscribeByMail(token)
    return None
