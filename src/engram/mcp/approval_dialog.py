"""Proposals and their approval: the token flow and the client's approval dialog.

``engram_save`` / ``engram_save_session`` build a proposal (nothing is written). When
the client shows form dialogs (and ``--no-elicitation`` is off) the human is asked
directly: the form lists candidate numbers with their verdict and id (never the
memory text) and a save scope that can be narrowed, never widened. The candidates are
one multi-select field, or one checkbox each where the protocol version has no
multi-select fields (2025-06-18).

- accept: exactly the selected candidates are written; no token is returned;
- decline, or an answer outside what was offered: the proposal is revoked (its
  token is kept as declined, so a later ``engram_commit`` with it fails with
  "approval was declined in the approval dialog");
- cancel, a timeout or a client error: the token flow, prefixed "nothing was saved".

Without a dialog the answer is the numbered preview and an ``approval_token`` for
``engram_commit``. ``engram_note`` asks a single yes/cancel question the same way.
Every stored proposal records who made it (the :class:`~engram.mcp.tools.Caller`: the
client as it names itself, the server's session, the host profile's agent id), for the
person who reviews it in ``engram console``.
Nothing is written before the human's answer is in (in the 2026-07-28 era the call
runs again from the top with the answer).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from engram.canonical import digest
from engram.errors import ElicitationFailed
from engram.mcp.tools import CallContext, Caller, ToolResult
from engram.project.approvals import Proposer
from engram.project.proposals import Candidate, parse_candidate_lines
from engram.project.results import plural
from engram.protocol.eras import FormRules
from engram.safety.display import escaped

if TYPE_CHECKING:
    from engram.project.workspace import ProjectMemory, Proposal

__all__ = ["commit", "note", "save", "save_session"]

_NOTHING_SAVED = "nothing was saved"


def _envelope(data: Mapping[str, Any]) -> ToolResult:
    from engram.mcp.project_tools import envelope

    return envelope(data)


def _proposer(caller: Caller) -> Proposer:
    """Who proposes, as the server knows the caller (never what the arguments say)."""
    client = caller.client
    return Proposer(client.name, client.title, client.version, caller.session, caller.agent)


def _roles(arguments: dict[str, Any]) -> tuple[str, ...]:
    role = arguments.get("role")
    if role is None:
        return ()
    return (role,) if isinstance(role, str) else tuple(role)


def _expand(candidates: list[Candidate], scope: str) -> list[Candidate]:
    """``both`` means a copy for the workspace and one for the global memory."""
    if scope != "both":
        return [Candidate(**{**c.__dict__, "scope": scope}) for c in candidates]
    return [
        Candidate(**{**c.__dict__, "scope": s}) for c in candidates for s in ("workspace", "global")
    ]


def save(memory: ProjectMemory, arguments: dict[str, Any], context: CallContext) -> ToolResult:
    kind = arguments.get("type", "knowledge")
    candidate = Candidate(
        type="skill" if kind == "workflow" else kind,
        text=arguments["text"],
        roles=_roles(arguments),
        source_files=tuple(arguments.get("source_files", ())),
    )
    return _propose(memory, [candidate], arguments.get("scope", "workspace"), context)


def save_session(
    memory: ProjectMemory, arguments: dict[str, Any], context: CallContext
) -> ToolResult:
    candidates = parse_candidate_lines(arguments["text"], roles=_roles(arguments))
    return _propose(memory, candidates, arguments.get("scope", "workspace"), context)


def _propose(
    memory: ProjectMemory, candidates: list[Candidate], scope: str, context: CallContext
) -> ToolResult:
    proposal = memory.propose(_expand(candidates, scope), scope)
    by = _proposer(context.caller)
    if not context.elicitation.available:
        return _token_flow(memory, proposal, "", by)
    labels = [
        f"{n}. {verdict.line() if verdict.target else f'ADD {c.memory().id}'} ({c.scope})"
        for n, (c, verdict) in enumerate(
            zip(proposal.candidates, proposal.verdicts, strict=True), 1
        )
    ]
    scopes = ["both", "workspace", "global"] if scope == "both" else [scope]
    forms = context.elicitation.forms
    form = _approval_form(labels, scopes, forms)
    count = plural(len(labels), "proposed project memory", "proposed project memories")
    message = f"Save {count}? Choose which to write." + _stale_targets(memory, proposal)
    shown = digest("proposal-shown", {"pending": proposal.pending().__dict__})
    try:
        answer = context.elicitation.ask("approve", message, form, shown=shown)
    except ElicitationFailed:
        return _token_flow(memory, proposal, _NOTHING_SAVED, by)
    if answer.action == "cancel":
        return _token_flow(memory, proposal, _NOTHING_SAVED, by)
    numbers = _chosen(answer.content, len(labels), scopes, proposal, forms)
    if answer.action == "decline" or numbers is None:
        token = memory.proposals().create(proposal.pending(), by=by, state="declined")
        reason = "declined" if answer.action == "decline" else "gave an answer outside the form"
        return _envelope(
            {
                "saved": False,
                "revoked_approval_token": token,
                "text": f"The human {reason} in the approval dialog: nothing was saved and the "
                "proposal is revoked.",
            }
        )
    outcome = memory.write(proposal, numbers, human_approved=True)
    return _envelope({**outcome.data(), "saved": True})


def _approval_form(labels: list[str], scopes: list[str], forms: FormRules) -> dict[str, Any]:
    """The form: the candidates (numbers, verdicts, ids) and the save scope."""
    candidates: dict[str, dict[str, Any]]
    if forms.multi_select:
        candidates = {
            "candidates": {
                "type": "array",
                "title": "Candidates to save",
                "items": {
                    "anyOf": [
                        {"const": str(n), "title": label} for n, label in enumerate(labels, 1)
                    ]
                },
                "default": [str(n) for n in range(1, len(labels) + 1)],
            }
        }
    else:
        candidates = {
            _checkbox(n): {"type": "boolean", "title": label, "default": True}
            for n, label in enumerate(labels, 1)
        }
    scope: dict[str, Any] = {"type": "string", "title": "Save scope", "enum": scopes}
    if forms.string_defaults:
        scope["default"] = scopes[0]
    return {
        "type": "object",
        "properties": {**candidates, "scope": scope},
        "required": list(candidates),
    }


def _checkbox(number: int) -> str:
    return f"candidate_{number}"


def _picked(content: Mapping[str, Any], count: int, forms: FormRules) -> list[int] | None:
    """The candidate numbers an answer ticks, or ``None`` if it is not an answer to the form."""
    if forms.multi_select:
        picked = content.get("candidates")
        if not isinstance(picked, list):
            return None
        try:
            numbers = sorted({int(item) for item in picked})
        except (TypeError, ValueError):
            return None
        return numbers if all(1 <= n <= count for n in numbers) else None
    boxes = [content.get(_checkbox(n)) for n in range(1, count + 1)]
    if not all(isinstance(box, bool) for box in boxes):
        return None
    return [n for n, ticked in enumerate(boxes, 1) if ticked]


def _chosen(
    content: Mapping[str, Any], count: int, scopes: list[str], proposal: Proposal, forms: FormRules
) -> list[int] | None:
    """The candidate numbers an accepting answer selects, or ``None`` if it is invalid."""
    numbers = _picked(content, count, forms)
    scope = content.get("scope", scopes[0])
    if not numbers or scope not in scopes:
        return None
    if scope != "both":
        numbers = [n for n in numbers if proposal.candidates[n - 1].scope == scope]
    return numbers or None  # a narrowing that leaves nothing to write is no answer


def _stale_targets(memory: ProjectMemory, proposal: Proposal) -> str:
    """For each UPDATE of a memory whose recorded files moved, what became of them (the
    diff from the version recorded), for the person to read beside it; ``""`` when none.
    Repository text: control characters are shown escaped."""
    blocks = []
    for number, verdict in enumerate(proposal.verdicts, 1):
        found = memory.stale_diffs(verdict.target) if verdict.kind == "UPDATE" else None
        if found is None:
            continue
        stale, diffs = found
        lines = [
            f"{number}. UPDATE {verdict.target} changes a memory whose files moved:"
            f" {stale.summary()}"
        ]
        for diff in diffs:
            lines += [diff.note, *diff.lines]
        blocks.append("\n".join(escaped(line) for line in lines))
    return "".join(f"\n\n{block}" for block in blocks)


def _token_flow(memory: ProjectMemory, proposal: Proposal, prefix: str, by: Proposer) -> ToolResult:
    token = memory.proposals().create(proposal.pending(), by=by)
    text = (
        (f"{prefix}. " if prefix else "")
        + f"Proposal ({plural(len(proposal.candidates), 'candidate')}):\n{proposal.preview}"
        + _stale_targets(memory, proposal)
        + "\n\n"
        "Show these candidates to the human. Only after they approve, call engram_commit "
        f'with approval_token and approve: "all" or the numbers they chose.\n'
        f"approval_token: {token} (single use, expires in 30 minutes)"
    )
    return _envelope(
        {
            "approval_token": token,
            "saved": False,
            "preview": proposal.preview,
            "verdicts": [v.line() for v in proposal.verdicts],
            "text": text,
        }
    )


def commit(memory: ProjectMemory, arguments: dict[str, Any], context: CallContext) -> ToolResult:
    outcome = memory.commit(arguments["approval_token"], arguments["approve"])
    return _envelope(outcome.data())


_NOTE_FORM = {
    "type": "object",
    "properties": {"save": {"type": "boolean", "title": "Save this note", "default": True}},
    "required": ["save"],
}


def note(memory: ProjectMemory, arguments: dict[str, Any], context: CallContext) -> ToolResult:
    kind = arguments.get("type", "knowledge")
    draft = memory.note(
        arguments["text"],
        arguments.get("objective", ""),
        "skill" if kind == "workflow" else kind,
        arguments.get("scope", "workspace"),
    )
    until = str(draft.get("valid_until"))
    # What the human approves, shown whole (redacted, control characters escaped).
    shown_text = "\n".join(
        escaped(line) for line in (draft.section("Content") or draft.body).splitlines()
    )
    if not context.elicitation.available:
        token = memory.note_token(draft, _proposer(context.caller))
        return _envelope(
            {
                "approval_token": token,
                "id": draft.id,
                "valid_until": until,
                "saved": False,
                "text": f"Note {draft.id} (expires {until}):\n{shown_text}\n\n"
                "Show this note to the human. Only once they agree, call engram_commit with "
                f'approval_token {token} and approve: "all".',
            }
        )
    message = f"Save this working note as {draft.id} (expires {until})?\n\n{shown_text}"
    shown = digest("note-shown", {"id": draft.id, "body": draft.body})
    try:
        answer = context.elicitation.ask("note", message, _NOTE_FORM, shown=shown)
    except ElicitationFailed:
        return _envelope({"saved": False, "text": f"{_NOTHING_SAVED}: the dialog failed"})
    if answer.action != "accept" or answer.content.get("save") is not True:
        return _envelope({"saved": False, "text": f"{_NOTHING_SAVED}: the human did not say yes"})
    return _envelope(memory.write_note(draft).data())
