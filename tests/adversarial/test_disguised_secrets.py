"""Credentials in disguise: split across components, in full-width or look-alike letters,
with a space inside, glued to a word, or encoded in base64 or hex. Each must be refused
by governed admission and by project memory, and ordinary engineering prose never."""

from __future__ import annotations

import base64
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from engram.safety.secrets import contains_secret
from engram.testing import Clock, capture_args
from tests.memory.conftest import open_memory
from tests.safety.samples import (
    ALNUM,
    BASE64URL,
    aws_access_key_id,
    fake,
    github_token,
    jwt,
    slack_bot_token,
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
}


@pytest.mark.parametrize("disguise", DISGUISES.values(), ids=DISGUISES.keys())
@pytest.mark.parametrize("token", TOKENS.values(), ids=TOKENS.keys())
def test_a_disguised_credential_is_detected(
    token: str, disguise: Callable[[str], list[str]]
) -> None:
    from engram.safety.disguise import contains_disguised_secret

    assert contains_disguised_secret(disguise(token))


@pytest.mark.parametrize("disguise", DISGUISES.values(), ids=DISGUISES.keys())
def test_governed_admission_rejects_a_disguised_credential(
    tmp_path: Path, disguise: Callable[[str], list[str]]
) -> None:
    memory = open_memory(tmp_path, Clock())
    texts = disguise(TOKENS["github"])
    components = [
        {"component_id": f"c{n}", "kind": "decision", "text": text, "citation_ids": ["cit1"]}
        for n, text in enumerate(texts, start=1)
    ]
    arguments = capture_args(key="disguise.capture-001", components=components)
    captured = memory.value("capture", arguments)
    admission = {
        "candidate_id": captured["candidate_id"],
        "idempotency_key": "disguise.admit-00001",
    }

    outcome = memory.value("request_admission", admission)["outcome"]

    assert outcome["status"] == "rejected"


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
