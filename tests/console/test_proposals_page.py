"""The proposals page over HTTP, as the person who approves reads it: what each candidate
says first (its frontmatter folded), what approving it writes, who proposed it and when,
diffs whose sides are named, and a decision candidate by candidate that writes exactly
the candidates approved through the one commit path."""

from __future__ import annotations

import html
import http.client
import json
import re
import urllib.parse
from pathlib import Path
from typing import Any

from engram.testing import call, data_of, host_profile, legacy_init
from engram.testing.projects import Project
from tests.console.conftest import RunningConsole, start_console
from tests.console.test_http import _log_in, _page

CLAUDE = {"name": "claude-code", "title": "Claude Code", "version": "2.1.3"}
TWO = (
    "TYPE: rule | TEXT: Prefer small pull requests | TRIGGERS: review, merge\n"
    "TYPE: knowledge | TEXT: The staging host is bluebird | CONTEXT: since the move\n"
)


def _propose(
    project: Project, lines: str, *args: str, client_info: dict[str, Any] | None = None
) -> None:
    """An agent proposes ``lines`` through its engram-mcp (``args``), the token flow."""
    with project.start(*args) as agent:
        if client_info is not None:
            legacy_init(agent, client_info=client_info)
        assert data_of(call(agent, "engram_save_session", {"text": lines}))["saved"] is False


def _session(project: Project) -> str:
    [entry] = project.pending_proposals().values()
    return str(entry["proposer"]["session"])


def _review_page(project: Project) -> tuple[RunningConsole, str, str]:
    """The console started in the project, a session, and its proposals page."""
    console = start_console(project)
    cookie = _log_in(console)
    return console, cookie, _page(console, "/project/proposals", cookie)


def _form_fields(page: str) -> dict[str, str]:
    """The first proposal's form: its action and hidden fields."""
    action = re.search(r'<form method="post" action="([^"]+)">', page)
    token = re.search(r'name="form_token" value="([^"]+)"', page)
    digest = re.search(r'name="digest" value="([^"]+)"', page)
    assert action is not None
    assert token is not None
    assert digest is not None
    return {"action": action[1], "form_token": token[1], "digest": digest[1]}


def _decide(
    console: RunningConsole, page: str, cookie: str, **choices: str
) -> tuple[int, str, str]:
    """Post the first proposal's form with ``choices``: the status, where it leads, and
    the page it answers with."""
    form = _form_fields(page)
    body = urllib.parse.urlencode(
        {"form_token": form["form_token"], "digest": form["digest"], **choices}
    )
    connection = http.client.HTTPConnection("127.0.0.1", console.port, timeout=30)
    connection.request(
        "POST",
        form["action"],
        body=body,
        headers={
            "Host": console.host,
            "Cookie": cookie,
            "Origin": console.origin,
            "Content-Type": "application/x-www-form-urlencoded",
        },
    )
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    return response.status, response.getheader("location") or "", text


def test_a_candidate_shows_what_it_says_first_and_its_frontmatter_folded(
    project: Project,
) -> None:
    _propose(project, TWO)
    console, _, page = _review_page(project)
    console.stop()

    rule = page[page.index('id="candidate-1-1"') : page.index('id="candidate-1-2"')]
    said = rule.index('<div class="markdown said"><h1>Prefer small pull requests</h1>')
    folded = rule.index('<details class="frontmatter"><summary>Frontmatter (16 fields)</summary>')
    assert said < folded
    assert rule.index("schema_version: 3") > folded  # only inside the fold
    assert rule.index("</details>") > rule.index("last_confirmed:")
    assert '<span class="field">triggers: <code>review, merge</code></span>' in rule
    assert '<p class="effect">Approving it creates rules/prefer-small-pull-requests.md.</p>' in rule
    knowledge = page[page.index('id="candidate-1-2"') :]
    assert "<li>Context: since the move</li>" in knowledge
    summary = page[page.index('id="summary-1"') :]
    assert re.findall(r"<li>(.*?)</li>", summary) == [
        "1. creates rules/prefer-small-pull-requests.md",
        "2. creates knowledge/the-staging-host-is-bluebird.md",
    ]


def test_a_proposal_says_which_client_session_and_agent_proposed_it(
    project: Project, tmp_path: Path
) -> None:
    profile = host_profile(tmp_path / "host", principal="alice", agent_id="agent-7")
    _propose(project, TWO, "--host-profile", str(profile), client_info=CLAUDE)
    console, _, page = _review_page(project)
    console.stop()

    assert (
        f'<p class="proposer" id="proposer-1">By Claude Code (claude-code 2.1.3) over MCP'
        f" · session {_session(project)} · agent agent-7</p>"
    ) in page
    assert re.search(
        r'<p class="meta">proposed \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \((\d+ seconds?|1 minute)'
        r" ago\) · expires in (29|30) minutes · workspace",
        page,
    )


