"""The credential detector, measured: how much it catches, how often it errs, what it costs.

usage: .venv/bin/python bench/secret_detector.py [--runs 5] [--src DIR] [--no-record]

Three parts, each under its own key of ``bench/results.json``:

``secrets_corpus``
    A generated corpus, the same on every run (seeded): fake credentials of 15 vendor
    formats (documented prefix, random body: no real secret is here) and random
    passwords, each hidden in the ways an agent that wants one stored would hide it
    (split across components, spaced, grouped, wrapped, encoded, in look-alike letters,
    on a command line…: :data:`DISGUISES`), and ordinary texts of a coding project (docs
    prose, code, logs, commit messages, shell commands, public identifiers:
    :data:`ORDINARY`). Each is put to ``contains_disguised_secret``, the check that decides
    what is stored. Recall per disguise, false-positive rate per kind of ordinary text.
``secrets_cost``
    Milliseconds per KiB of ``find_secrets`` and of ``contains_disguised_secret`` on
    ordinary text and on text full of disguised credentials, wall time and the process's
    CPU time (``cpu_…``: what other work on a shared machine disturbs least).
``secrets_find``
    ``find_secrets`` on a 4 KB note and on 1 MB inputs (the contract's largest argument);
    the adversarial ones repeat the start of a pattern so that a backtracking regular
    expression would go quadratic.

``--src`` measures another checkout's ``src`` (an older commit, for a before/after
figure); ``--no-record`` prints without writing ``bench/results.json``.
"""

from __future__ import annotations

import argparse
import base64
import codecs
import hashlib
import json
import random
import string
import sys
import time
import urllib.parse
from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import record, summary  # noqa: E402

MEGABYTE = 1 << 20
SRC = ROOT / "src" / "engram"

UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
BASE64 = ALNUM + "+/"
BASE64URL = ALNUM + "-_"
HEX = "0123456789abcdef"
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_POD = "bcdfghjklmnpqrstvwxz2456789"  # the characters of a Kubernetes pod name's suffix

# --- Credentials: vendor formats with seeded random bodies -------------------------------


def _draw(rng: random.Random, alphabet: str, length: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


def _b64url(data: str) -> str:
    return base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")


def _jwt(rng: random.Random) -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}))
    claims = {"sub": str(rng.randrange(10**9)), "iat": 1_700_000_000 + rng.randrange(10**7)}
    return f"{header}.{_b64url(json.dumps(claims))}.{_draw(rng, BASE64URL, 43)}"


def _private_key(rng: random.Random) -> str:
    lines = [_draw(rng, BASE64, 64) for _ in range(3)] + [_draw(rng, BASE64, 20) + "=="]
    return "\n".join(["-----BEGIN RSA PRIVATE KEY-----", *lines, "-----END RSA PRIVATE KEY-----"])


#: name -> a credential of that format, from a seeded generator.
VENDORS: dict[str, Callable[[random.Random], str]] = {
    "github_classic": lambda r: "ghp_" + _draw(r, ALNUM, 36),
    "github_fine_grained": lambda r: f"github_pat_{_draw(r, ALNUM, 22)}_{_draw(r, ALNUM, 59)}",
    "gitlab": lambda r: "glpat-" + _draw(r, BASE64URL, 20),
    "slack_bot": lambda r: (
        f"xoxb-{_draw(r, string.digits, 11)}-{_draw(r, string.digits, 13)}-" + _draw(r, ALNUM, 24)
    ),
    "stripe_secret": lambda r: r.choice(["sk_live_", "rk_live_"]) + _draw(r, ALNUM, 24),
    "aws_access_key": lambda r: "AKIA" + _draw(r, UPPER_DIGITS, 16),
    "google_api": lambda r: "AIza" + _draw(r, BASE64URL, 35),
    "google_oauth": lambda r: "GOCSPX-" + _draw(r, BASE64URL, 28),
    "openai_project": lambda r: "sk-proj-" + _draw(r, BASE64URL, 48),
    "anthropic": lambda r: "sk-ant-api03-" + _draw(r, BASE64URL, 93) + "AA",
    "npm": lambda r: "npm_" + _draw(r, ALNUM, 36),
    "huggingface": lambda r: "hf_" + _draw(r, string.ascii_letters, 34),
    "sendgrid": lambda r: f"SG.{_draw(r, BASE64URL, 22)}.{_draw(r, BASE64URL, 43)}",
    "pypi": lambda r: "pypi-AgEIcHlwaS5vcmc" + _draw(r, BASE64URL, 70),
    "jwt": _jwt,
    "digitalocean": lambda r: r.choice(["dop_v1_", "doo_v1_", "dor_v1_"]) + _draw(r, HEX, 64),
    "shopify": lambda r: r.choice(["shpat_", "shpca_", "shppa_", "shpss_"]) + _draw(r, HEX, 32),
    # Self-identifying without a vendor prefix: regrouped from their own start.
    "slack_webhook": lambda r: (
        f"https://hooks.slack.com/services/T{_draw(r, UPPER_DIGITS, 8)}"
        f"/B{_draw(r, UPPER_DIGITS, 10)}/{_draw(r, ALNUM, 24)}"
    ),
    "private_key": _private_key,
    # Issue 26's third round: formats the held-out evaluations named.
    "age": lambda r: "AGE-SECRET-KEY-1" + _draw(r, BECH32.upper(), 58),
    "discord_webhook": lambda r: (
        f"https://discord.com/api/webhooks/{r.randrange(10**17, 10**19)}/{_draw(r, BASE64URL, 68)}"
    ),
    "discord_bot": lambda r: (
        base64.b64encode(str(r.randrange(10**17, 10**19)).encode()).decode().rstrip("=")
        + f".{_draw(r, BASE64URL, 6)}.{_draw(r, BASE64URL, 38)}"
    ),
    "telegram_bot": lambda r: f"{r.randrange(10**8, 10**10)}:AA{_draw(r, BASE64URL, 33)}",
}


