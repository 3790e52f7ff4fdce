"""PEM, OpenSSH, PGP and PuTTY private keys: complete, torn, JSON-escaped, behind Read prefixes."""

from __future__ import annotations

import base64

import pytest
from rule_cases import B64, Case, check, fake, ids, join, neg, pos

from scrubber.detection.detector import PLAIN, ScanContext, SourceKind
from scrubber.detection.rules.private_key import (
    ENCODED_PRIVATE_KEY,
    KEY_FILE_BODY,
    PEM_PRIVATE_KEY,
    PUTTY_PRIVATE_KEY,
)

DASHES = "-" * 5


def armour(label: str, end: str = "BEGIN") -> str:
    return f"{DASHES}{end} {label}{DASHES}"


def body(seed: str, lines: int = 4, width: int = 64) -> str:
    raw = join("MII", fake(B64, width * lines - 3, seed))
    return "\n".join(raw[i : i + width] for i in range(0, len(raw), width))


RSA = join("RSA PRIVATE", " KEY")
PKCS8 = join("PRIVATE", " KEY")
OPENSSH = join("OPENSSH PRIVATE", " KEY")
PGP = join("PGP PRIVATE", " KEY BLOCK")
CERT = "CERTIFICATE"

B1 = body("rsa")
PEM = f"{armour(RSA)}\n{B1}\n{armour(RSA, 'END')}\n"
ESCAPED = PEM.replace("\n", "\\n")
NUMBERED = "\n".join(f"{i + 1:6d}→{line}" for i, line in enumerate(PEM.splitlines()))
TABBED = "\n".join(f"{i + 1}\t{line}" for i, line in enumerate(PEM.splitlines()))
TORN = f"{armour(PKCS8)}\n{body('torn', 3)}"
TORN_ESCAPED = f'"private_key": "{armour(PKCS8)}\\n{body("te", 2).replace(chr(10), chr(92) + "n")}'
ENCRYPTED_HEADERS = (
    "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0123456789ABCDEF0123456789ABCDEF\n\n"
)
PGP_BODY = join("lQWGBG", fake(B64, 58, "pgp"), "\n", fake(B64, 40, "pgp2"), "\n=8xQN")


def span_text(text: str, first: str, last: str) -> str:
    start = text.index(first)
    end = text.rindex(last) + len(last)
    return text[start:end]


B1_LINES = B1.split("\n")

CASES: list[Case] = [
    pos(PEM_PRIVATE_KEY, PEM, B1),
    pos(PEM_PRIVATE_KEY, f'{{"private_key": "{ESCAPED}"}}', B1.replace("\n", "\\n"), note="JSON-escaped"),
    pos(PEM_PRIVATE_KEY, NUMBERED, span_text(NUMBERED, B1_LINES[0], B1_LINES[-1]), note="Read → prefixes"),
    pos(PEM_PRIVATE_KEY, TABBED, span_text(TABBED, B1_LINES[0], B1_LINES[-1]), note="Read tab prefixes"),
    pos(PEM_PRIVATE_KEY, TORN, body("torn", 3), note="torn, no END"),
    pos(PEM_PRIVATE_KEY, TORN_ESCAPED, body("te", 2).replace("\n", "\\n"), note="torn and escaped"),
    pos(PEM_PRIVATE_KEY, f"{armour(RSA)}\n{ENCRYPTED_HEADERS}{B1}\n{armour(RSA, 'END')}",
        ENCRYPTED_HEADERS.rstrip("\n") + "\n\n" + B1, note="RFC 1421 headers"),
    pos(PEM_PRIVATE_KEY, f"{armour(OPENSSH)}\n{body('ssh', 5, 70)}\n{armour(OPENSSH, 'END')}",
        body("ssh", 5, 70)),
    pos(PEM_PRIVATE_KEY, f"{armour(PGP)}\n\n{PGP_BODY}\n{armour(PGP, 'END')}", PGP_BODY),
    neg(PEM_PRIVATE_KEY, f"{armour(CERT)}\n{body('cert')}\n{armour(CERT, 'END')}", note="certificate"),
    neg(PEM_PRIVATE_KEY, f'if pem.startswith("{armour(PKCS8)}"):\n    pass\nend = "{armour(PKCS8, "END")}"',
        note="code that names the armour"),
    neg(PEM_PRIVATE_KEY, f"{armour(RSA)}\n<your key here>\n{armour(RSA, 'END')}", note="placeholder"),
    neg(PEM_PRIVATE_KEY, f"{armour(PKCS8)}\n" + " " * 40 + f"\n{armour(PKCS8, 'END')}", note="masked"),
]  # fmt: skip