def test_a_client_name_that_could_reorder_the_page_is_shown_escaped_on_one_line(
    project: Project,
) -> None:
    name = "claude\u202ecode\nINJECT" + "y" * 100
    _propose(project, TWO, client_info={"name": name})
    console, _, page = _review_page(project)
    console.stop()

    assert "\u202e" not in page
    assert (
        '<p class="proposer" id="proposer-1">By claude\\u202ecode\\u000aINJECT'
        + "y" * 35
        + f" [+65 characters] over MCP · session {_session(project)}</p>"
    ) in page


def test_a_proposal_an_older_engram_stored_says_its_proposer_was_not_recorded(
    project: Project,
) -> None:
    from engram.canonical import digest

    _propose(project, TWO, client_info=CLAUDE)
    stored = json.loads(project.pending.read_text())
    [entry] = stored["proposals"].values()
    del entry["proposer"]
    covered = ("workspace", "kind", "scope", "candidates", "verdicts", "query_level")
    entry["candidates_digest"] = digest("proposal", {key: entry[key] for key in covered})
    project.pending.write_text(json.dumps(stored))
    console, _, page = _review_page(project)
    console.stop()

    assert (
        '<p class="proposer" id="proposer-1">'
        "Who proposed it was not recorded (an older engram took this proposal).</p>"
    ) in page


def test_a_supersede_diff_names_the_old_memory_and_the_new(project: Project) -> None:
    project.write_memory("unit-tests-first", "rule", "Run unit tests before push")
    _propose(project, "TYPE: rule | TEXT: Run unit tests before every push\n")
    console, _, page = _review_page(project)
    console.stop()

    new = "rules/run-unit-tests-before-every-push.md"
    assert '<span class="side">--- old: rules/unit-tests-first.md (unit-tests-first)</span>' in page
    assert (f'<span class="side">+++ new: {new} (run-unit-tests-before-every-push)</span>') in page
    assert (
        f'<p class="effect">Approving it creates {new}, and marks rules/unit-tests-first.md'
        " (unit-tests-first) superseded: kept, no longer loaded.</p>"
    ) in page
    assert "<strong>New rule, in place of unit-tests-first</strong>" in page


def test_an_update_diff_names_the_file_with_its_revision_before_and_after(
    project: Project,
) -> None:
    project.engram("ss", "-f", stdin="TYPE: rule | TEXT: Deploy on Tuesdays\n")
    _propose(project, "TYPE: rule | TEXT: Deploy on Wednesdays | UPDATE: deploy-on-tuesdays\n")
    console, _, page = _review_page(project)
    console.stop()

    file = "rules/deploy-on-tuesdays.md"
    assert f'<span class="side">--- old: {file} (deploy-on-tuesdays, revision 1)</span>' in page
    assert (
        f'<span class="side">+++ new: {file} (deploy-on-tuesdays, revision 2, after approval)'
        "</span>"
    ) in page
    assert f'<p class="effect">Approving it replaces {file} (revision 1 → 2).</p>' in page


def test_approving_one_candidate_and_declining_the_other_writes_only_the_first(
    project: Project,
) -> None:
    _propose(project, TWO, client_info=CLAUDE)
    console, cookie, page = _review_page(project)
    try:
        status, location, _ = _decide(
            console,
            page,
            cookie,
            decision="choose",
            **{"candidate-1": "approve", "candidate-2": "decline"},
        )
        after = _page(console, location, cookie)
    finally:
        console.stop()

    assert status == 303
    assert project.files() == ["rules/prefer-small-pull-requests.md"]
    [entry] = project.pending_proposals().values()
    assert entry["state"] == "used"
    done = re.search(r'<p class="done" id="done">(.*?)</p>', after)
    assert done is not None
    assert html.unescape(done[1]) == (
        "Approved candidate 1, declined candidate 2:"
        " wrote rules/prefer-small-pull-requests.md (ADD)."
    )
    assert '<p id="none-waiting">No proposal is waiting.</p>' in after


def test_a_decision_that_chooses_nothing_is_refused_and_writes_nothing(project: Project) -> None:
    _propose(project, TWO)
    console, cookie, page = _review_page(project)
    try:
        status, _, answer = _decide(console, page, cookie, decision="choose")
    finally:
        console.stop()

    assert status == 400
    assert "choose approve or decline for each candidate" in answer
    assert project.files() == []
    [entry] = project.pending_proposals().values()
    assert entry["state"] == "pending"
