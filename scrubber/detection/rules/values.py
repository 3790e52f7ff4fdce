"""What a value that is obviously not a secret looks like, and what a credential-like name is.

Shared by the rules that find a secret by its label rather than by its shape (`.env` lines,
connection strings, credential files, headers). Each predicate answers one question about a
candidate value; none of them ever returns or logs the value itself.
"""

from __future__ import annotations

import re

# `${VAR}`, `$VAR`, `$(cmd)`, `%(name)s`, `%s`, `{name}`, `{{ var }}`, `<your-token>`, `[REDACTED:…]`,
# `#{var}` (Ruby), `@var@` (Maven filtering): references to a value kept elsewhere.
_PLACEHOLDER = re.compile(
    r"""^(?:
        \$\{[^}]*\}?.*            # ${VAR}, ${VAR:-default}
      | \$\(.*                    # $(command)
      | \$[A-Za-z_][A-Za-z0-9_]*\b.*   # $VAR
      | \$\$?[0-9*@#?]            # $1, $@, $$
      | %\([A-Za-z_]\w*\)[sdr]    # %(name)s
      | \{\{.*\}\}?               # {{ template }}
      | \{.*                      # {name}, {0}, {PW[::-1]}, an unfinished f-string
      | \#\{[^}]*\}               # #{ruby}
      | <[^<>]{1,80}>             # <your token here>
      | @[A-Za-z_][\w.]*@         # @maven.property@
      | \[REDACTED[:\]].*         # our own placeholders
      | `.*                       # shell command substitution
      | (?i:your|my|insert|enter|replace|put|paste|add)[-_\s].*   # your_api_key_here
      | .*[-_](?i:here|goes|placeholder|example|redacted|changeme)  # token_goes_here
      | (?i:example|sample|dummy|fake)[-_].*   # EXAMPLE-PASSWORD
      | (?:%[-+\s\#0]*\d*(?:\.\d+)?[sdrvqxifgeu]\W*)+   # printf formats: %s, %-8s, %s:%s
      | [A-Z_]*(?:TOKEN|KEY|SECRET|PASSWORD|PASS)[A-Z0-9_]*  # MYTOKEN1, APIKEY
      | [^A-Za-z0-9]+             # punctuation only: `:****`, `--`
      | [A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+   # an environment variable's name: MY_API_TOKEN
    )$""",
    re.VERBOSE | re.DOTALL,
)
# A run of one character (`***`, `xxxxxxxx`, `........`) or an obvious filler.
_FILLER = re.compile(r"^(.)\1{2,}$|^(?:x+|X+|\*+|\.+|-+|_+|#+|0+|1234(?:5(?:6(?:7(?:8)?)?)?)?)$")
_LITERALS = frozenset(
    {
        "true", "false", "null", "nil", "none", "undefined", "yes", "no", "on", "off", "empty",
        "redacted", "masked", "hidden", "secret", "password", "passwd", "token", "changeit",
        "required", "optional", "default", "string", "str", "text", "bool", "boolean", "int",
        "integer", "number", "float", "double", "any", "object", "bytes", "char", "varchar",
        "secretstr", "unknown", "example", "sample", "dummy", "placeholder", "your_token",
        "your_password", "your-password", "your-token", "your_api_key", "api_key", "apikey",
        "env", "prompt", "ask", "input", "auto", "generated", "random", "todo", "tbd", "fixme",
        "n/a", "na", "notset", "not_set", "unset", "bearer", "basic", "pass", "user", "username",
        "changeme", "change_me", "change-me", "changethis", "all", "none_set",
    }
)  # fmt: skip
_NUMBER = re.compile(r"^[+-]?(?:\d[\d_,]*)?(?:\.\d+)?(?:[eE][+-]?\d+)?[kKmMgG%]?$")
_VERSION = re.compile(r"^v?\d+(?:\.\d+){1,3}(?:[-+][0-9A-Za-z.]+)?$")
_HEX_NUMBERS = re.compile(r"^(?:0x[0-9A-Fa-f]+|\d+)(?:[:.,/](?:0x[0-9A-Fa-f]+|\d+))*$")
# Code, not a literal: calls, subscripts, attribute chains, type annotations.
_CODE = re.compile(
    r"""^(?:
        [A-Za-z_][\w.]*\s*[(\[{].*                       # call, subscript, struct literal
      | (?:self|this|cls|ctx|req|request|res|config|conf|cfg|settings|options|opts|args|params|
           props|process|os|env|window|document|app|data|os\.environ|import\.meta)\.[\w.\[\]'"]+
      | [A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+                    # attribute chain: config.db.password
      | (?:Optional|Union|List|Dict|Mapping|Sequence|Secret|SecretStr|Annotated)\b.*
      | (?:str|string|int|bool|number|bytes|String|Option<.*>)(?:\s*[|;,?=]|\s*$).*
      | new\s+[A-Z]\w*.*                                 # new Foo(...)
      | (?:await|yield|lambda|function|fn|async|return|import|from|new|typeof|not|require)\b.*
      | [A-Za-z_][\w.]*\s*(?:\|\||&&|\?\?).*             # fallbacks: a || b, a ?? b
      | [A-Za-z_][\w.]*\s+(?:\+|\||\?|or|and|if)\s.*        # expressions: a + b, a if c
    )$""",
    re.VERBOSE,
)
# Interpolation (`f"{x}"`, `${x}`) and regular expressions (`(?:a|b)`, `[a-z0-9]{64}`, `\d+`):
# templates and patterns, whatever characters they mix.
_TEMPLATE_OR_REGEX = re.compile(
    r"\$\{|\{[A-Za-z_][^{}]{0,80}\}|\(\?[:=!<P]|\\[dwsbDWS]|\[\^|\.\*|\.\+"
    r"|\[[A-Za-z0-9]-[A-Za-z0-9][^\]]*\][{*+?]"
)
# PasswordStr, SecretValue, Base64Encoder: each part a capital, lower-case letters, then maybe
# digits. A generated token that happens to start upper-case (`Hx8kq2Lm9Zp4`) puts digits
# between letters and is no type name.
_CAMEL_TYPE = re.compile(r"^[A-Z][a-z]+\d*(?:[A-Z][a-z]+\d*)+[?!]?$")
_CAMEL_NAME = re.compile(r"^[A-Za-z][a-z]+(?:[A-Z][a-z]+)+$|^(?:[A-Z][a-z]+)+$")
_DASHED_UPPER = re.compile(r"^[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+$")
# Words of mechanism and algorithm names (SASL, TLS cipher suites, JOSE): a dashed upper-case
# value made of them is a name; one of generated groups (`IZAT6SA-AJUQES1-…`) is a key.
_MECHANISM_WORDS = re.compile(
    r"(?:^|-)(?:SHA\d*|MD5|AES\d*|GCM|CBC|CTR|RSA|DSA|ECDSA|ECDHE?|DHE?|HMAC|DES|3DES|TLS|SSL|"
    r"SCRAM|CRAM|PLAIN|LOGIN|GSSAPI|OAUTHBEARER|DIGEST|PBKDF2|HS\d+|RS\d+|ES\d+|PS\d+|\d+)(?=-|$)"
)


