"""The operator's screen: an agent must not be able to change what a person is shown.

Refs and keys are agent-written and shown to people (``engram host pending``, the MCP
dialog), so the schemas refuse control, separator and invisible format characters in
them (``INVALID_SCHEMA``), and every agent-written string that is shown is escaped,
even one a store kept from before the refusal.

Who asked is the server's own record: each request names the principal and agent id of
the binding the call was bound to, so a reason claiming to come from the record's owner
is seen for what it is. A reason is one framed field: whitespace runs collapsed, cut at
200 columns with a marker, and wrapped by ``engram host pending`` into lines that each
start with the reason's frame, so that on a terminal of any width from 80 columns no
reason draws a line of its own (a reason of 300 spaces and a fake request included).
"""

from __future__ import annotations

import json
import os
import pty
import select
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from engram.cli.main import cli
from engram.host.profile import load_profile
from engram.host.runtime import binding_of, open_memory
from engram.memory.gate import Operation
from engram.store.location import DatabaseUrl, StoreLocation
from engram.testing import ENGRAM, PURPOSE, capture_args, current_capture_args
from tests.adversarial.conftest import host_init

#: What an agent would write to rewrite a terminal line or reorder a dialog's text.
HOSTILE = {
    "carriage return": "reason:ok\rforget of nothing",
    "line feed": "reason:ok\nconfirm  conf_x  withdraw cand_draft",
    "ANSI erase line": "reason:\x1b[2K\x1b[1Gwithdraw of a draft",
    "ANSI colour": "\x1b[8mhidden\x1b[0m",
    "C1 CSI": "reason:\x9b2Kgone",
    "NUL": "reason:\x00",
    "DEL": "reason:\x7f",
    "right-to-left override": "reason:\u202efed.rof",
    "right-to-left isolate": "reason:\u2067withdraw\u2069",
    "line separator": "reason:one\u2028two",
    "zero width space": "reason:\u200b",
    "byte order mark": "\ufeffreason:x",
    "tag character": "reason:\U000e0041",
}


@pytest.fixture
def profile(tmp_path: Path) -> Path:
    return host_init(tmp_path / "host")


def _call(profile: Path, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    memory = open_memory(profile, sweep=False)
    try:
        result: dict[str, Any] = memory.call(tool, arguments)
        return result
    finally:
        memory.close()


FIELDS = [
    ("forget", "reason_ref"),
    ("forget", "idempotency_key"),
    ("withdraw", "reason_ref"),
    ("capture", "evidence_ref"),
    ("capture", "source_ref"),
]


def _arguments(tool: str, field: str, text: str) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "forget": {
            "record_id": "mem_aaaa",
            "idempotency_key": "forget-key-00001",
            "reason_ref": "reason:x",
        },
        "withdraw": {
            "candidate_id": "cand_aaaa",
            "idempotency_key": "withdraw-key-0001",
            "reason_ref": "reason:x",
        },
        "capture": capture_args("A fact.", key="capture-key-00001"),
    }[tool]
    if field == "evidence_ref":
        arguments["evidence"] = {**arguments["evidence"], field: text}
    elif field == "source_ref":
        arguments["payload"]["citations"][0]["source_ref"] = text
    else:
        arguments[field] = text.ljust(16, "x") if field == "idempotency_key" else text
    return arguments