def _password(rng: random.Random) -> str:
    """A password a person picks: words, digits and a sign, or a generated one."""
    words = ["orbit", "Falcon", "maple", "Tundra", "copper", "Vortex", "lilac", "Summit"]
    if rng.random() < 0.5:
        return (
            rng.choice(words) + str(rng.randrange(10, 9999)) + rng.choice("_.-") + rng.choice(words)
        )
    return _draw(rng, ALNUM, 10) + rng.choice("_.") + _draw(rng, ALNUM, 4)


# --- Disguises ---------------------------------------------------------------------------

_LOOKALIKE = {"a": "\u0430", "e": "\u0435", "o": "\u043e", "p": "\u0440", "c": "\u0441",
              "x": "\u0445", "y": "\u0443", "i": "\u0456", "A": "\u0410", "B": "\u0412",
              "E": "\u0415", "K": "\u041a", "M": "\u041c", "H": "\u041d", "O": "\u041e",
              "P": "\u0420", "C": "\u0421", "T": "\u0422", "X": "\u0425", "k": "\u03ba",
              "v": "\u03bd", "t": "\u03c4", "u": "\u03c5", "I": "\u0406",
              "N": "\u039d"}  # fmt: skip


def _lookalike(token: str, count: int) -> str:
    out, done = list(token), 0
    for index, letter in enumerate(token):
        if letter in _LOOKALIKE and done < count:
            out[index], done = _LOOKALIKE[letter], done + 1
    return "".join(out)


def _fullwidth(token: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in token)


def _groups(text: str, width: int, separator: str, skip: int = 0) -> str:
    head, body = text[:skip], text[skip:]
    return head + separator.join(body[i : i + width] for i in range(0, len(body), width))


def _insert(token: str, rng: random.Random, marks: Sequence[str], count: int) -> str:
    positions = sorted(rng.sample(range(2, len(token) - 1), count), reverse=True)
    for position in positions:
        token = token[:position] + rng.choice(marks) + token[position:]
    return token


def _prefix_end(token: str) -> int:
    for mark in ("_", "-", "."):
        if mark in token[:14]:
            return token.index(mark, 0, 14) + 1
    return 4


