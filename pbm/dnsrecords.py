"""The DNS records that let providers trust the server's mail (docs/delivery.md): SPF for
the envelope domain, DKIM for the key the MTA's milter signs with, and DMARC, which asks
both to align with the From domain. `pbm check` prints them for the configured domain."""

import re

PEM_RE = re.compile(
    r"-----BEGIN PUBLIC KEY-----(?P<body>[A-Za-z0-9+/=\s]+)-----END PUBLIC KEY-----"
)
QUOTED_RE = re.compile(r'"([^"]*)"')
KEY_RE = re.compile(r"(?:^|;)\s*p=([A-Za-z0-9+/=]+)")


def public_key_value(text: str) -> str | None:
    """The base64 `p=` of a DKIM record, from a PEM public key or from the record file
    opendkim-genkey writes (a zone line of quoted strings); None when neither is found."""
    pem = PEM_RE.search(text)
    if pem is not None:
        return "".join(pem.group("body").split())
    strings = QUOTED_RE.findall(text)
    record = "".join(strings) if strings else text
    found = KEY_RE.search("".join(record.split()))
    return found.group(1) if found else None


def dns_records(config) -> list[str]:
    """One line per record to publish (zone-file form), then a note for what is missing."""
    domain = config.server_domain
    report = config.get("server.operator_address") or f"postmaster@{domain}"
    lines = [
        f'{domain}.  TXT  "v=spf1 mx a -all"',
        f'_dmarc.{domain}.  TXT  "v=DMARC1; p=quarantine; adkim=s; aspf=s; rua=mailto:{report}"',
    ]
    selector, path = config.get("dkim.selector"), config.get("dkim.public_key")
    if not selector or not path:
        return lines + [
            "DKIM: set [dkim] selector and public_key in pbm.ini to the milter's key "
            "(docs/delivery.md) to see its record"
        ]
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            key = public_key_value(handle.read(65536))
    except OSError as error:
        return lines + [f"DKIM: cannot read {path}: {error.strerror}"]
    if key is None:
        return lines + [f"DKIM: {path} holds no public key (PEM, or a v=DKIM1 record)"]
    record = f"v=DKIM1; k=rsa; p={key}"
    # A TXT string holds 255 characters at most; a longer record is several strings.
    strings = " ".join(f'"{record[i : i + 255]}"' for i in range(0, len(record), 255))
    return lines + [f"{selector}._domainkey.{domain}.  TXT  {strings}"]