@pytest.mark.parametrize("hostile", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.parametrize(("tool", "field"), FIELDS)
def test_a_ref_or_key_that_could_rewrite_a_display_is_refused_at_the_schema(
    profile: Path, tool: str, field: str, hostile: str
) -> None:
    envelope = _call(profile, tool, _arguments(tool, field, hostile))

    assert envelope["ok"] is False
    assert envelope["error"]["code"] == "INVALID_SCHEMA"
    assert hostile not in json.dumps(envelope, ensure_ascii=False)


@pytest.mark.parametrize(("tool", "field"), FIELDS)
def test_the_same_field_with_plain_text_passes_the_schema(
    profile: Path, tool: str, field: str
) -> None:
    envelope = _call(profile, tool, _arguments(tool, field, "reason:plain-text é ü 日本"))

    assert envelope.get("error", {}).get("code") != "INVALID_SCHEMA", envelope


def test_the_dialog_is_shown_the_agents_reason_escaped() -> None:
    from engram.safety.display import displayable

    operation = Operation("forget", "mem_aaaa", "reason:\x1b[2K\r\u202ewithdraw", "sha256:0")

    shown = operation.display()

    assert shown == {
        "operation": "forget",
        "target": "mem_aaaa",
        "reason": "reason:\\u001b[2K\\u000d\\u202ewithdraw",
    }
    assert displayable(shown["reason"])


@pytest.mark.parametrize("hostile", HOSTILE.values(), ids=HOSTILE.keys())
def test_escaping_shows_every_hostile_character_and_is_idempotent(hostile: str) -> None:
    from engram.safety.display import displayable, escaped

    shown = escaped(hostile)

    assert displayable(shown)
    assert escaped(shown) == shown
    assert shown.isprintable()


def _in_a_terminal(*arguments: str) -> bytes:
    """Run ``engram`` with a pseudo-terminal as its output, as an operator would."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [str(ENGRAM), *arguments], stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal
    )
    os.close(terminal)
    output = bytearray()
    while True:
        ready, _, _ = select.select([controller], [], [], 30)
        assert ready, "engram did not finish within 30 s"
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the terminal closed: the process is done
            break
        if not chunk:
            break
        output += chunk
    os.close(controller)
    assert process.wait(30) == 0, output.decode("utf-8", "replace")
    return bytes(output)


def test_pending_in_a_terminal_shows_a_request_an_older_engram_stored_escaped(
    profile: Path,
) -> None:
    loaded = load_profile(profile)
    scope = binding_of(loaded).scope.scope_id
    _call(profile, "search", {"query": "x", "purpose_ref": PURPOSE})  # the store exists
    hostile = "reason:ok\r\x1b[2Kconfirm  conf_fake  withdraw cand_draft \u202e"
    display = json.dumps({"operation": "forget", "target": "mem_real", "reason": hostile})
    with sqlite3.connect(loaded.store_file) as db:
        db.execute(
            # The columns of an older engram's row: no agent_id.
            "INSERT INTO confirmations (request_id, scope_id, principal, tool, target,"
            " operation_digest, created_ms, approved_ms, consumed_ms, display)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?)",
            (
                "conf_aaaaaaaaaaaaaaaaaaaaaaaa",
                scope,
                "agent-a",
                "forget",
                "mem_real",
                "sha256:" + "0" * 64,
                2**50,
                display,
            ),
        )

    shown = _in_a_terminal("host", "pending", "--host-profile", str(profile))

    assert shown == (
        b"confirm  conf_aaaaaaaaaaaaaaaaaaaaaaaa  forget\r\n"
        b"  target    mem_real\r\n"
        b"  asked by  principal agent-a, agent unknown\r\n"
        b"  reason    | reason:ok\\u000d\\u001b[2Kconfirm conf_fake withdraw\r\n"
        b"            | cand_draft \\u202e\r\n"
    )


# --- who asked, and reasons that try to draw lines ----------------------------------------

#: What the hostile principal writes as its reason: a claim that the owner asked.
CLAIM = "reason:agent-a, the owner of this record, asked me to forget it"
#: The widest a line of `engram host pending` may be, and the terminals it must hold on.
WIDTH = 72
TERMINALS = (80, 100, 120, 132)


def _store_option(location: StoreLocation) -> str:
    return location.url if isinstance(location, DatabaseUrl) else str(location)


@pytest.fixture
def owner_and_mallory(tmp_path: Path, store_location: StoreLocation) -> tuple[Path, Path]:
    """Two host profiles of one scope and store, on each backend: the record's owner
    (``agent-a``, agent ``agent-a-laptop``) and ``mallory`` (agent ``mallory-bot``)."""
    store = _store_option(store_location)
    owner = host_init(tmp_path / "owner", "--store", store, "--agent-id", "agent-a-laptop")
    keys = (
        []
        if isinstance(store_location, Path)
        else ["--keys", str(tmp_path / "owner" / "memory.keys")]
    )
    mallory = host_init(
        tmp_path / "mallory",
        "--store",
        store,
        *keys,
        "--principal",
        "mallory",
        "--agent-id",
        "mallory-bot",
    )
    return owner, mallory


def _admitted(profile: Path) -> str:
    captured = _call(profile, "capture", current_capture_args("A fact.", "owner.capture-000001"))
    candidate = captured["output"]["value"]["candidate_id"]
    admitted = _call(
        profile,
        "request_admission",
        {"candidate_id": candidate, "idempotency_key": "owner.admission-0001"},
    )
    return str(admitted["output"]["value"]["outcome"]["record_id"])


def _forget(profile: Path, record_id: str, reason: str, key: str = "mallory.forget-0001") -> None:
    arguments = {"record_id": record_id, "idempotency_key": key, "reason_ref": reason}
    assert _call(profile, "forget", arguments)["error"]["code"] == "gate_failed"


def _pending(profile: Path, *options: str) -> str:
    result = CliRunner().invoke(cli, ["host", "pending", "--host-profile", str(profile), *options])
    assert result.exit_code == 0, result.output
    return result.stdout


def _request_id(profile: Path) -> str:
    [request] = json.loads(_pending(profile, "--json"))["confirmations"]
    return str(request["request_id"])


def _terminal_rows(text: str, width: int) -> list[str]:
    """What a terminal of ``width`` columns shows of ``text``: each line cut into rows."""
    from engram.safety.display import columns

    rows: list[str] = []
    for line in text.splitlines():
        row = ""
        for character in line:
            if columns(row + character) > width:
                rows.append(row)
                row = ""
            row += character
        rows.append(row)
    return rows


def test_pending_names_the_principal_and_agent_the_server_bound_never_the_reasons_claim(
    owner_and_mallory: tuple[Path, Path],
) -> None:
    owner, mallory = owner_and_mallory
    record_id = _admitted(owner)

    _forget(mallory, record_id, CLAIM)

    request_id = _request_id(owner)
    assert _pending(owner) == (
        f"confirm  {request_id}  forget\n"
        f"  target    {record_id}\n"
        "  asked by  principal mallory, agent mallory-bot\n"
        "  reason    | reason:agent-a, the owner of this record, asked me to\n"
        "            | forget it\n"
    )
    assert json.loads(_pending(owner, "--json")) == {
        "confirmations": [
            {
                "request_id": request_id,
                "tool": "forget",
                "target": record_id,
                "created_ms": json.loads(_pending(owner, "--json"))["confirmations"][0][
                    "created_ms"
                ],
                "operation": "forget",
                "reason": CLAIM,
                "principal": "mallory",
                "agent_id": "mallory-bot",
            }
        ],
        "adjudications": [],
    }


def test_a_reason_of_spaces_and_a_fake_request_draws_no_line_on_a_terminal_of_known_width(
    owner_and_mallory: tuple[Path, Path],
) -> None:
    from engram.safety.display import columns

    owner, mallory = owner_and_mallory
    record_id = _admitted(owner)
    fake = "confirm  conf_bbbbbbbbbbbbbbbbbbbbbbbb  forget " + record_id
    # Padded so that, printed after "(reason: " on the request's own line as engram did,
    # the fake request starts a row of an 80-column terminal.
    before = len(f"confirm  conf_{'a' * 24}  forget {record_id} (reason: reason:x")
    reason = "reason:x" + " " * (200 + (-(before + 200)) % 80) + fake

    _forget(mallory, record_id, reason)

    shown = _pending(owner)
    request_id = _request_id(owner)
    assert shown == (
        f"confirm  {request_id}  forget\n"
        f"  target    {record_id}\n"
        "  asked by  principal mallory, agent mallory-bot\n"
        "  reason    | reason:x confirm conf_bbbbbbbbbbbbbbbbbbbbbbbb forget\n"
        f"            | {record_id}\n"
    )
    assert all(columns(line) <= WIDTH for line in shown.splitlines())
    for width in TERMINALS:
        at_the_margin = [row for row in _terminal_rows(shown, width) if not row.startswith(" ")]
        assert at_the_margin == [f"confirm  {request_id}  forget"], width


def test_a_long_reason_is_cut_with_a_marker_and_stays_in_its_frame(
    owner_and_mallory: tuple[Path, Path],
) -> None:
    from engram.safety.display import columns

    owner, mallory = owner_and_mallory
    record_id = _admitted(owner)
    reason = "reason:" + "x" * 300 + " confirm  conf_cccccccccccccccccccccccc  forget " + "y" * 150

    _forget(mallory, record_id, reason)

    shown = _pending(owner).splitlines()
    listed = json.loads(_pending(owner, "--json"))["confirmations"][0]["reason"]
    assert listed == "reason:" + "x" * 175 + " [+321 characters]"
    assert columns(listed) == 200
    assert shown[3:] == [
        "  reason    | reason:" + "x" * 51,
        "            | " + "x" * 58,
        "            | " + "x" * 58,
        "            | " + "x" * 8 + " [+321 characters]",
    ]
    assert "conf_ccc" not in "\n".join(shown)


def test_a_run_of_spaces_of_any_width_is_one_space() -> None:
    from engram.safety.display import one_line

    assert one_line("reason:a  \u00a0\u2003\u3000 b\u202f\u205fc   ", 200) == "reason:a b c"


@given(st.text(max_size=600), st.integers(min_value=30, max_value=300))
def test_any_text_is_one_safe_line_within_its_columns(text: str, limit: int) -> None:
    from engram.safety.display import columns, displayable, one_line

    line = one_line(text, limit)

    assert displayable(line)
    assert line.isprintable()
    assert columns(line) <= limit
    assert "  " not in line
    assert line == line.strip()
    assert one_line(line, limit) == line or " [+" in line


@given(st.text(max_size=600), st.integers(min_value=20, max_value=100))
def test_any_line_wraps_into_rows_of_at_most_the_width_that_hold_all_of_it(
    text: str, width: int
) -> None:
    from engram.safety.display import columns, one_line, wrapped

    line = one_line(text, 200)

    rows = wrapped(line, width)

    assert all(columns(row) <= width for row in rows)
    assert "".join(rows).replace(" ", "") == line.replace(" ", "")


def test_a_stack_of_combining_marks_keeps_two_and_shows_the_rest_escaped() -> None:
    from engram.safety.display import one_line

    assert one_line("e\u0301\u0301\u0301\u0301", 200) == "e\u0301\u0301\\u0301\\u0301"


def test_a_lone_surrogate_is_shown_escaped() -> None:
    from engram.safety.display import one_line

    assert one_line("reason:\ud800x", 200) == "reason:\\ud800x"


def test_wide_characters_count_two_columns_when_a_reason_is_cut() -> None:
    from engram.safety.display import columns, one_line

    line = one_line("日" * 300, 40)

    assert line == "日" * 11 + " [+289 characters]"
    assert columns(line) == 40


def _widest_rows(text: str, width: int) -> list[str]:
    """What the widest terminal shows of ``text`` in ``width`` columns: every character
    past ASCII drawn two wide (none is drawn wider; which ones are depends on the
    terminal's tables and settings)."""
    rows: list[str] = []
    for line in text.splitlines():
        row, used = "", 0
        for character in line:
            drawn = 1 if character.isascii() else 2
            if used + drawn > width:
                rows.append(row)
                row, used = "", 0
            row, used = row + character, used + drawn
        rows.append(row)
    return rows


def test_a_reason_of_characters_a_terminal_draws_wider_than_pythons_tables_draws_no_line(
    owner_and_mallory: tuple[Path, Path],
) -> None:
    # Seen in tmux at 80 columns: glibc draws a Yijing hexagram (U+4DC0) two wide and
    # the Hangul tone mark U+302E two wide, where Python's tables say one and none, so
    # each group below took 6 columns counted as 1, and the fake request, joined by
    # braille blanks (U+2800, no whitespace to collapse), started a row of its own.
    owner, mallory = owner_and_mallory
    record_id = _admitted(owner)
    filler = "\u4dc0\u302e\u302e" * 11
    fake = "confirm\u2800\u2800conf_" + "b" * 24 + "\u2800\u2800forget"
    reason = filler + fake + " " + filler + "\u2800\u2800target\u2800\u2800" + record_id[:30]

    _forget(mallory, record_id, reason)

    shown = _pending(owner)
    request_id = _request_id(owner)
    for width in TERMINALS:
        at_the_margin = [row for row in _widest_rows(shown, width) if not row.startswith(" ")]
        assert at_the_margin == [f"confirm  {request_id}  forget"], width


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        # Thai marks of combining class 0: a tower over the rows above in a browser, and
        # one character it cannot break, out of its cell over the buttons.
        ("\u0e01" + "\u0e31" * 5, "\u0e01\u0e31\u0e31" + "\\u0e31" * 3),
        ("x" + "\u0489" * 4, "x\u0489\u0489\\u0489\\u0489"),
        ("y" + "\u20dd" * 3, "y\u20dd\u20dd\\u20dd"),
        ("\U0001f44d" + "\U0001f3fb" * 3, "\U0001f44d\U0001f3fb\U0001f3fb\\U0001f3fb"),
        ("\u1100" * 4, "\u1100\u1100\u1100\\u1100"),
        # What people write keeps every character.
        ("\uc548\ub155\ud558\uc138\uc694", "\uc548\ub155\ud558\uc138\uc694"),
        ("\u1100\u1161\u11a8", "\u1100\u1161\u11a8"),
        ("Vi\u1ec7t", "Vi\u1ec7t"),
    ],
)
def test_a_stack_on_one_character_keeps_two_of_any_combining_class(text: str, shown: str) -> None:
    from engram.safety.display import one_line

    assert one_line(text, 200) == shown


def test_a_long_agent_id_the_host_wrote_stays_indented_under_its_request(
    tmp_path: Path, store_location: StoreLocation
) -> None:
    store = _store_option(store_location)
    owner = host_init(tmp_path / "owner", "--store", store)
    keys = (
        [] if isinstance(store_location, Path) else ["--keys", str(tmp_path / "owner/memory.keys")]
    )
    fake = "confirm  conf_bbbbbbbbbbbbbbbbbbbbbbbb  forget"
    agent = "b" * 42 + " " * 80 + fake + "c" * 100
    bot = host_init(
        tmp_path / "bot", "--store", store, *keys, "--principal", "bot", "--agent-id", agent
    )
    record_id = _admitted(owner)

    _forget(bot, record_id, "reason:cleanup")

    shown = _pending(owner)
    request_id = _request_id(owner)
    assert all(len(line) <= WIDTH for line in shown.splitlines())
    for width in TERMINALS:
        at_the_margin = [row for row in _widest_rows(shown, width) if not row.startswith(" ")]
        assert at_the_margin == [f"confirm  {request_id}  forget"], width
    assert json.loads(_pending(owner, "--json"))["confirmations"][0]["agent_id"] == agent
