"""Judgements about one candidate value: placeholder or secret, code or literal, random or not.

These are the false-positive guards the rules (:mod:`engram.safety.rules`) apply to the
text a pattern matched. Each looks at the value alone; what surrounds it (a URL, a PEM
block, a command-line flag) is the rules' business. Nothing here scans a whole text.
"""

from __future__ import annotations

import math
import re
from collections import Counter

__all__ = [
    "ENTROPY_FACTOR",
    "MIN_TRANSITION_RATE",
    "classes",
    "has_digit",
    "is_base58check_public",
    "is_placeholder",
    "looks_random",
    "percent_decoded",
    "reads_as_code",
    "shannon_entropy",
    "token_like",
    "varied",
]

#: A fallback candidate needs Shannon entropy of at least this share of the most its
#: length allows (log2 of its length, capped at 6 bits for the 64-symbol alphabet) ...
ENTROPY_FACTOR = 0.82
#: ... and at least this many changes of character class (upper, lower, digit, other)
#: per character: random text changes class about 0.6 times per character, words and
#: camelCase identifiers about 0.2 times.
MIN_TRANSITION_RATE = 0.35

_PLACEHOLDER_WORDS = frozenset(
    {
        *("none", "null", "nil", "true", "false", "yes", "no", "undefined", "empty", "n/a"),
        *("unset", "notset", "required", "optional", "default", "value", "any"),
        *("string", "str", "bytes", "int", "bool", "env", "environ", "getenv"),
        *("user", "username", "key", "apikey", "api_key", "token", "secret", "secrets"),
        *("password", "passwd", "pass", "pwd", "passphrase", "changeme", "change_me"),
        *("changeit", "example", "sample", "dummy", "test", "fake", "foo", "bar", "baz"),
        *("todo", "tbd", "fixme", "redacted", "hidden", "masked", "censored", "omitted"),
        # The default accounts' names, which tutorials give as their passwords too
        # (``mysql -uroot -proot``, ``curl -u admin:admin``): known to all, not secrets.
        *("root", "admin", "administrator", "guest", "postgres", "mysql", "redis"),
    }
)
_PLACEHOLDER_STARTS = ("<", "{", "/", "~/", "./", "../", "[redacted")
# A sign that opens a reference or a template in some syntax: ``${VAR}``, ``$(cmd)``,
# ``$VAR``, ``%(name)s``, ``%VAR%``, ``#{var}``, ``!Ref``, ``****``. A value that only starts
# with one (``$ecret9Xq``, ``!BayhyeA2n78H8!S``) is a literal.
_SIGILS = frozenset("$%!*#")
_SIGIL_FORM = re.compile(
    r"\$[{(]|\$[0-9]{1,2}+\Z|%\([A-Za-z_][A-Za-z0-9_]*+\)[a-z]|%[A-Za-z_][A-Za-z0-9_]*+%"
    r"|%[a-z]\Z|#\{|#[A-Za-z_][A-Za-z0-9_]*+#|\*++\Z"
)
_SIGIL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*+")
_PLACEHOLDER_PARTS = ("your", "xxxx", "****", "...", "example", "placeholder", "changeme", "<")
_CREDENTIAL_WORDS = ("password", "passwd", "secret", "token")

_UPPER, _LOWER, _DIGIT = re.compile("[A-Z]"), re.compile("[a-z]"), re.compile("[0-9]")
_TWO_DIGITS = re.compile(r"[0-9][^0-9]*+[0-9]")
_CLASS_RUNS = re.compile(r"[A-Z]++|[a-z]++|[0-9]++|[^A-Za-z0-9]++")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*+(?:\.[A-Za-z_][A-Za-z0-9_]*+)*+")
_CALL_OR_SUBSCRIPT = re.compile(r"[(\[{]")
_CAMEL_HUMP = re.compile(r"[a-z0-9][A-Z]")
# Capitalized words and numbers (``PKCS7PrivateKeyTypes``, ``Ed25519PrivateKey``): a random
# token rarely qualifies, since it almost always has a lower-case letter after a digit.
_TYPE_NAME = re.compile(r"(?:[A-Z]++[a-z]*+|[0-9]++)++")
_N_LOG_N = [0.0] + [n * math.log2(n) for n in range(1, 4097)]  # runs are analysed to 4096


def has_digit(value: str) -> bool:
    return _DIGIT.search(value) is not None


def classes(value: str) -> int:
    """How many of upper case, lower case and digits ``value`` contains."""
    return sum(1 for pattern in (_UPPER, _LOWER, _DIGIT) if pattern.search(value))


def varied(value: str, at_least: int = 8, tail: int = 16) -> bool:
    """Random material rather than a placeholder such as ``ghp_xxxx…``: the last ``tail``
    characters hold at least ``at_least`` distinct ones."""
    return len(set(value[-tail:])) >= at_least


def is_placeholder(value: str) -> bool:
    """Whether ``value`` reads as a stand-in (``changeme``, ``<token>``, ``${VAR}``, ``****``,
    a path) or as the name of a credential rather than one (``challengePassword``)."""
    lowered = value.lower()
    return (
        lowered in _PLACEHOLDER_WORDS
        or lowered.startswith(_PLACEHOLDER_STARTS)
        or (value[:1] in _SIGILS and _sigil_placeholder(value))
        or any(part in lowered for part in _PLACEHOLDER_PARTS)
        or len(set(lowered)) <= 2
        or _names_a_credential(value, lowered)
    )