KEY_FILE = ScanContext(None, SourceKind.PRIVATE_KEY_FILE, "cat deploy/id_rsa")
HEADLESS = body("tail", 3)
SHORT_LAST = fake(B64, 9, "last") + "="  # what is left of the body for its last line
ESCAPED_SHORT = f"{HEADLESS}\n{SHORT_LAST}".replace("\n", "\\n")

CASES += [
    pos(PEM_PRIVATE_KEY, f"{HEADLESS}\n{armour(RSA, 'END')}\n", HEADLESS, note="END without BEGIN"),
    pos(PEM_PRIVATE_KEY, "$ cat k\n" + HEADLESS.replace("\n", "\\n") + "\\n" + armour(RSA, "END"),
        HEADLESS.replace("\n", "\\n"), note="escaped END without BEGIN"),
    neg(PEM_PRIVATE_KEY, f"see below\n{armour(RSA, 'END')}", note="END alone"),
    pos(KEY_FILE_BODY, HEADLESS, HEADLESS, context=KEY_FILE, note="progress chunk of cat id_rsa"),
    neg(KEY_FILE_BODY, HEADLESS, note="plain context"),
    neg(KEY_FILE_BODY, f"{armour(CERT)}\n{HEADLESS}\n", context=KEY_FILE, note="a certificate in a .pem"),
    pos(KEY_FILE_BODY, f"{HEADLESS}\n{SHORT_LAST}\n", f"{HEADLESS}\n{SHORT_LAST}", context=KEY_FILE,
        note="the body's short last line"),
    pos(KEY_FILE_BODY, f"{HEADLESS}\n{SHORT_LAST}", f"{HEADLESS}\n{SHORT_LAST}", context=KEY_FILE,
        note="the short last line ends the text"),
    pos(KEY_FILE_BODY, ESCAPED_SHORT, ESCAPED_SHORT, context=KEY_FILE, note="escaped, short last line"),
    pos(KEY_FILE_BODY, f"{HEADLESS}\nq9Zx\n", f"{HEADLESS}\nq9Zx", context=KEY_FILE,
        note="an unpadded random last line"),
    *(
        pos(KEY_FILE_BODY, f"{HEADLESS}\n{word}\n", HEADLESS, context=KEY_FILE,
            note=f"a word printed after the body: {word}")
        for word in ("EOF", "Done", "ok")
    ),
]  # fmt: skip

KEY_B64 = base64.b64encode(PEM.encode()).decode()
CERT_B64 = base64.b64encode(
    f"{armour(CERT)}\n{body('c')}\n{armour(CERT, 'END')}\n".encode()
).decode()
PPK_PRIVATE = "\n".join([fake(B64, 64, "ppk1"), fake(B64, 40, "ppk2")])

CASES += [
    pos(ENCODED_PRIVATE_KEY, f"    client-key-data: {KEY_B64}\n", KEY_B64),
    neg(ENCODED_PRIVATE_KEY, f"    certificate-authority-data: {CERT_B64}\n", note="certificate"),
    pos(PUTTY_PRIVATE_KEY,
        f"PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 2\n{PPK_PRIVATE}\nPrivate-MAC: {fake('0123456789abcdef', 64)}",
        PPK_PRIVATE),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_private_key(case: Case) -> None:
    check(case)


def test_two_blocks_one_torn() -> None:
    """A torn block followed by a complete one: each is found, and the first stops at its body."""
    text = f"{armour(PKCS8)}\n{body('a', 2)}\nsome words here\n{PEM}"
    spans = sorted((h.start, h.end) for h in PEM_PRIVATE_KEY.find(text, PLAIN))
    assert len(spans) == 2
    assert text[spans[0][0] : spans[0][1]] == body("a", 2)
    assert text[spans[1][0] : spans[1][1]] == B1