def _is_mechanism_name(value: str) -> bool:
    """`CRAM-MD5`, `SCRAM-SHA-256`, `ECDHE-RSA-AES128-GCM-SHA256`: short, or mostly known words."""
    if not _DASHED_UPPER.match(value):
        return False
    groups = value.split("-")
    known = sum(
        1 for g in groups if _MECHANISM_WORDS.fullmatch("-" + g) or _MECHANISM_WORDS.fullmatch(g)
    )
    return len(value) < 20 or known * 2 >= len(groups)


_PURE_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z_]*$")
_EMAIL = re.compile(r"^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")
_PATH = re.compile(r"^(?:~|\.{1,2})?/[\w@.+~/-]*$|^[A-Za-z]:\\|^\.{1,2}/")
_URL = re.compile(r"^[a-z][a-z0-9+.-]{1,15}://", re.IGNORECASE)
_URL_WITH_PASSWORD = re.compile(r"^[a-z][a-z0-9+.-]{1,15}://[^/\s:@]*:[^/\s@]+@", re.IGNORECASE)
# AWS/GCP resource names and digests: identifiers that a label may sit above.
# ...and SigV4 credential scopes (`AKIA…/20240101/us-east-1/s3/aws4_request`).
_RESOURCE = re.compile(
    r"^(?:arn:aws[\w-]*:|projects/|sha(?:1|256|384|512)[:-]|md5:|sha512-)|/aws4_request$"
)
_UUID = re.compile(r"^[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")