_ZWSP = ["\u200b"]
_INVISIBLE = ["\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]
_ACUTE = ["\u0301"]
_COMBINING = ["\u0301", "\u0332", "\u0308", "\u0323"]  # Mn
_ENCLOSING = ["\u20dd", "\u20e3"]  # Me
Disguise = Callable[[str, random.Random], list[str]]
#: name -> (family, how the token is disguised into the texts stored together). The
#: families docs/secrets.md calls caught are "documented"; the others are new here.
DISGUISES: dict[str, tuple[str, Disguise]] = {
    # As written, in the places a credential is pasted.
    "in_prose": ("documented", lambda t, r: [f"The deploy job uses {t} to push tags."]),
    "dotenv": ("documented", lambda t, r: [f"APP_ENV=prod\nSERVICE_TOKEN={t}\nDEBUG=0"]),
    "json_config": ("documented", lambda t, r: [json.dumps({"name": "ci", "credential": t})]),
    "yaml_config": ("documented", lambda t, r: [f'ci:\n  auth:\n    value: "{t}"\n']),
    # Split between the texts of one record.
    "split_two_components": (
        "documented",
        lambda t, r: [f"The key starts {t[:12]}", t[12:] + " and ends there."],
    ),
    "split_three_components": (
        "documented",
        lambda t, r: [f"First {t[:9]}", t[9:24], t[24:] + " done."],
    ),
    "split_component_attestation": (
        "new",
        lambda t, r: [f"Rotated the deploy key {t[:15]}", t[15:]],
    ),
    # Other letters.
    "fullwidth": ("documented", lambda t, r: [f"key {_fullwidth(t)} here"]),
    "lookalike_one": ("documented", lambda t, r: [f"key {_lookalike(t[:8], 1) + t[8:]} here"]),
    "lookalike_many": ("documented", lambda t, r: [f"key {_lookalike(t, 6)} here"]),
    # Invisible characters.
    "zero_width_space": ("documented", lambda t, r: [f"key {_insert(t, r, _ZWSP, 3)}"]),
    "zero_width_mixed": (
        "documented",
        lambda t, r: [f"key {_insert(t, r, _INVISIBLE, 5)}"],
    ),
    # Combining marks.
    "combining_acute": ("new", lambda t, r: [f"key {_insert(t, r, _ACUTE, 1)} here"]),
    "combining_many": (
        "new",
        lambda t, r: [f"key {_insert(t, r, _COMBINING, 4)} ok"],
    ),
    "combining_enclosing": ("new", lambda t, r: [f"key {_insert(t, r, _ENCLOSING, 2)}"]),
    # Spaced, glued.
    "one_space": ("documented", lambda t, r: [f"key {t[:9]} {t[9:]} here"]),
    "two_spaces": ("documented", lambda t, r: [f"key {t[:6]} {t[6:15]} {t[15:]}"]),
    "line_break_inside": ("documented", lambda t, r: [f"key {t[:14]}\n{t[14:]}\nnext line"]),
    "glued_to_word": ("documented", lambda t, r: [f"thekeyis{t}"]),
    # Groups and wraps.
    "dash_groups_4": ("new", lambda t, r: [f"key {_groups(t, 4, '-', _prefix_end(t))} ok"]),
    "dash_groups_whole_5": ("new", lambda t, r: [f"key {_groups(t, 5, '-')} ok"]),
    "dot_groups_6": ("new", lambda t, r: [f"key {_groups(t, 6, '.', _prefix_end(t))} ok"]),
    "underscore_groups_8": ("new", lambda t, r: [f"key {_groups(t, 8, '_', _prefix_end(t))}"]),
    "space_groups_4": ("new", lambda t, r: [f"The key is {_groups(t, 4, ' ')} (keep it)."]),
    "space_groups_6": ("new", lambda t, r: [f"The key is {_groups(t, 6, ' ')} (keep it)."]),
    "spaced_dash_groups": ("new", lambda t, r: [f"key: {_groups(t, 5, ' - ', _prefix_end(t))}"]),
    "wrapped_16": ("new", lambda t, r: [f"key:\n{_groups(t, 16, chr(10))}\nend of key"]),
    "wrapped_comment": ("new", lambda t, r: [f"# key:\n# {_groups(t, 20, chr(10) + '# ')}\n"]),
    "random_marks": ("new", lambda t, r: [f"key {_insert(t, r, ['-', '.', ' '], 3)} here"]),
    # Encodings.
    "base64": (
        "documented",
        lambda t, r: [f"blob {base64.b64encode(f'token={t}'.encode()).decode()}"],
    ),
    "base64url_raw": (
        "documented",
        lambda t, r: [base64.urlsafe_b64encode(t.encode()).decode().rstrip("=")],
    ),
    "hex": ("documented", lambda t, r: [f"dump {t.encode().hex()}"]),
    "percent_encoded": (
        "new",
        lambda t, r: [
            f"?token={urllib.parse.quote(t, safe='')}".replace(
                t[:4], "".join(f"%{ord(c):02X}" for c in t[:4])
            )
        ],
    ),
    "html_entities": ("new", lambda t, r: ["".join(f"&#{ord(c)};" for c in t)]),
    "backslash_x_escapes": ("new", lambda t, r: ["".join(f"\\x{ord(c):02x}" for c in t)]),
    "backslash_u_escapes": (
        "new",
        lambda t, r: ['"' + "".join(f"\\u{ord(c):04x}" for c in t) + '"'],
    ),
    "base32": ("new", lambda t, r: [f"blob {base64.b32encode(t.encode()).decode()}"]),
    "base64_of_dash_groups": (
        "new",
        lambda t, r: [
            "blob " + base64.b64encode(_groups(t, 4, "-", _prefix_end(t)).encode()).decode()
        ],
    ),
    "hex_of_spaced": ("new", lambda t, r: [f"dump {f'{t[:9]} {t[9:]}'.encode().hex()}"]),
    "string_concatenation": (
        "new",
        lambda t, r: [f'TOKEN = "{t[:10]}" + "{t[10:24]}" + "{t[24:]}"'],
    ),
    "implicit_concatenation": ("new", lambda t, r: [f"key = ('{t[:12]}'\n       '{t[12:]}')"]),
    "character_list_python": ("new", lambda t, r: [f"KEY = ''.join([{', '.join(map(repr, t))}])"]),
    "character_array_js": (
        "new",
        lambda t, r: ["const k = [" + ",".join(map(repr, t)) + "].join('');"],
    ),
    "every_character_spaced": ("new", lambda t, r: [f"key: {' '.join(t)}"]),
    "reversed": ("new", lambda t, r: [f"read it backwards: {t[::-1]}"]),
    "rot13": ("new", lambda t, r: [f"rot13: {codecs.encode(t, 'rot13')}"]),
    # Two disguises at once.
    "lookalike_and_spaced": ("new", lambda t, r: [f"key {_lookalike(t[:6], 1)} {t[6:]}"]),
    "fullwidth_dash_groups": ("new", lambda t, r: [_fullwidth(_groups(t, 4, "-", _prefix_end(t)))]),
    "zero_width_split_components": (
        "new",
        lambda t, r: [f"part one {t[:10]}\u200b", "\u200d" + t[10:]],
    ),
    # Issue 26's third round: code that spells a string, base85, names joined, code spans.
    "octal_escapes": (
        "new",
        lambda t, r: ["printf '" + "".join(f"\\{ord(c):03o}" for c in t) + "'"],
    ),
    "char_codes_js": (
        "new",
        lambda t, r: [f"const k = String.fromCharCode({', '.join(str(ord(c)) for c in t)});"],
    ),
    "chr_joined_python": ("new", lambda t, r: ["k = " + " + ".join(f"chr({ord(c)})" for c in t)]),
    "bytes_of_hex_codes": (
        "new",
        lambda t, r: ["k = bytes([" + ", ".join(hex(ord(c)) for c in t) + "]).decode()"],
    ),
    "base85": ("new", lambda t, r: [f"blob {base64.b85encode(f'key {t}'.encode()).decode()}"]),
    "ascii85": ("new", lambda t, r: [f"<~{base64.a85encode(t.encode()).decode()}~>"]),
    "mixed_quote_concatenation": (
        "new",
        lambda t, r: [f"const k = '{t[:9]}' + \"{t[9:22]}\" + `{t[22:]}`;"],
    ),
    "fstring_two_names": (
        "new",
        lambda t, r: [
            f'head = "{t[:13]}"\ntail = "{t[13:]}"\nclient = Client(f"{{head}}{{tail}}")'
        ],
    ),
    "template_literal_two_names": (
        "new",
        lambda t, r: [f"const a = '{t[:11]}';\nconst b = '{t[11:]}';\nlogin(`${{a}}${{b}}`);"],
    ),
    "names_joined_by_plus": (
        "new",
        lambda t, r: [f'p1 = "{t[:15]}"\np2 = "{t[15:]}"\nk = p1 + p2'],
    ),
    "markdown_code_spans": ("new", lambda t, r: [f"Use `{t[:10]}` `{t[10:]}` for the CI job."]),
    "labelled_pieces_in_components": (
        "new",
        lambda t, r: [f"piece {n + 1}: {t[i : i + 7]}" for n, i in enumerate(range(0, len(t), 7))],
    ),
    # Harder than the check claims to see (measured, listed as missed in docs/secrets.md).
    "split_by_a_word": ("hard", lambda t, r: [f"key {t[:10]} then {t[10:]}"]),
    "nested_base64": (
        "hard",
        lambda t, r: [base64.b64encode(base64.b64encode(t.encode())).decode()],
    ),
    "glued_and_grouped": ("hard", lambda t, r: [f"thekeyis{_groups(t, 4, '-', _prefix_end(t))}"]),
}

#: Passwords with no vendor shape: found only by where they stand.
PASSWORD_FORMS: dict[str, tuple[str, Callable[[str, random.Random], str | list[str]]]] = {
    "url_password": (
        "documented",
        lambda p, r: f"DATABASE_URL=postgres://app:{p}@db.internal:5432/app",
    ),
    "url_password_percent": (
        "new",
        lambda p, r: f"postgres://app:{urllib.parse.quote(p + '@#', safe='')}@db:5432/app",
    ),
    "url_password_fully_encoded": (
        "new",
        lambda p, r: "redis://:" + "".join(f"%{ord(c):02X}" for c in p) + "@cache:6379/0",
    ),
    "url_split_components": (
        "new",
        lambda p, r: ["The Redis URL starts redis:", f"//:{p}@cache.internal:6379/0 is the rest"],
    ),
    "url_split_attestation": (
        "new",
        lambda p, r: [f"Deploy uses postgres://app:{p[:5]}", f"{p[5:]}@db.internal:5432/app"],
    ),
    "dotenv_password": ("documented", lambda p, r: f"DB_PASSWORD={p}"),
    "mysql_attached": ("new", lambda p, r: f"mysql -h db -u root -p{p} shop < dump.sql"),
    "mysqldump_quoted": ("new", lambda p, r: f"mysqldump -uroot -p'{p}' --all-databases > all.sql"),
    "sshpass": ("new", lambda p, r: f"sshpass -p {p} ssh deploy@web1 'systemctl restart app'"),
    "curl_user": ("new", lambda p, r: f"curl -u deploy:{p} https://ci.internal/api/build"),
    "curl_user_quoted": ("new", lambda p, r: f'curl -s --user "ada:{p}" https://x.internal'),
    "pgpassword_env": ("new", lambda p, r: f"PGPASSWORD={p} psql -h db -U app -c 'select 1'"),
    "mysql_pwd_env": ("new", lambda p, r: f"MYSQL_PWD={p} mysql -u root -e 'show tables'"),
    "docker_login": ("new", lambda p, r: f"docker login -u ci -p {p} registry.internal:5000"),
    "redis_cli": ("new", lambda p, r: f"redis-cli -h cache -p 6379 -a {p} ping"),
    "smbclient": ("new", lambda p, r: f"smbclient //files/share -U ada%{p} -c ls"),
    "ldapsearch": ("new", lambda p, r: f"ldapsearch -x -D cn=admin,dc=corp -w {p} -b dc=corp"),
    "openssl_pass": ("new", lambda p, r: f"openssl pkcs12 -export -in c.pem -passout pass:{p}"),
    "htpasswd": ("new", lambda p, r: f"htpasswd -bc /etc/nginx/.htpasswd admin {p}"),
    "sqlcmd": ("new", lambda p, r: f"sqlcmd -S db -U sa -P {p} -Q 'SELECT 1'"),
    "cli_password_flag": ("documented", lambda p, r: f"app-cli migrate --password {p} --yes"),
    "base64_after_a_slash": (
        "new",
        lambda p, r: f"the signing key is /{_draw(r, ALNUM, 20)}+{_draw(r, BASE64, 19)} here",
    ),
    "password_in_prose": (
        "new",
        lambda p, r: f"the staging password is {p.replace('_', '').replace('.', '')}",
    ),
    # Issue 26's third round: passwords stated in prose, key-value shorthands ...
    "prose_password_changed_to": (
        "new",
        lambda p, r: (
            f"FYI the password for the {r.choice(['db', 'vpn', 'wiki'])} was changed to "
            f"`{p}` this morning."
        ),
    ),
    "prose_login_user_slash_password": (
        "new",
        lambda p, r: f"You can log in with {r.choice(['admin', 'ops', 'ada'])} / {p} on staging.",
    ),
    "pw_shorthand": ("new", lambda p, r: f"vpn: {r.choice(['eu-1', 'us-2'])}, pw: {p}"),
    # ... connection strings over several schemes cut or reversed ...
    "url_blank_groups": ("new", lambda p, r: f"DSN: {_groups(_url(p, r), 6, ' ')}"),
    "url_wrapped": ("new", lambda p, r: f"dsn =\n{_groups(_url(p, r), 18, chr(10))}\n"),
    "url_dash_groups": ("new", lambda p, r: f"dsn {_groups(_url(p, r), 5, '-')}"),
    "url_reversed": ("new", lambda p, r: f"backwards: {_url(p, r)[::-1]}"),
    # ... named keys of an exact shape cut or reversed ...
    "aws_secret_blank_groups": (
        "new",
        lambda p, r: _groups(f"aws_secret_access_key = {_draw(r, BASE64, 40)}", 5, " "),
    ),
    "aws_secret_wrapped": (
        "new",
        lambda p, r: f"aws_secret_access_key =\n{_groups(_draw(r, BASE64, 40), 12, chr(10))}",
    ),
    "aws_secret_reversed": (
        "new",
        lambda p, r: f"aws_secret_access_key={_draw(r, BASE64, 40)}"[::-1],
    ),
    "azure_dot_groups": ("new", lambda p, r: _groups(_azure(r), 6, ".")),
    "azure_wrapped": ("new", lambda p, r: _groups(_azure(r), 40, "\n")),
    "azure_reversed": ("new", lambda p, r: _azure(r)[::-1]),
    # ... and hex keys named by their vendor, not by a key name.
    "datadog_key_in_prose": (
        "new",
        lambda p, r: f"The Datadog API key for the agent is {_draw(r, HEX, 32)}, rotate yearly.",
    ),
    "twilio_token_next_line": ("new", lambda p, r: f"# Twilio (prod)\n{_draw(r, HEX, 32)}"),
    "mailgun_key": ("new", lambda p, r: f"mail relay uses key-{_draw(r, HEX, 32)} for now"),
}


def _url(password: str, rng: random.Random) -> str:
    scheme, user, host = rng.choice(
        [
            ("postgresql", "svc_orders", "pg.internal:5432/orders"),
            ("mysql", "report", "mysql.internal:3306/shop"),
            ("mongodb+srv", "ingest", "cluster0.mongo.internal/events"),
            ("redis", "", "cache.internal:6379/0"),
            ("amqp", "worker", "rabbit.internal:5672/jobs"),
        ]
    )
    return f"{scheme}://{user}:{password}@{host}"


def _azure(rng: random.Random) -> str:
    key = base64.b64encode(rng.randbytes(64)).decode()
    return (
        f"DefaultEndpointsProtocol=https;AccountName=store{rng.randrange(100)};AccountKey={key};"
        "EndpointSuffix=core.windows.net"
    )


def disguised_corpus(seeds: int = 2) -> list[tuple[str, str, list[str], str]]:
    """``(disguise, family, texts, vendor)`` for every vendor format, disguise and seed,
    and for every password form and seed (vendor ``password``)."""
    corpus = []
    for vendor, make in VENDORS.items():
        for seed in range(seeds):
            rng = random.Random(f"{vendor}|{seed}")
            token = make(rng)
            for name, (family, disguise) in DISGUISES.items():
                texts = disguise(token, random.Random(f"{name}|{seed}"))
                corpus.append((name, family, texts, vendor))
    for name, (family, form) in PASSWORD_FORMS.items():
        for seed in range(12):
            rng = random.Random(f"{name}|{seed}")
            written = form(_password(rng), rng)
            texts = [written] if isinstance(written, str) else written
            corpus.append((name, family, texts, "password"))
    return corpus


# --- Ordinary texts ------------------------------------------------------------------------


def _words(rng: random.Random, count: int) -> str:
    vocabulary = [
        "the",
        "a",
        "of",
        "to",
        "and",
        "in",
        "for",
        "on",
        "with",
        "as",
        "by",
        "is",
        "are",
        "be",
        "this",
        "that",
        "it",
        "from",
        "at",
        "or",
        "we",
        "our",
        "run",
        "test",
        "build",
        "deploy",
        "cache",
        "index",
        "query",
        "token",
        "key",
        "secret",
        "password",
        "config",
        "release",
        "service",
        "worker",
        "queue",
        "retry",
        "timeout",
        "request",
        "response",
        "error",
        "log",
        "trace",
        "span",
        "user",
        "session",
        "migration",
        "schema",
        "table",
        "column",
        "branch",
        "merge",
        "commit",
        "review",
        "tag",
        "version",
    ]
    return " ".join(rng.choice(vocabulary) for _ in range(count))


def _uuid(rng: random.Random) -> str:
    h = _draw(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"


def _base58check(payload: bytes) -> str:
    data = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    number, encoded = int.from_bytes(data, "big"), ""
    while number:
        number, digit = divmod(number, 58)
        encoded = BASE58[digit] + encoded
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + encoded


def _bitcoin(rng: random.Random) -> str:
    return _base58check(bytes([rng.choice([0, 5])]) + rng.randbytes(20))


def _cid_v0(rng: random.Random) -> str:
    number, encoded = int.from_bytes(b"\x12\x20" + rng.randbytes(32), "big"), ""
    while number:
        number, digit = divmod(number, 58)
        encoded = BASE58[digit] + encoded
    return encoded


def _ksuid(rng: random.Random) -> str:
    """A KSUID made in 2024-2026: seconds since 2014-05-13 and 16 random bytes, base62."""
    alphabet = string.digits + string.ascii_uppercase + string.ascii_lowercase
    number = (rng.randrange(300_000_000, 380_000_000) << 128) | rng.getrandbits(128)
    out = ""
    while number:
        number, digit = divmod(number, 62)
        out = alphabet[digit] + out
    return out.rjust(27, "0")


def _sha256_b64(rng: random.Random) -> str:
    return base64.b64encode(rng.randbytes(32)).decode()


ORDINARY: dict[str, Callable[[random.Random], str]] = {
    "docs_prose": lambda r: (
        f"To {_words(r, 6)}, set the token in your environment (never in the repository) and "
        f"run `make {r.choice(['test', 'lint', 'docs'])}`. Tokens start with ghp_ or "
        f"github_pat_; Stripe secret keys with sk_live_. {_words(r, 12).capitalize()}."
    ),
    "docs_config": lambda r: (
        f"| `{r.choice(['DATABASE_URL', 'REDIS_URL', 'API_TOKEN'])}` | required | "
        f"`postgres://user:password@localhost:5432/app` or `${{DB_URL}}` | {_words(r, 5)} |"
    ),
    "code_python": lambda r: (
        f"def connect_{_draw(r, string.ascii_lowercase, 5)}(password: str | None = None) -> Conn:\n"
        f'    password = password or os.environ["DB_PASSWORD"]\n'
        f"    token = settings.API_TOKEN\n"
        f'    headers = {{"Authorization": f"Bearer {{token}}"}}\n'
        f'    return Conn(dsn=f"postgres://app:{{password}}@db/app", timeout={r.randrange(1, 60)})'
    ),
    "code_js": lambda r: (
        f"const apiKey = process.env.STRIPE_SECRET_KEY;\n"
        f"export async function fetch{_draw(r, string.ascii_uppercase, 1)}"
        f"{_draw(r, string.ascii_lowercase, 6)}(id) {{\n"
        f"  const res = await fetch(`/api/v2/items/${{id}}?limit={r.randrange(10, 100)}`, "
        f"{{ headers: {{ Authorization: `Bearer ${{token}}` }} }});\n  return res.json();\n}}"
    ),
    "code_go_rust": lambda r: r.choice(
        [
            'password := os.Getenv("PGPASSWORD")\n'
            'if password == "" { log.Fatal("PGPASSWORD unset") }',
            'let token = std::env::var("GITHUB_TOKEN").expect("GITHUB_TOKEN");\n'
            f"let n = {r.randrange(1000)};",
        ]
    ),
    "logs": lambda r: (
        f"2026-11-{r.randrange(1, 29):02d}T{r.randrange(24):02d}:{r.randrange(60):02d}:07."
        f"{r.randrange(1000):03d}Z "
        f"INFO request_id={_uuid(r)} trace_id={_draw(r, HEX, 32)} span_id={_draw(r, HEX, 16)} "
        f"method=GET path=/api/v1/records/{r.randrange(10**6)} status=200 "
        f"duration_ms={r.randrange(1, 900)} "
        f"pod=web-{_draw(r, _POD, 10)}-{_draw(r, _POD, 5)}"
    ),
    "logs_container": lambda r: (
        f"Step {r.randrange(1, 20)}/20 : RUN pip install -r requirements.txt\n"
        f" ---> Running in {_draw(r, HEX, 12)}\n"
        f"Successfully built {_draw(r, HEX, 12)}\nsha256:{_draw(r, HEX, 64)}"
    ),
    "commit_message": lambda r: (
        f"fix({r.choice(['auth', 'cache', 'ci', 'db'])}): rotate the token handling "
        f"(#{r.randrange(100, 9999)})\n\n"
        f"{_words(r, 14).capitalize()}.\n\nReverts {_draw(r, HEX, 40)}.\n"
        f"Signed-off-by: Ada Lovelace <ada@example.org>"
    ),
    "shell_commands": lambda r: r.choice(
        [
            "mysql -u root -p shop < dump.sql",
            'mysql -u root -p"$MYSQL_ROOT_PASSWORD" -e "show databases"',
            f"docker run -d -p {r.randrange(1024, 9999)}:80 -u 1000:1000 nginx:1.25",
            'curl -u "$CI_USER:$CI_TOKEN" https://ci.internal/api',
            f"ssh -p {r.randrange(1024, 9999)} deploy@web1.internal",
            f"psql -h db -U app -p 5432 -d app_{r.randrange(100)}",
            f"redis-cli -h cache -p 6379 -n {r.randrange(16)} info",
            "sshpass -f ~/.deploy-pw ssh deploy@web1",
            "openssl rsa -passin env:KEY_PASS -in key.pem -out key.der",
            f"git log --pretty=format:%h -n {r.randrange(5, 50)} --author=ada",
            "zip -r backup.zip ./data && unzip -l backup.zip",
            "docker login -u ci --password-stdin registry.internal < token.txt",
        ]
    ),
    "stripe_publishable": lambda r: (
        f"STRIPE_PUBLISHABLE_KEY={r.choice(['pk_live_', 'pk_test_'])}{_draw(r, ALNUM, 99)}"
    ),
    "posthog_public": lambda r: (
        f"posthog.init('phc_{_draw(r, ALNUM, 43)}', {{ api_host: 'https://eu.posthog.com' }})"
    ),
    "bitcoin_address": lambda r: f"Donations: {_bitcoin(r)} (BTC) or bc1q{_draw(r, BECH32, 38)}",
    "ethereum_address": lambda r: f"contract 0x{_draw(r, HEX + 'ABCDEF', 40)} on mainnet",
    "ipfs_cid": lambda r: (
        f"pinned {_cid_v0(r)} and bafybei{_draw(r, 'abcdefghijklmnopqrstuvwxyz234567', 52)}"
    ),
    "digests": lambda r: (
        f"sha256:{_draw(r, HEX, 64)}  dist/app-{r.randrange(10)}.{r.randrange(10)}.tar.gz\n"
        f"integrity sha512-{base64.b64encode(r.randbytes(64)).decode()}"
    ),
    "ssh_fingerprint": lambda r: f"ED25519 key fingerprint is SHA256:{_sha256_b64(r).rstrip('=')}.",
    "go_sum": lambda r: (
        f"golang.org/x/{r.choice(['net', 'text', 'sys'])} v0.{r.randrange(30)}.0 "
        f"h1:{_sha256_b64(r)}"
    ),
    "uuids_shas": lambda r: (
        f"record {_uuid(r)} at commit {_draw(r, HEX, 40)} (short {_draw(r, HEX, 7)})"
    ),
    "data_uri_image": lambda r: (
        '<img alt="logo" src="data:image/png;base64,iVBORw0KGgo'
        f'{base64.b64encode(r.randbytes(60)).decode()}">'
    ),
    "engram_ids": lambda r: (
        f"mem_{_draw(r, 'abcdefghijklmnopqrstuvwxyz234567', 52)} sha256:{_draw(r, HEX, 64)}"
    ),
    "code_strings_html": lambda r: r.choice(
        [
            f'msg = "Deploy " + "finished in " + str({r.randrange(99)}) + "s"',
            f"<p>Tom &amp; Jerry &#8212; &lt;b&gt;{_words(r, 3)}&lt;/b&gt;</p>",
            f"C:\\Users\\ada\\x64\\bin\\app-{r.randrange(9)}.exe",
            f'label = ("release " "{r.randrange(10)}.{r.randrange(10)}" " notes")',
            'printf("\\x1b[31merror\\x1b[0m: %s\\n", msg);',
        ]
    ),
    "placeholders": lambda r: r.choice(
        [
            "GITHUB_TOKEN=ghp_" + "x" * 36,
            "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
            "password: <your-password>",
            "API_KEY=your_api_key_here",
            "postgres://user:password@localhost:5432/app",
            "Authorization: Bearer YOUR_TOKEN",
            "jwt.io's example: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkw"
            "IiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ."
            "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        ]
    ),
    # Issue 26's third round: public identifiers by structure or by label ...
    "stripe_object_ids": lambda r: (
        f"Refunded {r.choice(['ch', 'pi', 'py'])}_{_draw(r, ALNUM, 24)} for "
        f"cus_{_draw(r, ALNUM, 14)}; event evt_{_draw(r, ALNUM, 24)}, "
        f"balance txn_{_draw(r, ALNUM, 24)}, invoice in_{_draw(r, ALNUM, 24)}"
    ),
    "recaptcha_site_key": lambda r: r.choice(
        [
            f'<div class="g-recaptcha" data-sitekey="6L{_draw(r, BASE64URL, 38)}"></div>',
            f"grecaptcha.execute('6L{_draw(r, BASE64URL, 38)}', {{ action: 'signup' }})",
            f'<script src="https://www.google.com/recaptcha/api.js?render=6L'
            f'{_draw(r, BASE64URL, 38)}"></script>',
        ]
    ),
    "segment_write_key": lambda r: r.choice(
        [
            f'analytics.load("{_draw(r, ALNUM, 32)}");',
            f'AnalyticsBrowser.load({{ writeKey: "{_draw(r, ALNUM, 32)}" }})',
        ]
    ),
    "wireguard_public_key": lambda r: (
        f"[Peer]\nPublicKey = {base64.b64encode(r.randbytes(32)).decode()}\n"
        f"AllowedIPs = 10.{r.randrange(255)}.0.0/16\nEndpoint = vpn.example.org:51820"
    ),
    "jwk_public": lambda r: json.dumps(
        r.choice(
            [
                {
                    "kty": "RSA",
                    "kid": _draw(r, ALNUM, 16),
                    "e": "AQAB",
                    "n": base64.urlsafe_b64encode(r.randbytes(256)).decode().rstrip("="),
                },
                {
                    "kty": "EC",
                    "crv": "P-256",
                    "x": base64.urlsafe_b64encode(r.randbytes(32)).decode().rstrip("="),
                    "y": base64.urlsafe_b64encode(r.randbytes(32)).decode().rstrip("="),
                },
            ]
        )
    ),
    "ksuids": lambda r: f"job {_ksuid(r)} queued after {_ksuid(r)}",
    "mapbox_public_token": lambda r: (
        "mapboxgl.accessToken = 'pk."
        + _b64url(json.dumps({"u": _draw(r, string.ascii_lowercase, 6)}))
        + f".{_draw(r, BASE64URL, 22)}';"
    ),
    "s3_version_ids": lambda r: (
        f'{{"Key": "reports/{r.randrange(999)}.csv", "VersionId": "{_draw(r, ALNUM + "._", 32)}"}}'
    ),
    "request_ids_in_logs": lambda r: r.choice(
        [
            f"12:0{r.randrange(10)}:31 INFO req={_draw(r, ALNUM, 26)} GET /v1/items 200",
            f"x-amzn-RequestId: {_draw(r, ALNUM, 30)}",
            f'{{"level": "info", "requestId": "{_draw(r, ALNUM, 28)}", "status": 200}}',
        ]
    ),
    # ... placeholders of an .env.example, and prose about passwords and vendors ...
    "env_example": lambda r: (
        f"API_KEY={r.choice(['your-api-key-here', 'changeme', '<token>', 'xxxx'])}\n"
        f"DB_PASSWORD={r.choice(['changeme', '<password>', 'xxxxxxxx'])}\n{_words(r, 6)}"
    ),
    "prose_about_passwords": lambda r: r.choice(
        [
            "The password hashing algorithm is argon2id; the password is never logged.",
            f"Passwords are hashed with bcrypt and the password is required ({_words(r, 4)}).",
            "The password is SHA-256 hashed before it reaches the store.",
            "Log in with GitHub / Google, then the password is shown once.",
        ]
    ),
    "vendor_near_a_digest": lambda r: (
        f"Bump the {r.choice(['Datadog', 'Twilio', 'Mailgun'])} client (commit {_draw(r, HEX, 40)})"
    ),
    # ... code that joins names and lists numbers, and a Git binary patch (base85).
    "code_joined_names": lambda r: (
        f'base = "https://api.example.com"\nversion = "v{r.randrange(1, 4)}"\n'
        f'url = f"{{base}}/{{version}}/items"\nlabel = "items" + "-" + version'
    ),
    "number_lists": lambda r: (
        f"weights = [{', '.join(str(r.randrange(10, 127)) for _ in range(16))}]"
    ),
    "git_binary_patch": lambda r: (
        "GIT binary patch\nliteral "
        + str(r.randrange(100, 999))
        + "\n"
        + "z"
        + base64.b85encode(r.randbytes(48)).decode()
        + "\n\nliteral 0\nHcmV?d00001\n"
    ),
    # A placeholder, then prose on the next line (a component and its attestation).
    "placeholder_then_prose": lambda r: (
        r.choice(["export GITHUB_TOKEN=ghp_" + "x" * 36, "STRIPE_KEY=sk_live_" + "x" * 24])
        + f"\n{_words(r, 5)}"
    ),
}


def ordinary_corpus(per_kind: int = 24) -> list[tuple[str, str]]:
    return [
        (kind, make(random.Random(f"{kind}|{seed}")))
        for kind, make in ORDINARY.items()
        for seed in range(per_kind)
    ]


# --- Measuring -----------------------------------------------------------------------------


def _quality(check: Callable[[Sequence[str]], bool]) -> dict[str, object]:
    disguised = disguised_corpus()
    caught: dict[str, list[bool]] = defaultdict(list)
    families: dict[str, str] = {}
    by_family: dict[str, list[bool]] = defaultdict(list)
    by_vendor: dict[str, list[bool]] = defaultdict(list)
    for name, family, texts, vendor in disguised:
        hit = check(texts)
        caught[name].append(hit)
        by_vendor[vendor].append(hit)
        by_family[family].append(hit)
        families[name] = family
    ordinary = ordinary_corpus()
    flagged: dict[str, list[bool]] = defaultdict(list)
    for kind, text in ordinary:
        flagged[kind].append(check([text]))
    every = [hit for hits in caught.values() for hit in hits]
    claimed = [hit for family in ("documented", "new") for hit in by_family[family]]
    wrong = [hit for hits in flagged.values() for hit in hits]
    return {
        "disguised": len(every),
        "vendor_formats": len(VENDORS),
        "disguises": len(DISGUISES) + len(PASSWORD_FORMS),
        "ordinary": len(wrong),
        "recall": round(sum(every) / len(every), 4),
        "recall_documented": round(sum(by_family["documented"]) / len(by_family["documented"]), 4),
        "recall_new": round(sum(by_family["new"]) / len(by_family["new"]), 4),
        "recall_claimed": round(sum(claimed) / len(claimed), 4),
        "recall_hard": round(sum(by_family["hard"]) / len(by_family["hard"]), 4),
        "false_positive_rate": round(sum(wrong) / len(wrong), 4),
        "recall_by_disguise": {
            name: {
                "family": families[name],
                "n": len(hits),
                "recall": round(sum(hits) / len(hits), 3),
            }
            for name, hits in caught.items()
        },
        "recall_by_vendor": {
            vendor: {"n": len(hits), "recall": round(sum(hits) / len(hits), 3)}
            for vendor, hits in by_vendor.items()
        },
        "false_positive_by_kind": {
            kind: {"n": len(hits), "rate": round(sum(hits) / len(hits), 3)}
            for kind, hits in flagged.items()
        },
    }


def _per_kib(function: Callable[[], object], size: int, runs: int) -> dict[str, float]:
    """Wall time and the process's CPU time: on a machine other work shares, the wall
    time measures the load as much as the detector, its CPU time much less."""
    samples, cpu = [], []
    for _ in range(runs):
        started, started_cpu = time.perf_counter(), time.process_time()
        function()
        cpu.append((time.process_time() - started_cpu) * 1000)
        samples.append((time.perf_counter() - started) * 1000)
    figures, cpu_p50 = summary(samples), summary(cpu)["p50_ms"]
    return {
        "kib": round(size / 1024, 1),
        "p50_ms": figures["p50_ms"],
        "ms_per_kib": round(figures["p50_ms"] / (size / 1024), 4),
        "cpu_p50_ms": cpu_p50,
        "cpu_ms_per_kib": round(cpu_p50 / (size / 1024), 4),
    }


def _cost(runs: int) -> dict[str, object]:
    from engram.safety.disguise import contains_disguised_secret
    from engram.safety.secrets import find_secrets

    ordinary = "\n\n".join(text for _, text in ordinary_corpus())[: 16 * 1024]
    docs = "\n\n".join(p.read_text() for p in sorted((ROOT / "docs").glob("*.md")))[: 16 * 1024]
    disguised = "\n\n".join("\n".join(texts) for _, _, texts, _ in disguised_corpus())[: 16 * 1024]
    figures: dict[str, object] = {}
    for name, text in (
        ("ordinary_16kib", ordinary),
        ("docs_16kib", docs),
        ("disguised_16kib", disguised),
    ):
        size = len(text.encode())
        figures[f"find_secrets_{name}"] = _per_kib(partial(find_secrets, text), size, runs * 8)
        figures[f"contains_disguised_secret_{name}"] = _per_kib(
            partial(contains_disguised_secret, [text]), size, runs * 8
        )
    return figures


def _fill(unit: str, size: int = MEGABYTE) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _random_words(size: int) -> str:
    rng = random.Random(1)
    words = ["".join(rng.choice(ALNUM) for _ in range(30)) for _ in range(size // 31)]
    return " ".join(words)


def _note() -> str:
    return _fill(
        "Decision: keep BM25 as the lexical channel; see src/engram/search/lexical.py and "
        "record mem_k5a3rq7xlm2c4v6b8n0p1d3f5h7j9k2m4p6r8t0v2x4z6b8d0f2h content_digest "
        "sha256:9f2b5c7e1a3d4f6b8c0e2a4c6e8a0c2e4a6c8e0a2c4e6a8c0e2a4c6e8a0c2e4a "
        "after commit 3f9a2b7c1d0e4f5a6b7c8d9e0f1a2b3c4d5e6f7a; password = get_password()\n",
        4096,
    )


INPUTS: dict[str, Callable[[], str]] = {
    "note_4kb": _note,
    "engram_source_1mb": lambda: _fill(
        "".join(path.read_text() for path in sorted(SRC.rglob("*.py")))
    ),
    "prose_1mb": lambda: _fill("The quick brown fox jumps over the lazy dog; all is well. "),
    "random_tokens_1mb": lambda: _random_words(MEGABYTE),
    "adversarial_password_1mb": lambda: _fill('password="'),
    "adversarial_pem_1mb": lambda: _fill("-----BEGIN RSA PRIVATE KEY-----\n"),
    "invisible_cjk_1mb": lambda: _fill("漢字\u200bかな\u00ad"),
}


def _find(runs: int) -> dict[str, object]:
    from engram.safety.secrets import find_secrets, strip_invisible

    figures: dict[str, object] = {}
    for name, build in INPUTS.items():
        text = build()
        count = runs * 40 if len(text) < MEGABYTE else runs
        samples, cpu, found = [], [], 0
        for _ in range(count):
            started, started_cpu = time.perf_counter(), time.process_time()
            found = len(find_secrets(text))
            cpu.append((time.process_time() - started_cpu) * 1000)
            samples.append((time.perf_counter() - started) * 1000)
        figures[name] = {
            "chars": len(text),
            "findings": found,
            **summary(samples),
            "cpu_p50_ms": summary(cpu)["p50_ms"],
        }
    text = INPUTS["invisible_cjk_1mb"]()
    started = time.perf_counter()
    strip_invisible(text)
    figures["strip_invisible_cjk_1mb_ms"] = round((time.perf_counter() - started) * 1000, 3)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--src", type=Path, default=ROOT / "src")
    parser.add_argument("--no-record", action="store_true")
    parser.add_argument("--skip-find", action="store_true", help="leave out the 1 MB inputs")
    args = parser.parse_args()
    sys.path.insert(0, str(args.src))
    from engram.safety.disguise import contains_disguised_secret

    results = {
        "secrets_corpus": _quality(contains_disguised_secret),
        "secrets_cost": _cost(args.runs),
    }
    if not args.skip_find:
        results["secrets_find"] = _find(args.runs)
    for name, figures in results.items():
        if args.no_record:
            print(json.dumps({name: figures}, indent=2))
        else:
            record(name, figures)


if __name__ == "__main__":
    main()
