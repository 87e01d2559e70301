"""The published digest test vectors (docs/test-vectors.json) hold, derived independently."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import rfc8785

from engram.canonical import digest, record_id_from_digest

VECTORS = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "test-vectors.json").read_text()
)["vectors"]


@pytest.mark.parametrize("vector", VECTORS, ids=lambda vector: vector["name"])
def test_each_vector_matches_an_independent_derivation(vector: dict[str, Any]) -> None:
    canonical = rfc8785.dumps(vector["value"])
    assert canonical.hex() == vector["canonical_utf8_hex"]
    prefix = f"engram/{vector['kind']}/v1".encode() + b"\0"
    assert vector["prefix"].encode() == prefix
    independent = "sha256:" + hashlib.sha256(prefix + canonical).hexdigest()
    assert independent == vector["digest"]
    assert digest(vector["kind"], vector["value"]) == vector["digest"]
    if "record_id" in vector:
        raw = bytes.fromhex(vector["digest"][7:])
        expected = "mem_" + base64.b32encode(raw).decode().rstrip("=").lower()
        assert vector["record_id"] == expected == record_id_from_digest(vector["digest"])
        assert len(vector["record_id"]) == 4 + 52


def test_jcs_is_not_python_sorted_json() -> None:
    number_vector = VECTORS[0]
    python = json.dumps(number_vector["value"], sort_keys=True, separators=(",", ":"))
    assert python.encode().hex() != number_vector["canonical_utf8_hex"]
