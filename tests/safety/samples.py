"""Fake but format-correct credentials and benign look-alikes, built when the tests run.

No real secret is in the repository, and no secret-shaped literal either: every token
is assembled here from its documented prefix and a seeded random body, so the same
run always builds the same samples.
"""

from __future__ import annotations

import base64
import json
import random
import string

UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
BASE64 = ALNUM + "+/"
BASE64URL = ALNUM + "-_"
HEX = "0123456789abcdef"
DIGITS = string.digits
BASE32 = "abcdefghijklmnopqrstuvwxyz234567"


def fake(alphabet: str, length: int, seed: int = 0) -> str:
    """``length`` characters of ``alphabet``, the same for the same arguments."""
    rng = random.Random(f"{alphabet}|{length}|{seed}")
    return "".join(rng.choice(alphabet) for _ in range(length))


def b64url(data: str) -> str:
    return base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")


def jwt(seed: int = 0) -> str:
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}))
    payload = b64url(json.dumps({"sub": "1234567890", "name": "Ada", "iat": 1516239022}))
    return f"{header}.{payload}.{fake(BASE64URL, 43, seed)}"


def pem(label: str, headers: str = "", lines: int = 4, newline: str = "\n") -> str:
    """A PEM block: header, optional RFC 1421 headers, 64-character base64 lines, footer."""
    body = [fake(BASE64, 64, seed) for seed in range(lines)] + [fake(BASE64, 20, 99) + "=="]
    return newline.join(
        [f"-----BEGIN {label}-----", *filter(None, [headers]), *body, f"-----END {label}-----"]
    )


def aws_access_key_id(prefix: str = "AKIA", seed: int = 0) -> str:
    return prefix + fake(UPPER_DIGITS, 16, seed)


#: One AWS-style access key id for tests that only need some credential.
KEY = aws_access_key_id()


def github_token(prefix: str = "ghp_", seed: int = 0) -> str:
    if prefix == "github_pat_":
        return f"github_pat_{fake(ALNUM, 22, seed)}_{fake(ALNUM, 59, seed)}"
    return prefix + fake(ALNUM, 36, seed)


def slack_bot_token(seed: int = 0) -> str:
    return f"xoxb-{fake(DIGITS, 11, seed)}-{fake(DIGITS, 13, seed)}-{fake(ALNUM, 24, seed)}"


def record_id(seed: int = 0) -> str:
    """An engram record id: ``mem_`` and 52 lowercase base32 characters."""
    return "mem_" + fake(BASE32, 52, seed)


def digest(seed: int = 0) -> str:
    """An engram digest: ``sha256:`` and 64 lowercase hex characters."""
    return "sha256:" + fake(HEX, 64, seed)


BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def base58check(payload: bytes) -> str:
    """``payload`` and its 4-byte SHA-256d checksum in Bitcoin's base58."""
    import hashlib

    data = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    number, encoded = int.from_bytes(data, "big"), ""
    while number:
        number, digit = divmod(number, 58)
        encoded = BASE58[digit] + encoded
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + encoded


def bitcoin_address(version: int = 0, seed: int = 0) -> str:
    """A Bitcoin P2PKH (version 0) or P2SH (version 5) address of a seeded random hash."""
    rng = random.Random(f"btc|{version}|{seed}")
    return base58check(bytes([version]) + bytes(rng.randrange(256) for _ in range(20)))


def ipfs_cid_v0(seed: int = 0) -> str:
    """An IPFS CIDv0: base58 of the SHA-256 multihash (0x12 0x20 + 32 bytes)."""
    rng = random.Random(f"cid|{seed}")
    number = int.from_bytes(b"\x12\x20" + bytes(rng.randrange(256) for _ in range(32)), "big")
    encoded = ""
    while number:
        number, digit = divmod(number, 58)
        encoded = BASE58[digit] + encoded
    return encoded


BECH32_UPPER = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def age_secret_key(seed: int = 0) -> str:
    """An age identity: ``AGE-SECRET-KEY-1`` and 58 upper-case bech32 characters."""
    return "AGE-SECRET-KEY-1" + fake(BECH32_UPPER, 58, seed)


def snowflake(seed: int = 0) -> str:
    """A Discord id: 18 or 19 digits."""
    return str(random.Random(f"snowflake|{seed}").randrange(10**17, 10**19))


def discord_webhook(seed: int = 0) -> str:
    return f"https://discord.com/api/webhooks/{snowflake(seed)}/{fake(BASE64URL, 68, seed)}"


def discord_bot_token(seed: int = 0) -> str:
    """The bot's id in base64, six characters of a timestamp, the HMAC: dot-separated."""
    bot_id = base64.b64encode(snowflake(seed).encode()).decode().rstrip("=")
    return f"{bot_id}.{fake(BASE64URL, 6, seed)}.{fake(BASE64URL, 38, seed)}"


def telegram_bot_token(seed: int = 0) -> str:
    """A bot's numeric id, a colon and 35 characters of base64url."""
    bot_id = random.Random(f"telegram|{seed}").randrange(10**8, 10**10)
    return f"{bot_id}:AA{fake(BASE64URL, 33, seed)}"


def azure_connection_string(seed: int = 0) -> tuple[str, str]:
    """An Azure storage connection string and its account key (64 random bytes in base64)."""
    rng = random.Random(f"azure|{seed}")
    key = base64.b64encode(bytes(rng.randrange(256) for _ in range(64))).decode()
    return (
        f"DefaultEndpointsProtocol=https;AccountName=acme{seed};AccountKey={key};"
        "EndpointSuffix=core.windows.net",
        key,
    )


def ksuid(seconds: int, seed: int = 0) -> str:
    """A KSUID: 4 bytes of seconds since 2014-05-13 and 16 random bytes, in base62."""
    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    rng = random.Random(f"ksuid|{seed}")
    number = ((seconds - 1_400_000_000) << 128) | rng.getrandbits(128)
    out = ""
    while number:
        number, digit = divmod(number, 62)
        out = alphabet[digit] + out
    return out.rjust(27, "0")
