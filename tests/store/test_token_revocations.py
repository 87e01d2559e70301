"""The store's list of revoked bearer tokens (issue 26, item 3): on both backends, every
opener of the store sees a revocation at once, and a revocation is dropped only once no
token it names can still be valid."""

from __future__ import annotations

from engram.host.tokens import KEEP_REVOCATION_MS
from engram.store.location import StoreLocation
from engram.store.token_revocations import open_token_revocations

T0 = 1_800_000_000_000


def test_a_revocation_is_seen_at_once_by_every_opener_of_the_store(
    store_location: StoreLocation,
) -> None:
    one, two = open_token_revocations(store_location), open_token_revocations(store_location)
    try:
        assert two.is_revoked("jti-a") is False

        one.revoke("jti-a", T0, KEEP_REVOCATION_MS)
        one.revoke("jti-a", T0 + 1, KEEP_REVOCATION_MS)  # twice is once

        assert two.is_revoked("jti-a") is True
        assert two.is_revoked("jti-b") is False
        assert two.revoked_ids() == ["jti-a"]
    finally:
        one.close()
        two.close()


def test_a_revocation_is_kept_a_day_and_the_skew_then_dropped_by_a_later_one(
    store_location: StoreLocation,
) -> None:
    revocations = open_token_revocations(store_location)
    try:
        revocations.revoke("old", T0, KEEP_REVOCATION_MS)
        revocations.revoke("kept", T0 + KEEP_REVOCATION_MS, KEEP_REVOCATION_MS)
        assert revocations.revoked_ids() == ["kept", "old"]  # exactly the limit: kept

        revocations.revoke("new", T0 + KEEP_REVOCATION_MS + 1, KEEP_REVOCATION_MS)

        assert revocations.revoked_ids() == ["kept", "new"]
        assert KEEP_REVOCATION_MS == (86_400 + 60) * 1000
    finally:
        revocations.close()
