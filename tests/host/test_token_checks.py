"""What ``engram-mcp --http`` checks of every token (issue 26, item 3), in process: the
claims of an older engram, a signature checked even for claims already parsed, and a
profile whose signing key is no longer the server's."""

from __future__ import annotations

import base64
import hmac
import json
import shutil
from hashlib import sha256
from pathlib import Path

import pytest

from engram.canonical import b64url, canonical_bytes
from engram.errors import TokenRefused
from engram.host.profile import HostProfile, load_profile
from engram.host.tokens import TokenChecks, issue_token
from engram.testing import host_profile

NOW = 1_800_000_000


@pytest.fixture
def profile(tmp_path: Path) -> HostProfile:
    return load_profile(host_profile(tmp_path / "host"))


def _refusal(checks: TokenChecks, token: str) -> str:
    with pytest.raises(TokenRefused) as refused:
        checks.admit(token, NOW)
    return refused.value.detail


def _claims(token: str) -> dict[str, object]:
    data: dict[str, object] = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    return data


def test_a_token_of_an_older_engram_is_refused_with_the_next_step(profile: HostProfile) -> None:
    current = issue_token(profile, NOW)
    older = {k: v for k, v in _claims(current).items() if k != "profile"} | {"v": 1}
    payload = canonical_bytes(older)
    key = (profile.keys / "token.key").read_bytes()
    mac = hmac.new(key, b"engram-token/v1\0" + payload, sha256).digest()

    with TokenChecks(profile) as checks:
        detail = _refusal(checks, f"engram1.{b64url(payload)}.{b64url(mac)}")

    assert detail == "token issued by an older engram (claims v1): issue a new one"


def test_claims_already_parsed_still_need_their_signature(profile: HostProfile) -> None:
    token = issue_token(profile, NOW)
    prefix, claims, _ = token.split(".")
    forged = f"{prefix}.{claims}.{b64url(bytes(32))}"

    with TokenChecks(profile) as checks:
        assert checks.admit(token, NOW).claims.principal == "alice"
        detail = _refusal(checks, forged)

    assert detail == "token signature does not verify"


def test_a_profile_whose_key_directory_has_another_signing_key_is_refused(
    profile: HostProfile, tmp_path: Path
) -> None:
    token = issue_token(profile, NOW)
    with TokenChecks(profile) as checks:
        assert checks.admit(token, NOW).profile.path == profile.path
        copied = tmp_path / "copied.keys"
        shutil.copytree(profile.keys, copied)
        (copied / "token.key").unlink()
        (copied / "token.key").write_bytes(bytes(range(32)))
        (copied / "token.key").chmod(0o600)
        text = profile.path.read_text(encoding="utf-8")
        keys_line = next(line for line in text.splitlines() if line.startswith("keys = "))
        profile.path.write_text(text.replace(keys_line, f'keys = "{copied}"'), encoding="utf-8")

        detail = _refusal(checks, token)

    assert detail == "the token's profile has another signing key than this server's"


def test_the_grants_served_are_those_both_the_token_and_the_profile_still_grant(
    profile: HostProfile,
) -> None:
    token = issue_token(profile, NOW)
    text = profile.path.read_text(encoding="utf-8")
    granted = next(line for line in text.splitlines() if line.startswith("tools = "))
    profile.path.write_text(
        text.replace(granted, 'tools = ["search", "get", "capture"]'), encoding="utf-8"
    )
    with TokenChecks(profile) as checks:
        cut = checks.admit(token, NOW)
        narrow = issue_token(load_profile(profile.path), NOW)
        profile.path.write_text(text, encoding="utf-8")  # every tool granted again
        widened = checks.admit(narrow, NOW)

    assert cut.profile.grants == {"search", "get", "capture"}
    assert widened.profile.grants == {"search", "get", "capture"}  # a token never widens
    assert cut.version == widened.version  # served alike: one digest


def test_the_policy_digest_follows_the_policy_not_where_the_keys_are(
    profile: HostProfile, tmp_path: Path
) -> None:
    import dataclasses

    from engram.host.tokens import profile_digest

    moved = dataclasses.replace(profile, keys=tmp_path / "elsewhere.keys", durability="normal")
    stricter = dataclasses.replace(
        profile, policy=dataclasses.replace(profile.policy, confirm_via="both")
    )
    fewer = dataclasses.replace(profile, grants=frozenset({"search"}))

    assert profile_digest(moved) == profile_digest(profile)  # a second machine's copy
    assert profile_digest(stricter) != profile_digest(profile)
    assert profile_digest(fewer) != profile_digest(profile)