# Markdown emphasis or code around a short word or number: `**0**`, `__on__`, `` `14` ``.
_MARKDOWN_EMPHASIS = re.compile(r"^(\*{1,2}|_{1,2}|`)[\w.-]{0,24}\1$")


def is_placeholder(value: str) -> bool:
    """A reference to a value kept elsewhere, or an obvious filler (`${DB_PASS}`, `***`), or a
    value someone already cut short or blanked (`ops_eyJz...`, `sk-ant-api03-xxx...xxx`,
    `…[Redacted]`), or Markdown emphasis around a setting's value (`**0**`)."""
    stripped = value.strip()
    if not stripped:
        return True
    if "..." in stripped or "…" in stripped or "redacted" in stripped.lower():
        return True  # elided, wherever the dots stand
    if _MARKDOWN_EMPHASIS.match(stripped):
        return True
    return bool(_PLACEHOLDER.match(stripped) or _FILLER.match(stripped))


# Public material that often sits under key-like names: certificates and public keys, raw or
# base64-encoded once more (kubeconfig `certificate-authority-data`), SSH public keys.
_PUBLIC_MATERIAL = re.compile(
    r"^(?:-----BEGIN (?:CERTIFICATE|PUBLIC KEY|[A-Z ]*PUBLIC KEY|X509 CRL|CERTIFICATE REQUEST)"
    r"|LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS|LS0tLS1CRUdJTiBQVUJMSUMgS0VZ|LS0tLS1CRUdJTiBSU0EgUFVCTElD"
    r"|(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d+|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)"
    r"@openssh\.com) AAAA)"
)


def is_public_material(value: str) -> bool:
    """A certificate or a public key (PEM, base64 PEM, or OpenSSH `authorized_keys` form)."""
    return bool(_PUBLIC_MATERIAL.match(value.strip()))


# Six of the characters documentation uses to blank a token out. (Not `A`: base64 of binary
# data, such as a macaroon's zero bytes, has long runs of it.)
_RUN = re.compile(r"([xX*#.0_-])\1{5}")


def is_filler(value: str) -> bool:
    """A documentation placeholder in a token's shape: `ghp_xxxx…`, `AIzaaaaa…`, `glc_1111…`.

    A run of blanking characters, or one character making up half of the letters and digits,
    essentially never occurs in a generated credential.
    """
    if _RUN.search(value):
        return True
    sample = value[:256]
    if len(sample) < 8:
        return False
    return max(map(sample.count, set(sample))) * 2 > len(sample)


def is_trivial(value: str) -> bool:
    """Empty, a placeholder, a keyword literal, a number or a version: never a secret."""
    stripped = value.strip()
    if is_placeholder(stripped):
        return True
    lowered = stripped.lower()
    if lowered in _LITERALS:
        return True
    return bool(_NUMBER.match(stripped) or _VERSION.match(stripped) or _HEX_NUMBERS.match(stripped))


