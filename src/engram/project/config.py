"""The project's JSON configuration (``.agents/.engram/config.json``).

Roles, the rule-variant mode, load defaults, whether search uses the semantic channel,
and MCP settings. A missing file means
the defaults; a file that does not parse or holds an out-of-range value is an error
naming the file and the key, never silently replaced.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from engram.durable import write_atomic
from engram.errors import ConfigError

__all__ = [
    "CONFIDENCE_FLOOR",
    "RULE_VARIANTS",
    "Config",
    "ConfigError",
    "load_config",
    "save_config",
    "semantic_off",
]

RULE_VARIANTS: Final = ("off", "light", "balanced", "strict")
#: The default of ``load.confidence_floor`` (docs/retrieval.md#confidence: how it was
#: chosen, on the development sets only).
CONFIDENCE_FLOOR: Final = 0.35
_RANGES: Final = {
    ("load", "budget_tokens"): (200, 16_000, 1_600),
    ("load", "max_memories"): (1, 32, 8),
    ("load", "working_ttl_days"): (1, 365, 7),
    ("load", "session_budget_tokens"): (100, 16_000, 1_500),
    ("mcp", "resource_limit"): (0, 200, 20),
}


@dataclass(frozen=True)
class Config:
    roles: tuple[str, ...] = ()
    rule_variant: str = "balanced"
    numbers: dict[tuple[str, str], int] = field(default_factory=dict)
    #: ``search.semantic``: rank with the semantic channel too where it is installed.
    semantic: bool = True
    #: ``load.confidence_floor``: a routed memory whose confidence is under it is not
    #: loaded (``low-relevance``).
    confidence_floor: float = CONFIDENCE_FLOOR

    def number(self, section: str, key: str) -> int:
        return self.numbers.get((section, key), _RANGES[(section, key)][2])

    @property
    def budget_tokens(self) -> int:
        return self.number("load", "budget_tokens")

    @property
    def max_memories(self) -> int:
        return self.number("load", "max_memories")

    @property
    def working_ttl_days(self) -> int:
        return self.number("load", "working_ttl_days")

    @property
    def resource_limit(self) -> int:
        return self.number("mcp", "resource_limit")

    def with_roles(self, roles: tuple[str, ...]) -> Config:
        return replace(self, roles=roles)

    def with_variant(self, variant: str) -> Config:
        return replace(self, rule_variant=variant)


def load_config(path: Path) -> Config:
    if not path.exists():
        return Config()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeError) as exc:
        raise _invalid(path, f"does not parse as JSON ({exc})", "fix the JSON") from exc
    try:
        data = json.loads(text)
    except ValueError as exc:
        if any(line.startswith("<<<<<<<") for line in text.split("\n")):
            raise _invalid(
                path,
                "holds Git's conflict markers (two branches changed the settings)",
                "keep what each side meant, remove the markers, then `git add` it",
            ) from exc
        raise _invalid(path, f"does not parse as JSON ({exc})", "fix the JSON") from exc
    if not isinstance(data, dict):
        raise _invalid(path, "must be a JSON object", "fix the JSON")
    roles = data.get("roles", [])
    variant = data.get("rule_variant", "balanced")
    if not isinstance(roles, list) or not all(isinstance(r, str) and r.strip() for r in roles):
        raise _invalid(
            path,
            "roles must be a list of non-empty strings",
            "`engram set-role --clear` clears them",
        )
    if variant not in RULE_VARIANTS:
        raise _invalid(
            path,
            f"rule_variant must be one of {', '.join(RULE_VARIANTS)}",
            "`engram set-rule-variant balanced` sets the default",
        )
    numbers = {}
    for (section, key), (low, high, _) in _RANGES.items():
        value = data.get(section, {}).get(key) if isinstance(data.get(section), dict) else None
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise _invalid(
                path,
                f"{section}.{key} must be a whole number {low}..{high}",
                f"remove it for the default, {_RANGES[(section, key)][2]}",
            )
        numbers[(section, key)] = value
    floor = _confidence_floor(path, data)
    search = data.get("search", {})
    semantic = search.get("semantic", True) if isinstance(search, dict) else None
    if not isinstance(semantic, bool):
        raise _invalid(path, "search.semantic must be true or false", "remove it for true")
    return Config(tuple(sorted(set(roles))), variant, numbers, semantic, floor)


def _confidence_floor(path: Path, data: dict[str, Any]) -> float:
    """``load.confidence_floor``: a number from 0 to 1, or the default."""
    load = data.get("load")
    floor = load.get("confidence_floor") if isinstance(load, dict) else None
    if floor is None:
        return CONFIDENCE_FLOOR
    if isinstance(floor, bool) or not isinstance(floor, int | float) or not 0 <= floor <= 1:
        raise _invalid(
            path,
            "load.confidence_floor must be a number 0..1",
            f"remove it for the default, {CONFIDENCE_FLOOR}",
        )
    return float(floor)


def _invalid(path: Path, what: str, remedy: str) -> ConfigError:
    return ConfigError(f"{path}: {what}; edit the file ({remedy})")


def save_config(path: Path, config: Config) -> None:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    data["roles"] = list(config.roles)
    data["rule_variant"] = config.rule_variant
    write_atomic(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def semantic_off(environ: Mapping[str, str]) -> bool:
    """Whether the environment (``ENGRAM_SEMANTIC=off``) turns project memory's semantic
    channel off, whatever the project's configuration says."""
    return environ.get("ENGRAM_SEMANTIC", "").strip().lower() in ("off", "0", "false", "no")
