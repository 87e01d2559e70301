"""Credentials in disguise: split across components (or a component and the attestation),
in full-width or look-alike letters, with combining marks or invisible characters inside,
spaced, grouped with dashes, dots or blanks, wrapped over lines, glued to a word, encoded
(base64, hex, percent), reversed or in ROT13; and passwords on command lines and in URLs.
Each must be refused by governed admission (SQLite and PostgreSQL) and by project memory,
and ordinary engineering prose and public identifiers never."""

from __future__ import annotations

import base64
import codecs
import random
import re
import sys
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engram.crypto.keyfiles import create_keyring
from engram.memory.engine import MemoryEngine
from engram.safety.secrets import contains_secret
from engram.testing import Clock, InMemoryStore, capture_args
from tests.memory.conftest import Memory
from tests.safety.samples import (
    ALNUM,
    BASE64,
    BASE64URL,
    HEX,
    UPPER_DIGITS,
    age_secret_key,
    aws_access_key_id,
    azure_connection_string,
    bitcoin_address,
    discord_bot_token,
    discord_webhook,
    fake,
    github_token,
    ipfs_cid_v0,
    jwt,
    ksuid,
    pem,
    slack_bot_token,
    telegram_bot_token,
)
from tests.safety.test_secrets import NOT_SECRETS

ROOT = Path(__file__).resolve().parents[2]

#: Self-identifying credentials, fake but format-correct.
TOKENS = {
    "github": github_token(seed=7),
    "aws": aws_access_key_id(seed=7),
    "slack": slack_bot_token(seed=7),
    "stripe": "sk_live_" + fake(ALNUM, 28, 7),
    "openai": "sk-proj-" + fake(ALNUM + "-_", 48, 7),
    "jwt": jwt(7),
    "gitlab": "glpat-" + fake(BASE64URL, 20, 7),
    "digitalocean": "dop_v1_" + fake("0123456789abcdef", 64, 7),
    "shopify": "shpat_" + fake("0123456789abcdef", 32, 7),
    # Self-identifying without a vendor prefix: regrouped from their own start (issue 26).
    "slack webhook": f"https://hooks.slack.com/services/T{fake(UPPER_DIGITS, 8, 7)}"
    f"/B{fake(UPPER_DIGITS, 10, 7)}/{fake(ALNUM, 24, 7)}",
    "private key": pem("RSA PRIVATE KEY"),
    # Formats the held-out evaluations of issue 26 named (third round).
    "age": age_secret_key(7),
    "discord webhook": discord_webhook(7),
    "telegram": telegram_bot_token(7),
}
#: Cyrillic and Greek twins of ASCII letters (TR39 confusables).
_LOOKALIKE = {"a": "\u0430", "e": "\u0435", "o": "\u043e", "p": "\u0440", "c": "\u0441",
              "x": "\u0445", "y": "\u0443", "i": "\u0456", "A": "\u0410", "B": "\u0412",
              "E": "\u0415", "K": "\u041a", "M": "\u041c", "H": "\u041d", "O": "\u041e",
              "P": "\u0420", "C": "\u0421", "T": "\u0422", "X": "\u0425", "k": "\u03ba",
              "v": "\u03bd", "t": "\u03c4", "u": "\u03c5", "I": "\u0406",
              "N": "\u039d"}  # fmt: skip


def _lookalike(token: str) -> str:
    """The token with its first letter that has a Cyrillic or Greek twin replaced."""
    for index, letter in enumerate(token):
        if letter in _LOOKALIKE and index >= 2:
            return token[:index] + _LOOKALIKE[letter] + token[index + 1 :]
    raise AssertionError("no look-alike letter")


def _fullwidth(token: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in token)


def _groups(token: str, width: int, separator: str, skip: int = 0) -> str:
    """``token`` cut in groups of ``width`` after its first ``skip`` characters."""
    body = token[skip:]
    return token[:skip] + separator.join(body[i : i + width] for i in range(0, len(body), width))


COMBINING = "\u0301\u0332\u20dd"  # acute, low line (Mn), enclosing circle (Me)
ZERO_WIDTH = "\u200b\u2060\ufeff"


def _marked(token: str, marks: str) -> str:
    """``token`` with one of ``marks`` after every seventh character."""
    return "".join(c + marks[i % len(marks)] if i % 7 == 6 else c for i, c in enumerate(token))