# A run no identifier is made of: 16+ letters and digits, mixed (`Q33nZnlwZ5wCu…`).
_GENERATED_SEGMENT = re.compile(r"(?=[A-Za-z_]*\d)(?=\d*[A-Za-z])\w{16,}")


def looks_like_code(value: str) -> bool:
    """An expression, a call, an attribute chain or a type name: source code, not a literal."""
    stripped = value.strip().rstrip(",;")
    if not (_CODE.match(stripped) or _CAMEL_TYPE.match(stripped)):
        return False
    # `a1B2…x9.Qz7…`: a dotted token (JWT-like parts, a vendor's `id.secret`) matches the
    # attribute-chain shape, but names in code are not long random runs.
    return not any(_GENERATED_SEGMENT.fullmatch(part) for part in stripped.split("."))


def looks_like_template_or_regex(value: str) -> bool:
    """An interpolated string or a regular expression, not a literal secret."""
    return _TEMPLATE_OR_REGEX.search(value) is not None


def is_pure_identifier(value: str) -> bool:
    """Only letters and underscores: a variable name more often than a secret."""
    return bool(_PURE_IDENTIFIER.match(value))


def looks_like_locator(value: str) -> bool:
    """A path, an email address, a URL without a password, or a resource name."""
    if _URL.match(value):
        return not _URL_WITH_PASSWORD.match(value)
    return bool(_PATH.match(value) or _EMAIL.match(value) or _RESOURCE.search(value))


def is_uuid(value: str) -> bool:
    return bool(_UUID.match(value))


# An authentication scheme written into a value before the credential (`"Bearer <token>"`,
# `Basic <base64>`; RFC 9110 §11.1 auth-scheme, GitHub's `token <pat>`).
_AUTH_SCHEME = re.compile(r"(?:Bearer|Basic|Token|token|Bot|Digest|SSWS|ApiKey|Key)[ ]+(?=[^ ]+$)")


def quoted_credential_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The credential inside the quoted value text[start:end]: without the spaces, tabs or
    carriage returns that pad it (`" abc "`) and an authentication scheme before it."""
    while start < end and text[start] in " \t\r":
        start += 1
    while end > start and text[end - 1] in " \t\r":
        end -= 1
    scheme = _AUTH_SCHEME.match(text, start, end)
    return (scheme.end() if scheme is not None else start), end


def has_char_classes(value: str, minimum: int) -> bool:
    """At least `minimum` of: lower-case letters, upper-case letters, digits, other symbols."""
    classes = (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )
    return classes >= minimum


def looks_token_like(value: str, min_length: int = 8) -> bool:
    """Long enough and mixed enough to be a generated credential rather than a word or a name."""
    if len(value) < min_length or " " in value:
        return False
    if is_uuid(value):
        return True
    if _is_mechanism_name(value):
        return False  # a mechanism or algorithm name: CRAM-MD5, SCRAM-SHA-256, AES-256-GCM
    if value.isalpha():
        # A single word (`development`) or a camelCase name (`contentAssociationSummaries`);
        # long mixed-case runs without that word structure are keys.
        return len(value) >= 20 and has_char_classes(value, 2) and not _CAMEL_NAME.match(value)
    return any(c.isdigit() for c in value) or has_char_classes(value, 3)


# Splits a name into its words: snake_case, kebab-case, dotted, camelCase and UPPER_CASE.
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def name_words(name: str) -> list[str]:
    """`AWS_SECRET_ACCESS_KEY` -> ["aws", "secret", "access", "key"]; `oktaApiToken` -> [...]."""
    return [w.lower() for w in _WORDS.findall(name)]


# Regex fragments for token boundaries. A token starts where no word character precedes it, or
# right after a JSON escape (`\n`, `\t`): a torn, non-JSON last line is scanned in its raw,
# escaped form, where a token at the start of a line follows the two characters `\n`.
WORD_START = r"(?:(?<![A-Za-z0-9_])|(?<=\\[nrt]))"
WORD_END = r"(?![A-Za-z0-9_])"
