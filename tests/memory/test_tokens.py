"""Host-issued bearer tokens (issue 15): what ``engram-mcp --http`` accepts, and the
many ways a token is refused before any tool runs."""

from __future__ import annotations

import base64
import json
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from engram.canonical import canonical_bytes
from engram.cli.main import cli
from engram.errors import InvalidRequestState, TokenRefused
from engram.host.profile import HostProfile, load_profile
from engram.host.tokens import MAX_TTL_S, issue_token, revoke_token, verify_token
from engram.testing import host_profile

NOW = 1_800_000_000


@pytest.fixture
def profile(tmp_path: Path) -> HostProfile:
    return load_profile(host_profile(tmp_path / "host"))


def _refusal(token: str, profile: HostProfile, now: int = NOW) -> str:
    with pytest.raises(TokenRefused) as refused:
        verify_token(token, profile, now)
    assert refused.value.code == "TOKEN_REFUSED"
    return refused.value.detail


def test_a_token_names_the_profiles_binding_and_verifies(profile: HostProfile) -> None:
    token = issue_token(profile, NOW, ttl_s=600)

    claims = verify_token(token, profile, NOW + 599)

    assert (claims.tenant, claims.workspace, claims.principal, claims.purpose) == (
        "tenant-a",
        "ws-1",
        "alice",
        profile.purpose,
    )
    assert frozenset(claims.grants) == profile.grants
    assert (claims.iat, claims.exp) == (NOW, NOW + 600)
    key = profile.keys / "token.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert len(key.read_bytes()) == 32


def test_an_expired_or_future_token_is_refused(profile: HostProfile) -> None:
    token = issue_token(profile, NOW, ttl_s=60)

    assert _refusal(token, profile, NOW + 60) == "token expired"
    assert _refusal(issue_token(profile, NOW + 3600), profile) == "token not valid yet"


def test_no_token_is_issued_when_the_key_directory_is_missing(tmp_path: Path) -> None:
    profile = load_profile(host_profile(tmp_path / "host"))
    for child in profile.keys.iterdir():
        child.unlink()
    profile.keys.rmdir()

    result = CliRunner().invoke(
        cli, ["host", "issue-token", "--host-profile", str(profile.path)], catch_exceptions=False
    )

    assert (result.exit_code, result.output) == (
        1,
        f"engram: the key directory {profile.keys} is missing: it holds the store's keys;"
        " restore it, or set [store] keys in the profile to where it is\n",
    )
    assert not profile.keys.exists()


def test_a_token_signed_to_live_longer_than_a_day_is_refused(profile: HostProfile) -> None:
    # Only a holder of token.key can sign one; its revocation would be dropped after a day.
    from engram.host.tokens import _mac

    prefix, claims, _ = issue_token(profile, NOW).split(".")
    longer = json.loads(base64.urlsafe_b64decode(claims + "=="))
    longer["exp"] = NOW + MAX_TTL_S + 1
    payload = canonical_bytes(longer)
    key = (profile.keys / "token.key").read_bytes()
    mac = base64.urlsafe_b64encode(_mac(key, payload)).rstrip(b"=").decode()
    encoded = base64.urlsafe_b64encode(payload).rstrip(b"=").decode()

    assert _refusal(f"{prefix}.{encoded}.{mac}", profile) == "token lives longer than a day"


def test_a_token_with_changed_claims_or_another_key_is_refused(
    profile: HostProfile, tmp_path: Path
) -> None:
    token = issue_token(profile, NOW)
    prefix, claims, mac = token.split(".")
    widened = json.loads(base64.urlsafe_b64decode(claims + "=="))
    widened["principal"] = "root"
    forged = base64.urlsafe_b64encode(canonical_bytes(widened)).rstrip(b"=").decode()
    other = load_profile(host_profile(tmp_path / "other"))  # another store, another key

    assert _refusal(f"{prefix}.{forged}.{mac}", profile) == "token signature does not verify"
    assert _refusal(issue_token(other, NOW), profile) == "token signature does not verify"


def test_a_token_for_another_binding_of_the_same_store_is_refused(
    profile: HostProfile, tmp_path: Path
) -> None:
    from engram.host.setup import init_host

    bob = load_profile(
        init_host(
            tmp_path / "bob",
            tenant="tenant-a",
            workspace="ws-1",
            principal="bob",
            purpose=profile.purpose,
            grants=["search"],
            store=profile.store_file,
        )
    )

    assert _refusal(issue_token(bob, NOW), profile) == "token names another binding"


@pytest.mark.parametrize(
    "token",
    [
        "",
        "Bearer x",
        "engram1.abc",
        "engram1.!!!.abc",
        "jwt.eyJ.sig",
        "engram1." + "A" * 5000 + ".x",
    ],
)
def test_a_malformed_token_is_refused(profile: HostProfile, token: str) -> None:
    issue_token(profile, NOW)  # the host has a key
    _refusal(token, profile)


def test_a_revoked_token_is_refused_by_its_token_or_its_id(profile: HostProfile) -> None:
    first, second = issue_token(profile, NOW), issue_token(profile, NOW)

    revoke_token(profile, first)
    jti = verify_token(second, profile, NOW).jti
    assert revoke_token(profile, jti) == jti

    assert _refusal(first, profile) == "token revoked"
    assert _refusal(second, profile) == "token revoked"


def test_a_host_that_issued_nothing_refuses_every_token(profile: HostProfile) -> None:
    assert _refusal("engram1.e30.AAAA", profile) == "this host has issued no token (no token.key)"


def test_the_cli_issues_and_revokes(tmp_path: Path) -> None:
    path = host_profile(tmp_path / "host")
    runner = CliRunner()

    issued = runner.invoke(cli, ["host", "issue-token", "--host-profile", str(path)])
    too_long = runner.invoke(
        cli,
        ["host", "issue-token", "--host-profile", str(path), "--ttl-seconds", str(MAX_TTL_S + 1)],
    )
    token = issued.stdout.strip()
    revoked = runner.invoke(cli, ["host", "revoke-token", token, "--host-profile", str(path)])

    assert issued.exit_code == 0
    assert token.startswith("engram1.")
    assert too_long.exit_code == 2
    assert revoked.exit_code == 0
    assert revoked.stdout.startswith("revoked token ")
    with pytest.raises(TokenRefused):
        verify_token(token, load_profile(path), NOW)


def test_every_server_of_a_store_opens_the_request_states_another_sealed(
    profile: HostProfile, tmp_path: Path
) -> None:
    """A 2026-07-28 dialog's retry may reach another server of the store: the key comes
    from the store, not from the process; another store's server cannot open it."""
    from engram.host.tokens import request_state_key
    from engram.mcp.request_state import OpenState, StateSealer

    one, two = StateSealer(request_state_key(profile)), StateSealer(request_state_key(profile))
    other = StateSealer(request_state_key(load_profile(host_profile(tmp_path / "other"))))
    asked = {"confirm": "sha256:shown"}
    sealed = one.seal("engram_memory_forget", "b", {"x": 1}, OpenState(asked=asked))

    assert two.open(sealed, "engram_memory_forget", "b", {"x": 1}).asked == asked
    with pytest.raises(InvalidRequestState):
        other.open(sealed, "engram_memory_forget", "b", {"x": 1})