#: name -> how an agent disguises a token in one text (a list: the texts stored together).
DISGUISES: dict[str, Callable[[str], list[str]]] = {
    "split across two components": lambda t: [f"The key starts {t[:12]}", t[12:] + " and ends."],
    "full-width letters": lambda t: [f"key {_fullwidth(t)} here"],
    "a look-alike letter": lambda t: [f"key {_lookalike(t)} here"],
    "a space inside": lambda t: [f"key {t[:9]} {t[9:]} here"],
    "two spaces inside": lambda t: [f"key {t[:6]} {t[6:15]} {t[15:]}"],
    "no word boundary": lambda t: [f"thekeyis{t}"],
    "base64": lambda t: [f"config blob {base64.b64encode(f'token={t}'.encode()).decode()}"],
    "base64url": lambda t: [base64.urlsafe_b64encode(t.encode()).decode().rstrip("=")],
    "hex": lambda t: [f"dump {t.encode().hex()}"],
    # Found by the adversarial run of issue 26: each was stored before.
    "groups joined with dashes": lambda t: [f"key {_groups(t, 4, '-', 4)} ok"],
    "the whole token in dashed groups": lambda t: [f"key {_groups(t, 5, '-')} ok"],
    "groups joined with dots": lambda t: [f"key {_groups(t, 6, '.', 4)} ok"],
    "groups joined with underscores": lambda t: [f"key {_groups(t, 8, '_', 4)}"],
    "groups joined with ' - '": lambda t: [f"key: {_groups(t, 5, ' - ', 4)}"],
    "six-character groups": lambda t: [f"The key is {_groups(t, 6, ' ')} (keep it)."],
    "four-character groups": lambda t: [f"The key is {_groups(t, 4, ' ')} (keep it)."],
    "wrapped over lines": lambda t: [f"key:\n{_groups(t, 16, chr(10))}\nend of key"],
    "wrapped in a comment": lambda t: [f"# key:\n# {_groups(t, 20, chr(10) + '# ')}\n"],
    "a combining mark inside": lambda t: [f"key {t[:9]}\u0301{t[9:]} here"],
    "combining marks throughout": lambda t: [f"key {_marked(t, COMBINING)} here"],
    "zero-width characters throughout": lambda t: [f"key {_marked(t, ZERO_WIDTH)}"],
    "percent-encoded": lambda t: ["?token=" + "".join(f"%{ord(c):02X}" for c in t)],
    "reversed": lambda t: [f"read it backwards: {t[::-1]}"],
    "rot13": lambda t: [f"rot13: {codecs.encode(t, 'rot13')}"],
    "full-width and dashed": lambda t: [_fullwidth(_groups(t, 4, "-", 4))],
    "split in halves": lambda t: [f"The key starts {t[: len(t) // 2]}", t[len(t) // 2 :]],
    "HTML character references": lambda t: ["".join(f"&#{ord(c)};" for c in t)],
    "backslash escapes": lambda t: ["".join(f"\\x{ord(c):02x}" for c in t)],
    "JSON unicode escapes": lambda t: ['{"k": "' + "".join(f"\\u{ord(c):04x}" for c in t) + '"}'],
    "base32": lambda t: [f"blob {base64.b32encode(t.encode()).decode()}"],
    "concatenated string literals": lambda t: [f'TOKEN = "{t[:10]}" + "{t[10:24]}" + "{t[24:]}"'],
    "adjacent string literals": lambda t: [f"key = ('{t[:12]}'\n       '{t[12:]}')"],
    "every character spaced": lambda t: [f"key: {' '.join(t)}"],
    # Lists of one-character literals (issue 26).
    "a Python list of characters joined": lambda t: [f"KEY = ''.join([{', '.join(map(repr, t))}])"],
    "a JavaScript array of characters joined": lambda t: [
        "const key = [" + ",".join(f'"{c}"' if c != "\n" else '"\\n"' for c in t) + "].join('');"
    ],
    # Decoded text is folded and regrouped too, one level (issue 26).
    "base64 of dashed groups": lambda t: [
        "blob " + base64.b64encode(f"key {_groups(t, 4, '-', 4)} ok".encode()).decode()
    ],
    "hex of a spaced token": lambda t: [f"dump {f'key {t[:9]} {t[9:]} here'.encode().hex()}"],
    # Code that spells a string, base85, names joined, code spans (issue 26, third round).
    "octal escapes": lambda t: ["printf '" + "".join(f"\\{ord(c):03o}" for c in t) + "'"],
    "String.fromCharCode": lambda t: [
        f"const k = String.fromCharCode({', '.join(str(ord(c)) for c in t)});"
    ],
    "chr() joined": lambda t: ["k = " + " + ".join(f"chr({ord(c)})" for c in t)],
    "bytes of hex codes": lambda t: ["k = bytes([" + ", ".join(hex(ord(c)) for c in t) + "])"],
    "base85": lambda t: [f"blob {base64.b85encode(f'token={t}'.encode()).decode()}"],
    "Ascii85": lambda t: ["<~" + base64.a85encode(t.encode()).decode() + "~>"],
    "quotes of every kind joined": lambda t: [f"k = '{t[:8]}' + \"{t[8:20]}\" + `{t[20:]}`"],
    "an f-string of two names": lambda t: [
        f'head = "{t[:14]}"\ntail = "{t[14:]}"\nTOKEN = f"{{head}}{{tail}}"'
    ],
    "a template literal of two names": lambda t: [
        f"const a = '{t[:14]}';\nconst b = '{t[14:]}';\nconst k = `${{a}}${{b}}`;"
    ],
    "two names joined by +": lambda t: [f'a = "{t[:14]}"\nb = "{t[14:]}"\nk = a + b'],
    "Markdown code spans side by side": lambda t: [f"Use `{t[:12]}` `{t[12:]}` for CI"],
}


@pytest.mark.parametrize("disguise", DISGUISES.values(), ids=DISGUISES.keys())
@pytest.mark.parametrize("token", TOKENS.values(), ids=TOKENS.keys())
def test_a_disguised_credential_is_detected(
    token: str, disguise: Callable[[str], list[str]]
) -> None:
    from engram.safety.disguise import contains_disguised_secret

    assert contains_disguised_secret(disguise(token))


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    """Governed memory on the in-memory store: admission's refusal is the domain's, and
    the store's own behaviour is held by tests/store/contract/."""
    store = InMemoryStore()
    clock = Clock()
    engine = MemoryEngine(store, create_keyring(tmp_path / "memory.db.keys"), clock=clock)
    yield Memory(engine, clock, None)
    store.close()


def _admission(memory: Memory, texts: list[str], **evidence: Any) -> str:
    """The status governed admission gives a candidate whose components are ``texts``."""
    kinds = ("decision", "context", "evidence")
    components = [
        {"component_id": f"c-{n}", "kind": kinds[n % 3], "text": text, "citation_ids": ["cit1"]}
        for n, text in enumerate(texts)
    ]
    arguments = capture_args(
        key="disguise.capture-001", components=components, primary_component_id="c-0"
    )
    arguments["evidence"].update(evidence)
    captured = memory.value("capture", arguments)
    admission = {
        "candidate_id": captured["candidate_id"],
        "idempotency_key": "disguise.admit-00001",
    }
    return str(memory.value("request_admission", admission)["outcome"]["status"])


@pytest.mark.parametrize("disguise", DISGUISES.values(), ids=DISGUISES.keys())
def test_governed_admission_rejects_a_disguised_credential(
    memory: Memory, disguise: Callable[[str], list[str]]
) -> None:
    assert _admission(memory, disguise(TOKENS["github"])) == "rejected"


@pytest.mark.parametrize("token", TOKENS.values(), ids=TOKENS.keys())
def test_a_key_split_between_components_is_refused_though_ids_stand_between(
    memory: Memory, token: str
) -> None:
    pieces = [token[i : i + 12] for i in range(0, len(token), 12)]
    texts = [f"The deploy key is {pieces[0]}", *pieces[1:]]
    assert not any(contains_secret(text) for text in texts)  # no piece gives it away

    assert _admission(memory, texts) == "rejected"


def test_a_key_split_between_a_component_and_the_attestation_is_refused(memory: Memory) -> None:
    token = TOKENS["stripe"]
    text, attestation = f"Rotated the billing key {token[:18]}", token[18:]
    assert not contains_secret(text)
    assert not contains_secret(attestation)

    assert _admission(memory, [text], attestation=attestation) == "rejected"


#: A connection string cut between components (or a component and the attestation).
SPLIT_URLS = {
    "at the scheme": (
        [
            "The Redis URL starts redis:",
            "//:VZZjtxu7JTqktj9M348G@cache.internal:6379/0 is the rest",
        ],
        None,
    ),
    "in the password": (["Deploy uses postgres://app_rw:cf2qoW_m!8UZ"], "n5pe@db.internal/orders"),
    "before the host": (["part one mysql://report:aAvnPH9bzGB-oc6S", "@mysql.internal/db"], None),
}


@pytest.mark.parametrize(("texts", "attestation"), SPLIT_URLS.values(), ids=SPLIT_URLS.keys())
def test_a_connection_string_split_between_texts_is_refused(
    memory: Memory, texts: list[str], attestation: str | None
) -> None:
    assert not any(contains_secret(text) for text in [*texts, attestation or ""])
    evidence = {"attestation": attestation} if attestation else {}

    assert _admission(memory, texts, **evidence) == "rejected"


def _grouped(text: str, width: int, separator: str) -> str:
    return separator.join(text[i : i + width] for i in range(0, len(text), width))


#: Connection strings of five schemes, and keys named by an exact key name, cut or reversed.
URL_PASSWORD = "orbit5521-Vortex"
URLS = [
    f"postgresql://svc_orders:{URL_PASSWORD}@pg.internal:5432/orders",
    f"mysql://report:{URL_PASSWORD}@mysql.internal/shop",
    f"mongodb+srv://ingest:{URL_PASSWORD}@cluster0.mongo.internal/events",
    f"redis://:{URL_PASSWORD}@cache.internal:6379/0",
    f"amqp://worker:{URL_PASSWORD}@rabbit.internal:5672/jobs",
    f"aws_secret_access_key = {fake(BASE64, 40, 9)}",
    azure_connection_string(9)[0],
]
CUTS: dict[str, Callable[[str], str]] = {
    "in blank groups": lambda t: f"DSN: {_grouped(t, 6, ' ')}",
    "wrapped over lines": lambda t: f"dsn =\n{_grouped(t, 18, chr(10))}\n",
    "in dashed groups": lambda t: f"dsn {_grouped(t, 5, '-')}",
    "reversed": lambda t: f"backwards: {t[::-1]}",
}


@pytest.mark.parametrize("cut", CUTS.values(), ids=CUTS.keys())
@pytest.mark.parametrize(
    "text", URLS, ids=["postgresql", "mysql", "mongodb+srv", "redis", "amqp", "aws", "azure"]
)
def test_a_connection_string_or_a_named_key_cut_or_reversed_is_detected(
    text: str, cut: Callable[[str], str]
) -> None:
    from engram.safety.disguise import contains_disguised_secret

    assert contains_disguised_secret([cut(text)])


#: A Discord bot token has no prefix: its first segment is the bot's id in base64.
DISCORD_BOT = discord_bot_token(7)
DISCORD_BOT_DISGUISES = [
    "as written",
    "split across two components",
    "a space inside",
    "two spaces inside",
    "six-character groups",
    "wrapped over lines",
    "reversed",
    "base64",
    "hex",
    "octal escapes",
    "String.fromCharCode",
    "an f-string of two names",
]


@pytest.mark.parametrize("name", DISCORD_BOT_DISGUISES)
def test_a_discord_bot_token_is_detected_by_its_structure(name: str) -> None:
    from engram.safety.disguise import contains_disguised_secret

    texts = (
        [f"client.run('{DISCORD_BOT}')"] if name == "as written" else DISGUISES[name](DISCORD_BOT)
    )
    assert contains_disguised_secret(texts)


@pytest.mark.parametrize("token", ["github", "aws", "slack", "stripe", "openai", "telegram"])
def test_a_key_in_labelled_pieces_one_per_component_is_refused(memory: Memory, token: str) -> None:
    value = TOKENS[token]
    texts = [f"piece {n + 1}: {value[i : i + 7]}" for n, i in enumerate(range(0, len(value), 7))]
    assert not any(contains_secret(text) for text in texts)

    assert _admission(memory, texts) == "rejected"


@pytest.mark.parametrize(
    "texts",
    [
        ["see https://example.com/docs:", "ada@example.com wrote it"],
        ["The URL is postgres://user:", "${PGPASSWORD}@db/app"],
        ["mail the team:", "ops@example.com, then https://status.example.com"],
    ],
)
def test_texts_that_meet_at_an_at_sign_are_not_a_connection_string(texts: list[str]) -> None:
    from engram.safety.disguise import contains_disguised_secret

    assert not contains_disguised_secret(texts)


def test_a_record_with_no_credential_is_admitted(memory: Memory) -> None:
    texts = ["We pin the release job to ubuntu-22.04.", f"Donations go to {bitcoin_address()}."]
    assert _admission(memory, texts, attestation="reviewed by the release team") == "accepted"


#: A placeholder in one string and ordinary words in the next: joined, the filler
#: lengthened by a word (``ghp_xxxx…xobserved``) reads as a token, but is none.
PLACEHOLDER_PAIRS = {
    "github placeholder": ["export GITHUB_TOKEN=ghp_" + "x" * 36, "observed in the repository"],
    "stripe placeholder": ["STRIPE_KEY=sk_live_" + "x" * 24, "Observed in the repository"],
    "dashed placeholder": ["token: ghp_" + "-".join(["xxxx"] * 9), "observed in CI"],
    ".env.example": [
        "API_KEY=your-api-key-here\nSECRET_KEY=changeme\nTOKEN=<token>\nPASSWORD=xxxx",
        "Copy it to .env and fill in the values",
    ],
}


@pytest.mark.parametrize("texts", PLACEHOLDER_PAIRS.values(), ids=PLACEHOLDER_PAIRS.keys())
def test_a_placeholder_next_to_prose_is_admitted(memory: Memory, texts: list[str]) -> None:
    from engram.safety.disguise import contains_disguised_secret

    assert not contains_disguised_secret(texts)
    assert not contains_disguised_secret(["\n".join(texts)])
    assert _admission(memory, texts[:1], attestation=texts[1]) == "accepted"


#: Passwords without a vendor shape, in the forms a command line and a URL write them.
PASSWORD = "Falcon2041_maple"
COMMAND_LINES = {
    "mysql -p": f"mysql -h db -u root -p{PASSWORD} shop < dump.sql",
    "mysqldump -p'…'": f"mysqldump -uroot -p'{PASSWORD}' --all-databases",
    "sshpass -p": f"sshpass -p {PASSWORD} ssh deploy@web1",
    "curl -u": f"curl -u deploy:{PASSWORD} https://ci.internal/api",
    "PGPASSWORD=": f"PGPASSWORD={PASSWORD} psql -h db -U app",
    "docker login -p": f"docker login -u ci -p {PASSWORD} registry.internal",
    "redis-cli -a": f"redis-cli -h cache -a {PASSWORD} ping",
    "smbclient -U user%pass": f"smbclient //files/share -U ada%{PASSWORD}",
    "openssl pass:": f"openssl pkcs12 -export -passout pass:{PASSWORD} -out k.p12",
    "a password opening with $": "mysql -h db -u root -p$ecret9Xq shop",
    "a password opening with !": "curl -u deploy:!BayhyeA2n78H8!S https://ci.internal",
    "a password opening with *": "redis-cli -h cache -a *h5dULRs0z2mPvCS ping",
    "a password opening with #": "postgres://app:#Qw8erty2zX@db:5432/app",
    "a password opening with -": "mysql -u root -p-Xk29dLq0 shop",
    "a base64 secret after a slash": "the key /Xq7kP9vLm2Rt8wYz4Nc6Bd1Hf3Jg5Ks0Aa9Zu2Qe",
    "percent-encoded URL password": "postgres://app:"
    + urllib.parse.quote("$" + PASSWORD + "@!", safe="")
    + "@db:5432/app",
    # Stated in prose, or named by the vendor only (issue 26, third round).
    "the password stated in prose": f"the staging password is {PASSWORD}",
    "the password changed to, in backticks": f"the vpn password was changed to `{PASSWORD}`.",
    "log in with user / password": f"log in with admin / {PASSWORD} on staging",
    "pw: shorthand": "vpn: eu-1, pw: x8tAGmCxcL_5m48",
    "echoed by a command substitution": f"DB_PASSWORD=$(echo {PASSWORD}) ./migrate",
    "printed in backticks": f"export DB_PASSWORD=`printf {PASSWORD}`",
    "a Datadog key named by its vendor": f"Datadog API key for the agent: {fake(HEX, 32, 7)}",
    "a Twilio token on the line after": f"# Twilio (prod)\n{fake(HEX, 32, 8)}",
}


@pytest.mark.parametrize("text", COMMAND_LINES.values(), ids=COMMAND_LINES.keys())
def test_a_password_on_a_command_line_or_in_a_url_is_refused(memory: Memory, text: str) -> None:
    from engram.errors import SecretRefused
    from engram.project.proposals import Candidate, refuse_secrets

    assert _admission(memory, [f"Run this to restore: {text}"]) == "rejected"
    with pytest.raises(SecretRefused, match="credential-like"):
        refuse_secrets([Candidate("knowledge", f"Restore with `{text}`.")])


def test_project_memory_refuses_a_disguised_credential(tmp_path: Path) -> None:
    from engram.errors import SecretRefused
    from engram.project.layout import init_layout
    from engram.project.proposals import Candidate, refuse_secrets

    init_layout(tmp_path)
    for disguise in DISGUISES.values():
        text, *context = disguise(TOKENS["aws"])  # a split puts its second part in context
        with pytest.raises(SecretRefused, match="credential-like"):
            refuse_secrets([Candidate("knowledge", text, context="".join(context))])


def _prose() -> list[str]:
    """Ordinary engineering prose: this repository's own documentation (but the page that
    describes credential shapes), its coding-agent benchmark set in four languages, and the
    detector's own look-alikes."""
    paragraphs: list[str] = []
    for path in [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]:
        if path.name == "secrets.md":
            continue
        paragraphs += [p for p in re.split(r"\n\s*\n", path.read_text(encoding="utf-8")) if p]
    sys.path.insert(0, str(ROOT / "bench"))
    import coding_set

    built = coding_set.build()
    paragraphs += [item.text for item in built.items] + [q.text for q in built.questions]
    return paragraphs + NOT_SECRETS


def test_ordinary_engineering_prose_is_never_flagged() -> None:
    from engram.safety.disguise import contains_disguised_secret

    corpus = _prose()
    # docs/project-memory.md shows an approval token: random, and flagged as written.
    shown_tokens = [text for text in corpus if contains_secret(text)]
    assert len(shown_tokens) == 1
    assert len(corpus) > 1000

    flagged = [
        text[:80]
        for text in corpus
        if text not in shown_tokens and contains_disguised_secret([text])
    ]

    assert flagged == []


def test_folding_maps_lookalikes_and_fullwidth_to_ascii() -> None:
    from engram.safety.disguise import fold

    assert fold("ｇｈｐ_\u0430\u0440\u0456\u200b") == "ghp_api"


def test_folding_drops_every_combining_and_enclosing_mark() -> None:
    from engram.safety.disguise import fold

    assert fold("g\u0301h\u0332p\u20dd_\u0308é") == "ghp_e"


#: Public material that looks random: never a credential.
PUBLIC = {
    "stripe publishable keys": [f"pk_live_{fake(ALNUM, 99, seed)}" for seed in range(50)],
    "bitcoin addresses": [bitcoin_address(seed % 2 * 5, seed) for seed in range(50)],
    "ipfs content ids": [ipfs_cid_v0(seed) for seed in range(50)],
    # Issue 26, third round: public by structure or by label.
    "stripe object ids": [
        f"{prefix}_{fake(ALNUM, 24, seed)}"
        for seed, prefix in enumerate(["cus", "pi", "ch", "evt", "txn", "in", "sub", "pm"] * 6)
    ],
    "ksuids": [ksuid(1_500_000_000 + seed * 10_000_000, seed) for seed in range(50)],
    "recaptcha site keys": [f'data-sitekey="6L{fake(BASE64URL, 38, seed)}"' for seed in range(50)],
    "wireguard public keys": [
        f"PublicKey = {base64.b64encode(random.Random(seed).randbytes(32)).decode()}"
        for seed in range(50)
    ],
    "json web key public members": [
        f'{{"kty": "RSA", "e": "AQAB", "n": "{fake(BASE64URL, 342, seed)}"}}' for seed in range(50)
    ],
    "s3 version ids": [f'"VersionId": "{fake(ALNUM + "._", 32, seed)}"' for seed in range(50)],
}


@pytest.mark.parametrize("texts", PUBLIC.values(), ids=PUBLIC.keys())
def test_public_identifiers_are_never_refused(texts: list[str]) -> None:
    from engram.safety.disguise import contains_disguised_secret

    assert [text for text in texts if contains_disguised_secret([f"see {text} here"])] == []