def _sigil_placeholder(value: str) -> bool:
    """``value`` opens with ``$ % ! * #``: a placeholder when it is a reference or template
    form, or when what follows the sign reads as a name (``$DB_PASSWORD``, ``$password``,
    ``!vault``, ``$PASSWORD1``) rather than generated material (``$ecret9Xq``)."""
    if _SIGIL_FORM.match(value):
        return True
    rest = value[1:]
    name = _SIGIL_NAME.match(rest)
    if name is None:
        return not (has_digit(rest) and classes(rest) >= 2)
    word = name.group()
    return not has_digit(word) or "_" in word or word.isupper() or word.islower()


def _names_a_credential(value: str, lowered: str) -> bool:
    """``challengePassword``, ``next_token``, ``my-secret``: a compound name that mentions
    a credential and has no digit (``supersecret`` and ``Passw0rd`` are not names)."""
    return (
        any(word in lowered for word in _CREDENTIAL_WORDS)
        and not has_digit(value)
        and (_CAMEL_HUMP.search(value) is not None or any(mark in value for mark in "_-."))
    )


def token_like(value: str) -> bool:
    """Generated material: a digit, another character class, variety, no placeholder."""
    return (
        has_digit(value)
        and classes(value) >= 2
        and varied(value, at_least=6)
        and not is_placeholder(value)
    )


def reads_as_code(value: str, type_names_are_code: bool) -> bool:
    """Whether an unquoted value is code rather than a literal: a call, a subscript, a
    dotted name, or an identifier with no digit or with an underscore
    (``get_password()``, ``settings.DB_PASSWORD``, ``str``). With ``type_names_are_code``
    a name made of capitalized words and numbers is code too (``PKCS7PrivateKeyTypes``).
    ``hunter22`` and ``Tr0ub4dor`` are literals."""
    if _CALL_OR_SUBSCRIPT.search(value):
        return True
    if _IDENTIFIER.fullmatch(value):
        return (
            "." in value
            or "_" in value
            or not has_digit(value)
            or (type_names_are_code and _TYPE_NAME.fullmatch(value) is not None)
        )
    return False


def shannon_entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character (0.0 for the empty string)."""
    size = len(value)
    if size == 0:
        return 0.0
    # H = log2(size) - sum(n * log2(n)) / size, with n * log2(n) looked up rather than
    # computed symbol by symbol in Python: this runs on every fallback candidate.
    counts = Counter(value).values()
    if size < len(_N_LOG_N):
        total = sum(map(_N_LOG_N.__getitem__, counts))
    else:
        total = sum(n * math.log2(n) for n in counts)
    return math.log2(size) - total / size


def looks_random(value: str) -> bool:
    """Mixed classes (upper, lower, two digits), high entropy and frequent class changes."""
    if not (_UPPER.search(value) and _LOWER.search(value) and _TWO_DIGITS.search(value)):
        return False
    size = len(value)
    if shannon_entropy(value) < ENTROPY_FACTOR * math.log2(min(size, 64)):
        return False
    return len(_CLASS_RUNS.findall(value)) - 1 >= MIN_TRANSITION_RATE * (size - 1)


_PERCENT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})++")


def percent_decoded(value: str) -> str:
    """``value`` with its runs of percent-encoded UTF-8 decoded (``p%40ss`` is ``p@ss``); a
    run that is not UTF-8 (``%DB_PASS%`` on Windows) is kept as written."""
    if "%" not in value:
        return value

    def decode(match: re.Match[str]) -> str:
        try:
            return bytes.fromhex(match.group().replace("%", "")).decode("utf-8")
        except UnicodeDecodeError:
            return match.group()

    return _PERCENT_RUN.sub(decode, value)


_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_BASE58_VALUE = {character: index for index, character in enumerate(_BASE58)}
#: Base58Check payload versions of public material: Bitcoin P2PKH and P2SH addresses
#: (mainnet 0x00, 0x05; testnet 0x6f, 0xc4) and BIP 32 extended *public* keys (xpub,
#: ypub, zpub, tpub, upub, vpub). WIF private keys (0x80, 0xef) and xprv are not here.
_PUBLIC_VERSIONS = (b"\x00", b"\x05", b"\x6f", b"\xc4")
_EXTENDED_PUBLIC = (
    bytes.fromhex(version)
    for version in ("0488b21e", "049d7cb2", "04b24746", "043587cf", "044a5262", "045f1cf6")
)
_EXTENDED_PUBLIC_VERSIONS = tuple(_EXTENDED_PUBLIC)


def is_base58check_public(value: str) -> bool:
    """Whether ``value`` is a Base58Check-encoded Bitcoin address or extended public key:
    the right length and version, and its 4-byte SHA-256d checksum holds (a random token
    passes one time in four billion)."""
    if not 25 <= len(value) <= 112 or any(c not in _BASE58_VALUE for c in value):
        return False
    number = 0
    for character in value:
        number = number * 58 + _BASE58_VALUE[character]
    zeros = len(value) - len(value.lstrip("1"))
    data = b"\x00" * zeros + number.to_bytes((number.bit_length() + 7) // 8, "big")
    if len(data) == 25:
        public = data[:1] in _PUBLIC_VERSIONS
    elif len(data) == 82:
        public = data[:4] in _EXTENDED_PUBLIC_VERSIONS
    else:
        return False
    # Imported here: only a base58 candidate of the right length gets this far.
    import hashlib

    check = hashlib.sha256(hashlib.sha256(data[:-4]).digest()).digest()[:4]
    return public and check == data[-4:]
