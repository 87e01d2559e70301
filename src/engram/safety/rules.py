"""The detection rules: one precompiled pattern per credential shape, each with its guard.

A :class:`Rule` pairs a pattern with a *locator*: for one match, the locator decides
whether it is a secret (the false-positive guard) and which characters are the secret,
the whole token (``ghp_…``) or only the value of an assignment, so that
``password=`` stays readable after redaction. ``docs/secrets.md`` tables every rule, an
example shape and its guard.

Rules carry a rank: a token format that names itself (rank 3) beats a context rule that
recognizes a value by its key or its place (rank 2), which beats the entropy fallback
(rank 1). The detector (:mod:`engram.safety.secrets`) uses the rank to name the union of
overlapping spans; this module does not merge, echo or redact, and holds no state.

Linear time is a design constraint. Every pattern starts with a literal or with a
look-behind that fails inside a run of its own alphabet, every unbounded repetition is
possessive, and every backtracking repetition is bounded, so no input makes a pattern
do more than a constant amount of work per starting position.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from engram.safety.guards import (
    classes,
    has_digit,
    is_base58check_public,
    is_placeholder,
    looks_random,
    percent_decoded,
    reads_as_code,
    token_like,
    varied,
)
from engram.safety.public import (
    is_ksuid,
    is_stripe_object_id,
    named_public,
    public_value,
)

__all__ = [
    "ANY_RULE",
    "ANY_SPECIFIC_RULE",
    "PUBLISHED_EXAMPLES",
    "RULES",
    "SHORTEST",
    "SPECIFIC_RULES",
    "VENDOR_PREFIXES",
    "Rule",
]

Locate = Callable[[re.Match[str]], tuple[int, int] | None]
Check = Callable[[str], bool]

SPECIFIC, CONTEXT, FALLBACK = 3, 2, 1

#: The literal prefixes of the self-identifying token formats below, longest first (the
#: disguise check looks for them to put a token's pieces back together).
VENDOR_PREFIXES: tuple[str, ...] = tuple(
    sorted(
        [
            *("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
            *("glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glft-", "glcbt-"),
            *("xoxa-", "xoxb-", "xoxe-", "xoxo-", "xoxp-", "xoxr-", "xoxs-", "xapp-"),
            *("sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_", "AIza", "GOCSPX-"),
            *("sk-ant-", "sk-proj-", "sk-svcacct-", "sk-admin-", "sk-", "npm_", "pypi-AgE"),
            *("hf_", "SG.", "AKIA", "ASIA", "eyJ"),
            *("dop_v1_", "doo_v1_", "dor_v1_", "shpat_", "shpca_", "shppa_", "shpss_"),
            "AGE-SECRET-KEY-1",
        ],
        key=len,
        reverse=True,
    )
)

#: Values published in vendor documentation as examples; they are not secrets: AWS's
#: example key pair, and jwt.io's example token (signed with the key it publishes,
#: ``your-256-bit-secret``), quoted across JWT tutorials.
PUBLISHED_EXAMPLES = frozenset(
    {
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        # In pieces shorter than a random-looking run, so that this file holds none.
        "eyJhbGciOiJIUzI1Ni"
        "IsInR5cCI6IkpXVCJ9"
        ".eyJzdWIiOiIxMjM0N"
        "TY3ODkwIiwibmFtZSI"
        "6IkpvaG4gRG9lIiwia"
        "WF0IjoxNTE2MjM5MDI"
        "yfQ.SflKxwRJSMeKKF"
        "2QT4fwpMeJf36POk6y"
        "JV_adQssw5c",
    }
)


@dataclass(frozen=True, slots=True)
class Rule:
    """One credential shape: its kind, its rank, its pattern and its locator."""

    kind: str
    rank: int
    pattern: re.Pattern[str]
    locate: Locate
    #: The fewest characters a match can span; shorter text is not scanned at all.
    shortest: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "shortest", _shortest_match(self.pattern))

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        """Yield the ``[start, end)`` span of every secret this rule finds in ``text``."""
        if len(text) < self.shortest:
            return
        for match in self.pattern.finditer(text):
            span = self.locate(match)
            if span is not None and not _published(text, span):
                yield span


def _published(text: str, span: tuple[int, int]) -> bool:
    """Whether the span is a published example or lies inside one (a part of jwt.io's
    token is a run the entropy fallback would see)."""
    start, end = span
    if text[start:end] in PUBLISHED_EXAMPLES:
        return True
    for example in PUBLISHED_EXAMPLES:
        found = text.find(example, max(0, end - len(example)), start + len(example))
        if found != -1 and found <= start and end <= found + len(example):
            return True
    return False


def _shortest_match(pattern: re.Pattern[str]) -> int:
    # Most of what admission scans is short (ids, kinds, refs), and a text shorter
    # than every match of a rule cannot hold its secret. The parser is the regex
    # engine's own; without it, every text is scanned.
    try:
        from re import _parser  # type: ignore[attr-defined]

        return int(_parser.parse(pattern.pattern, pattern.flags).getwidth()[0])
    except (ImportError, AttributeError):  # a Python without the 3.11+ parser
        return 0


# --- Locators ---------------------------------------------------------------------------


def _whole(check: Check = varied) -> Locate:
    def locate(match: re.Match[str]) -> tuple[int, int] | None:
        return match.span() if check(match.group()) else None

    return locate


def _group(name: str, check: Check) -> Locate:
    def locate(match: re.Match[str]) -> tuple[int, int] | None:
        return match.span(name) if check(match.group(name)) else None

    return locate


_BASE64_LINE = re.compile(r"[A-Za-z0-9+/]{40}")
_BASE64_MARK = re.compile(r"[0-9+/=]")


def _key_body(match: re.Match[str]) -> tuple[int, int] | None:
    """A private key block is a secret when it has a body: a 40-character base64 run."""
    return match.span() if _BASE64_LINE.search(match.group("body")) else None


_AUTHORITY_BEFORE = re.compile(r"://[^\s/?#@]*+\Z")
_FLAG_DASHES = re.compile(r"(?:^|(?<=[\s\"'=]))--?\Z")


def _is_flag(match: re.Match[str]) -> bool:
    """Whether the key is a command-line flag: ``-`` or ``--`` after a space or a quote."""
    start = match.start()
    return _FLAG_DASHES.search(match.string[max(0, start - 3) : start]) is not None


def _assignment(min_length: int, token: bool) -> Locate:
    """The value of ``key = value``: quoted values are literals; unquoted ones are too in
    ``.env`` style (``UPPER_KEY=value``), otherwise only when they do not read as code."""

    def locate(match: re.Match[str]) -> tuple[int, int] | None:
        name = next(group for group in ("dq", "sq", "bq", "uv") if match.group(group))
        value = match.group(name)
        if len(value) < min_length or is_placeholder(value) or public_value(value):
            return None
        separator = match.group("sep")
        if not separator.strip() and not _is_flag(match):
            return None  # ``key value`` counts only as a command-line flag, ``--key value``
        if _AUTHORITY_BEFORE.search(match.string, max(0, match.start() - 256), match.start()):
            return None  # ``https://x-token:…@host`` is the connection_string rule's
        if name == "uv" and _unquoted_code(match, value, token):
            return None
        if token and not _generated(value):
            return None
        return match.span(name)

    return locate


def _generated(value: str) -> bool:
    """Generated material, not a path or a scope whose segments read as names
    (``Credential=mock_access_key/20220524/us-east-1/…``)."""
    return token_like(value) and not ("/" in value and _named_segments(value))


_BARE_WORD = re.compile(r"[A-Za-z]++")


def _unquoted_code(match: re.Match[str], value: str, token: bool) -> bool:
    """Whether an unquoted value is code or prose rather than a literal. In ``.env`` style
    (``UPPER_KEY=value``) every value is a literal; on a command line (``--password
    value``) a dotted or underscored one too, but a bare word is prose (``--password
    option``)."""
    separator = match.group("sep")
    if match.group("key").isupper() and separator == "=":
        return False
    if not separator.strip():
        return _BARE_WORD.fullmatch(value) is not None
    key = match.group("key").lower()
    if separator.strip() == ":" and key != "pass" and _generated_name(value) and has_digit(value):
        # After ``pw:`` in YAML or a note, an underscore does not make a name of
        # what is not one (``db_password2`` and ``DB_PASSWORD`` are). ``pass:`` is
        # openssl's password source, the command-line rule's.
        return False
    return reads_as_code(value, token)


#: A name with underscores: an environment variable's (``DB_PASSWORD_FILE``) or snake
#: case words (``db_password2``); generated parts or a word with digits in the middle
#: joined by an underscore are not.
_SNAKE_NAME = re.compile(r"[A-Z][A-Z0-9]*+(?:_[A-Z0-9]++)++|_?[a-z]++(?:_[a-z]++)++[0-9]*+")
_IDENTIFIER_SHAPE = re.compile(r"[A-Za-z0-9]++(?:_[A-Za-z0-9]++)++")


def _generated_name(value: str) -> bool:
    """An identifier with underscores that is not such a name."""
    return _IDENTIFIER_SHAPE.fullmatch(value) is not None and _SNAKE_NAME.fullmatch(value) is None


_COOKIE_VALUE = re.compile(r"=([^;\s,\\\"']{16,})")


def _cookie(value: str) -> bool:
    return any(token_like(found) for found in _COOKIE_VALUE.findall(value))


def _basic_credentials(value: str) -> bool:
    """Base64 of ``user:password`` in an ``Authorization`` header."""
    return len(value) % 4 == 0 and classes(value) >= 2 and varied(value, at_least=6)


def _bare_basic_credentials(value: str) -> bool:
    """Without the header, ``Basic Multilingual`` is prose: also ask for a digit, ``+``,
    ``/`` or padding, and at least 12 characters."""
    return len(value) >= 12 and _basic_credentials(value) and bool(_BASE64_MARK.search(value))


def _url_password(value: str) -> bool:
    """A URL's password as its server reads it, percent-decoded (``p%40ss`` is ``p@ss``):
    4+ characters and not a placeholder."""
    decoded = percent_decoded(value)
    if len(decoded) < 4:
        return False
    if decoded != value and decoded[:1] in "$%!*#":
        # An encoded sign is part of a literal: a reference (``${PGPASSWORD}``) is never
        # percent-encoded, so only the rest can make it a placeholder.
        return not is_placeholder(decoded[1:])
    return not is_placeholder(decoded)


_HEX = re.compile(r"[0-9A-Fa-f_-]++")
_SUBRESOURCE_INTEGRITY = re.compile(r"sha(?:1|256|384|512)-")
_URL_PATH_BEFORE = re.compile(r"://[^\s?#\"'<>]*+\Z")
_SSH_PUBLIC_KEY_BEFORE = re.compile(
    r"(?:ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp[0-9]{3}|sk-[a-z0-9-]{3,30}@openssh\.com)"
    r"[ \t]++\Z"
)
_PEM_BEGIN, _PEM_END = "-----BEGIN ", "-----END "
_PUBLIC_BLOCK_REACH = 8192  # how far back a candidate looks for the start of its PEM block
_ANALYSED = 4096  # characters of a run the entropy guard looks at


def _named_segments(value: str) -> bool:
    """Whether ``value`` reads as a path: two segments or more between slashes that read
    as names (do not look random), and one at most that does not."""
    segments = [segment for segment in value.rstrip("=").split("/") if segment]
    names = sum(1 for segment in segments if not looks_random(segment))
    return names >= 2 and len(segments) - names <= 1


def _is_path(match: re.Match[str]) -> bool:
    """A run with slashes that is an absolute path, a relative one (``./…``), a host's
    path or a URL's path. Opening with ``/`` (or after ``.``) is not enough: a path has
    two segments or more that read as names, and at most one that does not
    (one random run after a slash is a base64 secret that opens with one); a name is a
    segment that does not look random (``Developer``, ``SDKs``, ``Z3P5QSUBK4POTI``)."""
    start, text = match.start(), match.string
    run = match.group()
    if run.startswith("//") and start > 0 and text[start - 1] == ":":
        return True  # ``s3://bucket/key``: the run starts with the URL's authority
    if (run.startswith("/") or (start > 0 and text[start - 1] == ".")) and _named_segments(run):
        return True
    return _URL_PATH_BEFORE.search(text, max(0, start - 2048), start) is not None


def _is_public_key(match: re.Match[str]) -> bool:
    """Inside a certificate or public key PEM block, or the blob of an SSH public key."""
    start, text = match.start(), match.string
    if _SSH_PUBLIC_KEY_BEFORE.search(text, max(0, start - 64), start):
        return True
    begin = text.rfind(_PEM_BEGIN, max(0, start - _PUBLIC_BLOCK_REACH), start)
    if begin == -1 or text.find(_PEM_END, begin, start) != -1:
        return False
    label_end = text.find("-----", begin + len(_PEM_BEGIN), start)
    return label_end != -1 and "PRIVATE" not in text[begin:label_end]


#: Public tokens whose prefix says so: Stripe's (and Clerk's) publishable keys, PostHog's
#: project keys.
_PUBLISHABLE = ("pk_live_", "pk_test_", "phc_")
_BASE58_RUN = re.compile(r"[1-9A-HJ-NP-Za-km-z]++")
_CIDV0 = re.compile(r"Qm[1-9A-HJ-NP-Za-km-z]{44}")
#: Digests written in base64 after their algorithm: OpenSSH key fingerprints
#: (``SHA256:`` + 43) and Go module sums (``h1:`` + 43 + ``=``), by exact length.
_DIGEST_LABELS = {"SHA256:": 43, "SHA384:": 64, "SHA512:": 86, "h1:": 43}
_DATA_URI_BEFORE = re.compile(r"data:(?:image|font|audio|video)/[\w.+-]{1,64}+;base64,\Z")
#: Words that name a base58 run as an address or a public key (Solana and its kin have
#: no checksum to tell one from a random token).
_ADDRESS_WORDS = re.compile(
    r"(?i:address|wallet|pubkey|public[ _-]?key|mint|program|account|solana|signature|txid"
    r"|tx[ _-]?hash)"
    r"[^\n]{0,24}+\Z"
)


#: Headers and fields that name a run as the id of a request, a trace or a span, which
#: servers print in every log line (CloudFront's ``X-Amz-Cf-Id``, W3C ``traceparent``…).
_REQUEST_ID_BEFORE = re.compile(
    r"(?i:x-amz-cf-id|x-amz-request-id|x-amz-id-2|x-amzn-requestid|x-amzn-trace-id"
    r"|x-request-id|x-correlation-id|x-trace-id|x-cloud-trace-context|traceparent"
    r"|request[_-]?id|trace[_-]?id|span[_-]?id|correlation[_-]?id)"
    r"[\"']?[ \t]{0,4}+[:=][ \t]{0,4}+[\"']?\Z"
)


def _named_request_id(before: str) -> bool:
    # The separator is among the last few characters, or no label names the run: a
    # cheap test first, as the label's search tries every position of ``before``.
    tail = before[-6:]
    return (":" in tail or "=" in tail) and _REQUEST_ID_BEFORE.search(before) is not None


_BASE64_TEXT = re.compile(r"[A-Za-z0-9+/]++={0,2}|[A-Za-z0-9_-]++={0,2}")


def _encodes_text(core: str, run: str) -> bool:
    """Whether a base64 run is the encoding of ordinary text (a test fixture, a CSV, a
    request line): it decodes to UTF-8 that is printable, holds a blank or markup, and
    holds no credential itself. A random key decodes to bytes, never to such text; a
    secret encoded as text is still found in what it decodes to."""
    import base64
    import binascii

    if len(run) % 4 or _BASE64_TEXT.fullmatch(run) is None:
        return False
    try:
        decoded = base64.b64decode(run, altchars=b"-_" if "-" in run or "_" in run else None)
        text = decoded.decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    if not text or not all(char.isprintable() or char in "\n\t\r" for char in text):
        return False
    if not any(char in " \n\t<>{}," for char in text):
        return False
    from engram.safety.secrets import contains_secret  # here: secrets imports this module

    return not contains_secret(text)


def _is_public_identifier(match: re.Match[str], core: str) -> bool:
    """A run that is public by its shape or label: a publishable key, a Bitcoin address
    or extended public key (checksum verified), an IPFS CIDv0, a labelled base64 digest,
    an image in a data URI, a Mapbox public token, a base58 address named as one, the id
    of a request or a trace named as one, base64 of ordinary text."""
    start, text = match.start(), match.string
    if core.startswith(_PUBLISHABLE) or (
        core.startswith("eyJ") and text[start - 3 : start] == "pk."
    ):
        return True
    before = text[max(0, start - 96) : start]
    if (
        is_stripe_object_id(core)
        or is_ksuid(core)
        or _named_request_id(before)
        or named_public(before)
        or _encodes_text(core, match.group())
    ):
        return True
    if any(before.endswith(label) and len(core) == size for label, size in _DIGEST_LABELS.items()):
        return True
    if _DATA_URI_BEFORE.search(before):
        return True
    if _BASE58_RUN.fullmatch(core):
        return (
            _CIDV0.fullmatch(core) is not None
            or is_base58check_public(core)
            or (32 <= len(core) <= 88 and _ADDRESS_WORDS.search(before) is not None)
        )
    return False


def _high_entropy(match: re.Match[str]) -> tuple[int, int] | None:
    core = match.group().rstrip("=")
    if _HEX.fullmatch(core) or _SUBRESOURCE_INTEGRITY.match(core):
        return None
    if not looks_random(core[:_ANALYSED]) or ("/" in core and _is_path(match)):
        return None
    if _is_public_identifier(match, core):
        return None
    return None if _is_public_key(match) else match.span()


# --- Patterns ---------------------------------------------------------------------------
# A pattern that starts with a literal lets the engine skip to it (about a hundred times
# faster than trying a look-behind at every position), so each pattern opens with its
# literal and checks the character before it with a look-behind placed after it.


def _token(prefixes: str, body: str, edge: str = "A-Za-z0-9_-") -> re.Pattern[str]:
    """A token that starts with one of the space-separated literal ``prefixes`` and stands
    alone: no ``edge`` character just before it or just after it."""
    by_width: dict[int, list[str]] = {}
    for prefix in prefixes.split():
        by_width.setdefault(len(prefix), []).append(re.escape(prefix))
    starts = "|".join(
        f"(?:{'|'.join(group)})(?<![{edge}]{'.' * width})" for width, group in by_width.items()
    )
    return re.compile(f"(?:{starts}){body}(?![{edge}])")


def _word(word: str, edge: str = "A-Za-z0-9_-") -> str:
    """``word`` (case-insensitive when compiled so) not preceded by an ``edge`` character."""
    return f"{word}(?<![{edge}]{'.' * len(word)})"


_PEM_LABEL = r"-{{4,5}} ?{0}[ A-Z0-9]{{0,40}}PRIVATE KEY(?: BLOCK)? ?-{{4,5}}"
_PEM_BREAK = r"(?:\\r\\n|\\n|\r?\n)[ \t]*+"  # a real line break or a JSON-escaped one
# A body line is a header (``Proc-Type: 4,ENCRYPTED``) or a whole line of base64: the
# look-ahead keeps a footer-less block from swallowing the first word of the next line.
_PEM_LINE = (
    r"(?:[A-Za-z][A-Za-z0-9-]*+:[^\r\n\\]*+"  # a header line
    r"|[A-Za-z0-9+/=]++[ \t]*+(?=[\r\n\\\"'`]|\Z))?"  # a whole base64 line
)
_PEM = re.compile(
    _PEM_LABEL.format("BEGIN")
    + rf"(?P<body>(?:{_PEM_BREAK}{_PEM_LINE})*+)(?:{_PEM_LABEL.format('END')})?"
)
_PUTTY = re.compile(
    r"Private-Lines:[ \t]*+[0-9]{1,4}(?P<body>(?:\r?\n[A-Za-z0-9+/=]++(?=[\r\n]|\Z))++)"
)
_SLACK_WEBHOOK = re.compile(
    r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}+"
)

_DISCORD_WEBHOOK = re.compile(
    r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/(?:v[0-9]{1,2}/)?webhooks/"
    r"[0-9]{17,20}+/[A-Za-z0-9_-]{60,}+"
)
# A Discord bot token: the bot's id (a snowflake: 17 to 20 digits) in base64, a dot, six
# characters of a timestamp, a dot, the HMAC. The first segment must decode to the digits.
_DISCORD_BOT = re.compile(
    r"\.(?<=[A-Za-z0-9]{22}\.)[A-Za-z0-9_-]{6}\.(?P<mac>[A-Za-z0-9_-]{27,40}+)(?![A-Za-z0-9_.-])"
)
# A Telegram bot token: the bot's numeric id, a colon, 35 characters of base64url.
_TELEGRAM_BOT = re.compile(r":(?<=[0-9]{8}:)(?P<secret>[A-Za-z0-9_-]{35})(?![A-Za-z0-9_-])")
_MAILGUN = re.compile(
    r"key-(?<![A-Za-z0-9_-]....)[0-9a-f]{32}(?![A-Za-z0-9_-])"
    r"|-(?<=[0-9a-f]{32}-)[0-9a-f]{8}-[0-9a-f]{8}(?![A-Za-z0-9_-])"
)
_AZURE_KEY = re.compile(
    r"(?:AccountKey|SharedAccessKey|accountkey|ACCOUNTKEY)[ \t]*+=[ \t]*+"
    r"(?P<secret>[A-Za-z0-9+/]{40,}+={0,2}+)"
)
# Hex keys name no vendor themselves (Datadog API and application keys, Twilio auth
# tokens, Mailgun keys): the vendor's name on the same line or the one before does.
_VENDOR_HEX = re.compile(
    r"(?:[DTMdtm](?<![A-Za-z0-9].)(?:atadog|ATADOG|wilio|WILIO|ailgun|AILGUN|D_|d_))"
    r"[^\n]{0,80}?(?:\n[^\n]{0,80}?)?"
    r"(?<![A-Za-z0-9_/@:.#-])(?P<secret>[0-9a-fA-F]{32}(?:[0-9a-fA-F]{8})?)(?![A-Za-z0-9_-])"
)
_TOKEN_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


_DIGEST_WORDS = re.compile(r"(?i:commit|sha|digest|hash|md5|checksum|rev|fingerprint|etag)")


def _vendor_hex(match: re.Match[str]) -> tuple[int, int] | None:
    """A hex key near its vendor's name, unless a digest's label stands right before it
    (``commit 3f9a…``, ``sha1: …``, ``md5 …``)."""
    start = match.start("secret")
    before = match.string[max(match.start(), start - 16) : start]
    if _DIGEST_WORDS.search(before) or not _hex_key(match.group("secret")):
        return None
    return match.span("secret")


def _run_back(text: str, end: int, alphabet: str, longest: int) -> int:
    """Where the run of ``alphabet`` characters that ends at ``end`` starts (at most
    ``longest`` back)."""
    start = end
    while start > 0 and end - start < longest and text[start - 1] in alphabet:
        start -= 1
    return start


def _telegram(match: re.Match[str]) -> tuple[int, int] | None:
    """8 to 10 digits (the bot's id) standing alone before the colon."""
    text, colon = match.string, match.start()
    start = _run_back(text, colon, "0123456789", 11)
    if not 8 <= colon - start <= 10 or (start > 0 and text[start - 1] in _TOKEN_CHARACTERS):
        return None
    if start > 0 and text[start - 1] in ":.":
        return None
    secret = match.group("secret")
    return match.span("secret") if classes(secret) >= 2 and varied(secret) else None


def _mailgun(match: re.Match[str]) -> tuple[int, int] | None:
    start, end = match.span()
    if match.group().startswith("-"):
        start -= 32
        if start > 0 and match.string[start - 1] in _TOKEN_CHARACTERS:
            return None
    return (start, end) if _hex_key(match.string[start:end]) else None


def _hex_key(value: str) -> bool:
    return classes(value) >= 2 and varied(value, at_least=6)


def _discord_bot(match: re.Match[str]) -> tuple[int, int] | None:
    """The first segment, before the match, is the bot's id (17 to 20 digits) in base64,
    standing alone and opening with ``M``, ``N`` or ``O`` (base64 of a digit)."""
    import base64
    import binascii

    text, dot = match.string, match.start()
    start = _run_back(text, dot, _ALNUM, 27)
    if not 22 <= dot - start <= 26 or text[start] not in "MNO":
        return None
    if start > 0 and (text[start - 1] in _TOKEN_CHARACTERS or text[start - 1] == "."):
        return None
    segment = text[start:dot]
    try:
        decoded = base64.b64decode(segment + "=" * (-len(segment) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    if not (decoded.isdigit() and 17 <= len(decoded) <= 20):
        return None
    return (start, match.end()) if varied(match.group("mac")) else None


_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


# --- Passwords stated in prose -------------------------------------------------------------
# "the staging password is …", "the password for the db was changed to …", "log in with
# admin / …": a password word, up to four words about it, a verb, then the value. The
# words between may not make the subject something else than the password itself
# ("the password hashing algorithm is argon2id").
_PROSE_PASSWORD = re.compile(
    r"(?i:p(?<![A-Za-z0-9_-].)(?:ass(?:words?|wd|phrase|code)|wd|w)(?![A-Za-z0-9_])"
    r"(?P<about>(?:[ \t]++[A-Za-z0-9'()_.-]{1,24}+){0,4}?)"
    r"[ \t]++(?:is|was|will[ \t]be|has[ \t]been|becomes|remains|to|(?:set|changed|reset)[ \t]to)"
    r"(?:[ \t]++(?:now|still|just|simply|currently|literally"
    r"|(?:set|changed|reset|updated|rotated)[ \t]++to))?(?:[ \t]*+[:=])?)[ \t]++"
    r"[\"'`\u201c\u2018]?+(?P<secret>[^\s\"'`\u201d\u2019]{4,64}+)"
)
_PROSE_LOGIN = re.compile(
    r"(?i:[lsc](?<![A-Za-z0-9_-].)(?:og[ -]?(?:in|on)|ign[ -]?(?:in|on)|redentials|reds))"
    r"(?:[ \t]++(?:with|as|using|via|is|are))?(?:[ \t]*+:)?[ \t]++"
    r"(?P<user>[A-Za-z0-9._@+-]{1,64}+)[ \t]*+/[ \t]*+(?P<secret>[^\s/\"'`]{4,64}+)"
)
_NOT_THE_PASSWORD = re.compile(
    r"(?i:hash|polic|length|field|algorithm|format|rule|requirement|manager|strength|prompt"
    r"|reset|complexity|expir|encod|hint|file|stor|env|variable|column|type|input|form|less)"
)
_ACRONYM_NUMBER = re.compile(r"[A-Z]{2,8}+[-/]?[0-9]{1,4}+[a-z]{0,2}+")
_TRAILING = ".,;:!?)]}>*"


def _prose_secret(match: re.Match[str]) -> tuple[int, int] | None:
    """A value stated as a password in prose: six characters or more, letters with digits
    (eight or more) or signs, not a placeholder, a path, a URL, a reference or a name
    of a standard (``SHA-256``)."""
    about = match.groupdict().get("about")
    if about and _NOT_THE_PASSWORD.search(about):
        return None
    start, value = match.start("secret"), match.group("secret").rstrip(_TRAILING)
    letters = any(character.isalpha() for character in value)
    signs = any(not character.isalnum() for character in value)
    if len(value) < (6 if signs else 8) or not letters:
        return None
    if not (has_digit(value) or signs) and not _generated_letters(value):
        return None
    if "://" in value or is_placeholder(value) or _ACRONYM_NUMBER.fullmatch(value):
        return None
    if _SNAKE_NAME.fullmatch(value) or _DOTTED_NAME.fullmatch(value):
        return None  # ``DB_PASSWORD_FILE``, ``settings.db_password``: a name, not a value
    return start, start + len(value)


_CAMEL_WORDS = re.compile(
    r"(?:[A-Z][a-z]{2,}+|[A-Z]{2,5}+(?![a-z]))++|[a-z]{2,}+(?:[A-Z][a-z]{2,}+)++"
)


def _generated_letters(value: str) -> bool:
    """Letters only, twelve or more, both cases, and not words run together
    (``GitHubActions``): ``NeitJajMccYGTt``."""
    return (
        len(value) >= 12
        and value.isalpha()
        and not value.islower()
        and not value.isupper()
        and _CAMEL_WORDS.fullmatch(value) is None
    )


_DOTTED_NAME = re.compile(r"[A-Za-z_]++(?:\.[A-Za-z_]++)++(?:\(\))?")

_TYPE_HINT = r"[A-Za-z_][\w.]{0,40}+(?:\[[\w., |\[\]]{0,60}\])?"
_VALUE = (
    r"(?:\"(?P<dq>[^\s\"]{1,256}+)\"|'(?P<sq>[^\s']{1,256}+)'|`(?P<bq>[^\s`]{1,256}+)`"
    r"|(?P<uv>[^\s\"'`,;)\]}]{1,256}+))"
)


def _assigned(keys: str) -> re.Pattern[str]:
    """``key = value`` in code, JSON, YAML, TOML, ``.env`` and ``--key value`` forms; the
    separator may carry a type hint (``password: str = "…"``)."""
    return re.compile(
        rf"(?P<key>{keys})[\"'`]?(?P<sep>[ \t]*+:[ \t]*+{_TYPE_HINT}[ \t]*+=[ \t]*+"
        rf"|[ \t]*+(?::=|=>|==|=|:)[ \t]*+|[ \t]++(?!-)){_VALUE}",
        re.IGNORECASE,
    )


_PASSWORD_KEYS = (
    r"pass(?:words?|wd|phrase|(?<![a-z]....))|pwd|sshpass|rediscli_auth|pw(?<![A-Za-z0-9]..)"
)
_SECRET_KEYS = r"secret(?:[_-]?key)?"
_TOKEN_KEYS = (
    r"api[_-]?(?:key|secret|token)|apikey"
    r"|(?:access|auth|refresh|session|private|account)[_-]?(?:key|token)"
    r"|shared[_-]?access[_-]?key|token|credentials?+"
)
_AWS_SECRET = re.compile(
    r"(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)[\"']?[ \t]*+(?::=|=>|=|:)"
    r"[ \t]*+[\"']?(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
    re.IGNORECASE,
)
_CONNECTION = re.compile(
    r"://(?<=[A-Za-z0-9+.-]://)[^\s:/?#@]{0,128}+:(?P<secret>[^\s/]{1,256})@(?=[A-Za-z0-9\[._-])"
)
_TOKEN68 = r"(?P<secret>[A-Za-z0-9._~+/-]{16,}+=*+)"
_BEARER = re.compile(rf"{_word('bearer')}[ \t]++{_TOKEN68}", re.IGNORECASE)
_AUTHORIZATION_TOKEN = re.compile(
    rf"authorization[\"']?[ \t]*+[:=][ \t]*+[\"']?token[ \t]++{_TOKEN68}", re.IGNORECASE
)
_BASIC_CREDENTIALS = r"[ \t]++(?P<secret>[A-Za-z0-9+/]{8,}+={0,2}+)(?![\w=-])"
_BASIC = re.compile(rf"{_word('basic')}{_BASIC_CREDENTIALS}", re.IGNORECASE)
_AUTHORIZATION_BASIC = re.compile(
    rf"authorization[\"']?[ \t]*+[:=][ \t]*+[\"']?basic{_BASIC_CREDENTIALS}", re.IGNORECASE
)
_COOKIE = re.compile(
    rf"{_word('cookie', edge='A-Za-z0-9_')}[ \t]*+:[ \t]*+"
    r"(?P<secret>[^\s=;]{1,128}+=[^\r\n]{1,4096}+)",
    re.IGNORECASE,
)

# --- Passwords on a command line -----------------------------------------------------------
# A tool's own flag for a password: ``mysql -p…``, ``sshpass -p …``, ``curl -u user:…``,
# ``smbclient -U user%…``, ``openssl … -passin pass:…``. The flag means a password only
# after its tool (``-p`` is a port or a path elsewhere), so the pattern opens with the
# tool's name standing as a word and allows a few other arguments (bounded, possessive)
# before the first flag; the locator looks for the tool's own flags on the rest of the line.
_CLI_VALUE = (
    r"(?:\"(?P<dq>[^\s\"]{1,256}+)\"|'(?P<sq>[^\s']{1,256}+)'"
    r"|(?P<uv>[^\s\"'`;|&<>()]{1,256}+))"
)
_CLI_ARGS = r"(?:[ \t]++(?:[^\s;|&<>]++|\"[^\"\n]{0,200}+\"|'[^'\n]{0,200}+'))"


_MYSQL = "mysql mysqldump mysqladmin mysqlimport mysqlshow mysqlcheck mysqlpump mysqlsh mariadb"
_MYSQL += " mariadb-dump mariadb-admin mariadb-import mariadb-check"
_MONGO = "mongo mongosh mongodump mongorestore mongoexport mongoimport mongostat mongotop"
_LDAP = "ldapsearch ldapmodify ldapadd ldapdelete ldappasswd ldapwhoami ldapcompare"
_SMB = "smbclient rpcclient smbmap smbcacls net crackmapexec nxc winexe"
_ARCHIVERS = "7z 7za 7zz 7zr unrar rar"
_P_UPPER = "zip unzip sqlcmd bcp osql isql ipmitool"
_REDIS = "redis-cli valkey-cli keydb-cli"
# ``docker login``, ``podman login``, ``az login``, ``oc login``, ``cf login`` …: the verb
# names the tool.
_SPACED_P = f"sshpass {_MONGO} login"
_CLI_USER = r"[\"']?+[^\s:%,\"'@]{0,128}+"
#: (the flag and what comes between it and the password, tools): which tool takes which
#: flag for a password. A tool's own word opens the rule's pattern; its flags are looked
#: for on the rest of its command line by the locator.
_CLI_FORMS: tuple[tuple[str, str], ...] = (
    # ``mysql -pVALUE``: only attached (``-p value`` prompts, and value is the database).
    # A value attached to the flag is the password even when it starts with a dash.
    (r"-p(?=\S)", f"{_MYSQL} {_ARCHIVERS} {_SPACED_P}"),
    (r"-P(?=[^\s-])", _P_UPPER),
    (r"(?:-p|--password)[ \t]++", _SPACED_P),
    (r"-P[ \t]++", f"{_P_UPPER} ssh-keygen"),
    (r"-N[ \t]++", "ssh-keygen"),
    (r"-w[ \t]++", _LDAP),
    (r"(?:-a|--pass)[ \t]++", _REDIS),
    (r"-(?:(?:src|dest)?store|key)pass[ \t]++|-new[ \t]++", "keytool jarsigner"),
    (r"-pass(?:in|out)?[ \t]++pass:", "openssl"),
    (rf"(?:-u|--user|-U|--proxy-user)(?:[ \t]*+|=){_CLI_USER}:", "curl"),
    (rf"(?:-a|--auth)(?:[ \t]*+|=){_CLI_USER}:", "http https xh"),
    (rf"-[AP][ \t]*+{_CLI_USER}:", "ab"),
    (rf"(?:-U|--user|--username)(?:[ \t]*+|=){_CLI_USER}%", _SMB),
    (rf"-u[ \t]++{_CLI_USER},", "lftp"),
    # ``htpasswd -bc FILE USER PASSWORD``, ``htpasswd -nbB USER PASSWORD``
    (r"-[A-Za-z]*b[A-Za-z]*+[ \t]++(?:[^\s-]\S*+[ \t]++)?[^\s-]\S*+[ \t]++", "htpasswd"),
)


def _flags_by_tool() -> dict[str, list[re.Pattern[str]]]:
    """Each tool's password flags, each as a pattern of the flag and its value."""
    by_tool: dict[str, list[re.Pattern[str]]] = {}
    for flag, tools in _CLI_FORMS:
        pattern = re.compile(rf"(?<![^ \t])(?:{flag}){_CLI_VALUE}")
        for tool in tools.split():
            by_tool.setdefault(tool, []).append(pattern)
    return by_tool


_CLI_FLAGS = _flags_by_tool()
# The tool's name opens the pattern as a plain alternation of literals (so the engine skips
# to the characters they start with), then the rest of its command line from its first
# flag; which flags give a password is the locator's business.
_CLI_PASSWORD = re.compile(
    "(?P<tool>" + "|".join(map(re.escape, sorted(_CLI_FLAGS, key=len, reverse=True))) + ")"
    rf"(?![A-Za-z0-9_.-])(?P<line>{_CLI_ARGS}{{0,16}}?[ \t]++-[^\r\n;|&]{{5,1024}}+)"
)
_TOOL_EDGE = frozenset(" \t\r\n;|&(`'\"/")


def _cli_password(match: re.Match[str]) -> tuple[int, int] | None:
    """The first password a tool's own flag gives on its command line: the tool stands as
    a word, and the value is 4+ characters, not a flag, a variable or a placeholder
    (``-p"$MYSQL_PWD"``, ``-u user:<password>``)."""
    start, text = match.start(), match.string
    if start > 0 and text[start - 1] not in _TOOL_EDGE:
        return None
    for pattern in _CLI_FLAGS[match.group("tool")]:
        for found in pattern.finditer(text, match.start("line"), match.end("line")):
            name = next(group for group in ("dq", "sq", "uv") if found.group(group))
            value = found.group(name)
            if len(value) >= 4 and not _cli_flag(found, name) and not is_placeholder(value):
                return found.span(name)
    return None


_FLAG_WITH_NUMBER = re.compile(r"-[A-Za-z][0-9.:]*+")


def _cli_flag(found: re.Match[str], name: str) -> bool:
    """Whether the value a flag seems to give is the next flag (``mysql -p -h db``,
    ``sshpass -p --``): a value attached to its flag or after ``user:`` is a password
    whatever its first character (``-p-Xk29dLq0``); one after a space that starts with a
    dash is a password only when the rest is generated material (``-p -Xk29dLq0``), not
    a flag (``-h``, ``--host=db``, ``-h127.0.0.1``)."""
    value = found.group(name)
    if not value.startswith("-"):
        return False
    start = found.start(name)
    if name == "uv" and found.string[start - 1] not in " \t":
        return False
    return (
        value.startswith("--")
        or "=" in value
        or _FLAG_WITH_NUMBER.fullmatch(value) is not None
        or not token_like(value[1:])
    )


# A run of base64/base64url characters; a dash only when single, so that a run stops
# before ``-----BEGIN`` or a ``--flag``.
_RUN = re.compile(r"(?<![A-Za-z0-9+/_-])(?:[A-Za-z0-9+/_]|-(?!-)){24,}+={0,2}+")

_TOKEN_CHECK = _whole()

#: Every rule, in tie-break order: on equal rank, the earlier rule names a merged span.
RULES: tuple[Rule, ...] = (
    Rule("private_key_block", SPECIFIC, _PEM, _key_body),
    Rule("putty_private_key", SPECIFIC, _PUTTY, _key_body),
    Rule(
        "aws_access_key_id",
        SPECIFIC,
        _token("AKIA ASIA", "[A-Z0-9]{16}", edge="A-Za-z0-9"),
        _whole(lambda value: varied(value, at_least=6)),
    ),
    Rule(
        "github_token",
        SPECIFIC,
        _token("ghp_ gho_ ghu_ ghs_ ghr_", "[A-Za-z0-9]{36,251}+"),
        _TOKEN_CHECK,
    ),
    Rule("github_token", SPECIFIC, _token("github_pat_", "[A-Za-z0-9_]{60,240}+"), _TOKEN_CHECK),
    Rule(
        "gitlab_token",
        SPECIFIC,
        _token(
            "glpat- gldt- glrt- glptt- glsoat- glft- glcbt-",
            r"[A-Za-z0-9_-]{20,}+(?:\.[A-Za-z0-9_-]++)*+",
            edge="A-Za-z0-9_.-",
        ),
        _TOKEN_CHECK,
    ),
    Rule(
        "slack_token",
        SPECIFIC,
        _token("xoxa- xoxb- xoxe- xoxo- xoxp- xoxr- xoxs- xapp-", "[A-Za-z0-9-]{10,}+"),
        _whole(lambda value: has_digit(value) and varied(value)),
    ),
    Rule(
        "slack_webhook_url",
        SPECIFIC,
        _SLACK_WEBHOOK,
        _whole(lambda value: varied(value, at_least=10, tail=24)),
    ),
    Rule(
        "stripe_key",
        SPECIFIC,
        _token("sk_live_ sk_test_ rk_live_ rk_test_", "[A-Za-z0-9]{20,247}+"),
        _TOKEN_CHECK,
    ),
    Rule("stripe_key", SPECIFIC, _token("whsec_", "[A-Za-z0-9+/]{24,}+"), _TOKEN_CHECK),
    Rule("google_api_key", SPECIFIC, _token("AIza", "[A-Za-z0-9_-]{35}"), _TOKEN_CHECK),
    Rule(
        "google_oauth_client_secret",
        SPECIFIC,
        _token("GOCSPX-", "[A-Za-z0-9_-]{28}"),
        _TOKEN_CHECK,
    ),
    Rule(
        "anthropic_key",
        SPECIFIC,
        _token("sk-ant-", "[a-z]{2,10}[0-9]{2}-[A-Za-z0-9_-]{32,}+"),
        _TOKEN_CHECK,
    ),
    Rule(
        "openai_key",
        SPECIFIC,
        _token("sk-proj- sk-svcacct- sk-admin-", "[A-Za-z0-9_-]{40,}+"),
        _whole(lambda value: classes(value) == 3 and varied(value)),
    ),
    Rule(
        "openai_key",
        SPECIFIC,
        _token("sk-", "[A-Za-z0-9]{32,}+"),
        _whole(lambda value: classes(value) == 3 and varied(value)),
    ),
    Rule("npm_token", SPECIFIC, _token("npm_", "[A-Za-z0-9]{36}"), _TOKEN_CHECK),
    Rule(
        "digitalocean_token",
        SPECIFIC,
        _token("dop_v1_ doo_v1_ dor_v1_", "[a-f0-9]{64}"),
        _whole(lambda value: varied(value, at_least=6)),
    ),
    Rule(
        "shopify_token",
        SPECIFIC,
        _token("shpat_ shpca_ shppa_ shpss_", "[a-fA-F0-9]{32}"),
        _whole(lambda value: varied(value, at_least=6)),
    ),
    Rule("pypi_token", SPECIFIC, _token("pypi-AgE", "[A-Za-z0-9_-]{50,}+"), _TOKEN_CHECK),
    Rule(
        "huggingface_token",
        SPECIFIC,
        _token("hf_", "[A-Za-z]{34}"),
        _whole(lambda value: classes(value) >= 2 and varied(value, at_least=10)),
    ),
    Rule(
        "sendgrid_key",
        SPECIFIC,
        _token("SG.", r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
        _TOKEN_CHECK,
    ),
    Rule(
        "jwt",
        SPECIFIC,
        _token("eyJ", r"[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]*+"),
        _whole(lambda _: True),
    ),
    Rule(
        "age_secret_key",
        SPECIFIC,
        _token("AGE-SECRET-KEY-1", "[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
        _TOKEN_CHECK,
    ),
    Rule(
        "discord_webhook_url",
        SPECIFIC,
        _DISCORD_WEBHOOK,
        _whole(lambda value: varied(value, at_least=10, tail=24)),
    ),
    Rule("discord_bot_token", SPECIFIC, _DISCORD_BOT, _discord_bot),
    Rule(
        "telegram_bot_token",
        SPECIFIC,
        _TELEGRAM_BOT,
        _telegram,
    ),
    Rule("mailgun_key", SPECIFIC, _MAILGUN, _mailgun),
    Rule("aws_secret_access_key", CONTEXT, _AWS_SECRET, _group("secret", varied)),
    Rule("azure_key", CONTEXT, _AZURE_KEY, _group("secret", lambda v: varied(v, at_least=10))),
    Rule("vendor_hex_key", CONTEXT, _VENDOR_HEX, _vendor_hex),
    Rule("connection_string", CONTEXT, _CONNECTION, _group("secret", _url_password)),
    Rule("bearer_token", CONTEXT, _BEARER, _group("secret", lambda v: token_like(v) and varied(v))),
    Rule(
        "bearer_token",
        CONTEXT,
        _AUTHORIZATION_TOKEN,
        _group("secret", lambda v: token_like(v) and varied(v)),
    ),
    Rule("basic_auth", CONTEXT, _AUTHORIZATION_BASIC, _group("secret", _basic_credentials)),
    Rule("basic_auth", CONTEXT, _BASIC, _group("secret", _bare_basic_credentials)),
    Rule("cookie", CONTEXT, _COOKIE, _group("secret", _cookie)),
    Rule("password_assignment", CONTEXT, _assigned(_PASSWORD_KEYS), _assignment(6, False)),
    Rule("generic_api_key_assignment", CONTEXT, _assigned(_TOKEN_KEYS), _assignment(12, True)),
    Rule("secret_assignment", CONTEXT, _assigned(_SECRET_KEYS), _assignment(8, True)),
    Rule("command_line_password", CONTEXT, _CLI_PASSWORD, _cli_password),
    Rule("password_in_prose", CONTEXT, _PROSE_PASSWORD, _prose_secret),
    Rule("password_in_prose", CONTEXT, _PROSE_LOGIN, _prose_secret),
    Rule("high_entropy_string", FALLBACK, _RUN, _high_entropy),
)


_NAMED_GROUP = re.compile(r"[(][?]P<[A-Za-z_][A-Za-z0-9_]*>")


def _any_of(rules: tuple[Rule, ...]) -> re.Pattern[str]:
    """One pattern that matches wherever the pattern of some rule matches.

    An alternation tries every alternative at every position against the same whole
    text, so it finds a match exactly when one of its alternatives does: a text it does
    not match holds no secret, and one regex search (in C) replaces a scan per rule.
    Named groups become plain groups (names would clash); flags become scoped flags.
    """
    alternatives = []
    for rule in rules:
        source = rule.pattern.pattern
        if "(?P=" in source or "(?(" in source or re.search(r"\\[1-9]", source):
            raise ValueError(f"rule {rule.kind} uses a back-reference")
        if rule.pattern.flags & ~(re.IGNORECASE | re.UNICODE):
            raise ValueError(f"rule {rule.kind} uses a flag the union does not carry")
        scoped = "i" if rule.pattern.flags & re.IGNORECASE else ""
        alternatives.append(f"(?{scoped}:{_NAMED_GROUP.sub('(?:', source)})")
    return re.compile("|".join(alternatives))


#: Matches a text exactly when some rule's pattern does (the detector's prefilter).
ANY_RULE: re.Pattern[str] = _any_of(RULES)
#: The rules of self-identifying formats (a vendor prefix and an exact shape) ...
SPECIFIC_RULES: tuple[Rule, ...] = tuple(rule for rule in RULES if rule.rank == SPECIFIC)
#: ... and the union of their patterns.
ANY_SPECIFIC_RULE: re.Pattern[str] = _any_of(SPECIFIC_RULES)
#: The fewest characters any rule's match spans.
SHORTEST: int = min(rule.shortest for rule in RULES)
