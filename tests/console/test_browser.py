"""The review console in a real browser (Debian's chromium, headless), used as the person
who approves uses it: log in with the printed link, look at every view (each saved as a
screenshot), approve and decline what agents asked for, and watch the agents' next calls
see the decision. Every action is also tried without the session, from another page,
and replayed: each is refused and changes nothing."""

from __future__ import annotations

import contextlib
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pytest

from engram.store.location import DatabaseUrl, StoreLocation
from engram.testing import (
    LineClient,
    call,
    current_capture_args,
    data_of,
    envelope,
    host_profile,
    legacy_init,
    now_ms,
    value,
)
from engram.testing.projects import Project
from tests.console.conftest import (
    RunningConsole,
    screenshot,
    start_console,
    start_with_opener,
)

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

LINES = (
    "TYPE: rule | TEXT: Run the release script only from a clean checkout\n"
    "TYPE: knowledge | TEXT: Payment retries back off exponentially with jitter,"
    " <b>never</b> in a tight loop\n"
)
RECORD_TEXT = "Release tarballs are verified with sha256 digests before upload."


#: A French memory an English question shares no word with: only the semantic channel finds it.
FRENCH_RETRIES = "Les paiements refusés sont réessayés trois fois, avec un délai qui double."


def _by_css(driver: WebDriver, selector: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, selector)


def _all_css(driver: WebDriver, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, selector))


def _click(driver: WebDriver, selector: str) -> None:
    """Click and wait (at most 30 s) for the page it leads to."""
    from selenium.webdriver.support.wait import WebDriverWait

    page = _by_css(driver, "html")
    _by_css(driver, selector).click()
    WebDriverWait(driver, 30).until(lambda _: _left(page))


def _left(element: Any) -> bool:
    """Whether ``element``'s page is gone. Selenium's ``staleness_of`` knows only the
    stale-element error; in the middle of a navigation chromedriver may answer that the
    node "does not belong to the document" instead (seen once in CI, with two workers)."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    try:
        element.is_enabled()
    except StaleElementReferenceException:
        return True
    except WebDriverException as error:
        if "does not belong to the document" in str(error.msg):
            return True
        raise
    return False


def _log_in(driver: WebDriver, console: RunningConsole) -> None:
    """Open the printed link; the login page moves on to the console by itself."""
    from selenium.webdriver.support.wait import WebDriverWait

    driver.get(console.login_url)
    WebDriverWait(driver, 30).until(lambda d: d.current_url == console.origin + "/")
    assert _by_css(driver, "h1").text == "Review"


@pytest.fixture
def agent(project: Project) -> Iterator[LineClient]:
    """An agent's engram-mcp in the project (its client shows no dialog)."""
    server = project.start()
    yield server
    server.close()


@contextlib.contextmanager
def _signed_in(browser: WebDriver, project: Project, *args: str) -> Iterator[RunningConsole]:
    """``engram console ARGS`` in the project, the browser signed in through its link."""
    console = start_console(project, *args)
    try:
        _log_in(browser, console)
        yield console
    finally:
        console.stop()


def test_a_hybrid_search_shows_each_channels_part_and_the_cosine(
    project: Project, browser: WebDriver
) -> None:
    from selenium.webdriver.support.wait import WebDriverWait

    project.write_memory("payment-retries", "knowledge", FRENCH_RETRIES, title="Paiements")
    project.write_memory("release-checklist", "rule", "Tag the release after the changelog.")
    console = start_console(project, env={"ENGRAM_SEMANTIC": "on"})
    try:
        _log_in(browser, console)

        def ranked_by_both(driver: WebDriver) -> bool:
            # The console embeds in the background: searches rank lexically until then.
            driver.get(console.origin + "/project/search?q=how+often+do+we+retry+a+payment")
            return "close it is in meaning" in _by_css(driver, "#ranking").text

        WebDriverWait(browser, 60, poll_frequency=0.5).until(ranked_by_both)
        ranking = _by_css(browser, "#ranking")
        assert "convex(" not in ranking.text  # the formula is folded away
        first = _by_css(browser, "#results tbody tr")
        assert "payment-retries" in first.text
        assert _by_css(first, "td.why").text == (
            "close in meaning; it holds none of the question's words"
        )
        assert "semantic #1" not in first.text
        _by_css(first, "td.score summary").click()  # one click away
        assert "semantic #1" in first.text
        assert "cosine 0." in first.text
        assert "0.8 × (0." in _by_css(first, "td.score details").text
        _by_css(ranking, "summary").click()
        assert "convex(lexical=0.2, semantic=0.8)" in ranking.text
        assert len(_all_css(browser, "#results svg.share rect.kind-semantic")) >= 1
        screenshot(browser, "project-search-hybrid")
    finally:
        console.stop()


def _propose(agent: LineClient, lines: str = LINES) -> str:
    """The agent proposes memories (two unless told): the token flow."""
    data = data_of(call(agent, "engram_save_session", {"text": lines}))
    assert data["saved"] is False
    return str(data["approval_token"])


def _commit_error(agent: LineClient, token: str) -> dict[str, Any]:
    reply = call(agent, "engram_commit", {"approval_token": token, "approve": "all"})
    error: dict[str, Any] = envelope(reply)["error"]
    return error


# --- project memory ----------------------------------------------------------------------


def test_approving_a_proposal_in_the_page_writes_its_memory_files(
    project: Project, agent: LineClient, browser: WebDriver
) -> None:
    token = _propose(agent)
    with _signed_in(browser, project) as console:
        assert _by_css(browser, "#proposals-waiting").text == "1 proposal waiting"
        screenshot(browser, "home")
        browser.get(console.origin + "/project/proposals")
        assert "<b>never</b>" in _by_css(browser, "#proposal-1").text  # shown, not obeyed
        assert _all_css(browser, "#proposal-1 b") == []

        _click(browser, "#proposal-1 button.approve")

        assert _by_css(browser, "#done").text == (
            "Approved all: wrote rules/run-the-release-script-only-from-a-clean-checkout.md"
            " (ADD), knowledge/knowledge-payment-retries-back-off-exponentially-with-jitter"
            "-2987a183.md (ADD)."
        )
        assert _by_css(browser, "#none-waiting").text == "No proposal is waiting."
    assert project.files() == [
        "knowledge/knowledge-payment-retries-back-off-exponentially-with-jitter-2987a183.md",
        "rules/run-the-release-script-only-from-a-clean-checkout.md",
    ]
    error = _commit_error(agent, token)
    assert error["code"] == "APPROVAL_INVALID"
    assert error["message"] == "approval_token was already used"


def test_declining_a_proposal_writes_nothing_and_the_agents_commit_is_told_why(
    project: Project, agent: LineClient, browser: WebDriver
) -> None:
    token = _propose(agent)
    with _signed_in(browser, project) as console:
        browser.get(console.origin + "/project/proposals")
        _click(browser, "#proposal-1 button.decline")
        assert _by_css(browser, "#done").text == (
            "Declined: nothing was written, and the agent's commit will be told so."
        )
    assert project.files() == []
    error = _commit_error(agent, token)
    assert error["message"] == "approval was declined in the approval dialog"


#: Three candidates: one superseding a rule, one updating another, one new.
REVIEWED = (
    "TYPE: rule | TEXT: Run unit tests before every push | TRIGGERS: push, release\n"
    "TYPE: rule | TEXT: Deploy on Wednesdays | UPDATE: deploy-on-tuesdays\n"
    "TYPE: knowledge | TEXT: Payment retries back off exponentially with jitter,"
    " <b>never</b> in a tight loop | CONTEXT: the processor rate-limits bursts\n"
)
CLAUDE = {"name": "claude-code", "title": "Claude Code", "version": "2.1.3"}


def test_a_person_approves_some_candidates_of_a_proposal_and_declines_the_rest(
    project: Project, tmp_path: Path, browser: WebDriver
) -> None:
    project.write_memory("unit-tests-first", "rule", "Run unit tests before push")
    project.engram("ss", "-f", stdin="TYPE: rule | TEXT: Deploy on Tuesdays\n")
    profile = host_profile(tmp_path / "host", principal="alice", agent_id="agent-7")
    with project.start("--host-profile", str(profile)) as agent:
        legacy_init(agent, client_info=CLAUDE)
        token = _propose(agent, REVIEWED)
        [entry] = project.pending_proposals().values()
        with _signed_in(browser, project) as console:
            browser.get(console.origin + "/project/proposals")
            assert _by_css(browser, "#proposer-1").text == (
                "By Claude Code (claude-code 2.1.3) over MCP"
                f" · session {entry['proposer']['session']} · agent agent-7"
            )
            first = _by_css(browser, "#candidate-1-1")
            assert first.text.startswith(
                "1. New rule, in place of unit-tests-first SUPERSEDE\n"
                "Run unit tests before every push\nCONTENT\n"
                "Run unit tests before every push\n"
                "triggers: push, release · supersedes: unit-tests-first\n"
                "Approving it creates rules/run-unit-tests-before-every-push.md, and marks"
                " rules/unit-tests-first.md (unit-tests-first) superseded: kept, no longer"
                " loaded.\n"
            )
            assert "--- old: rules/unit-tests-first.md (unit-tests-first)\n" in first.text
            assert "-- Run unit tests before push\n" in first.text
            assert "schema_version" not in first.text  # folded
            assert _all_css(browser, "#candidate-1-3 b") == []  # shown, not obeyed
            screenshot(browser, "project-proposals")
            _by_css(browser, "#candidate-1-3 details.frontmatter summary").click()
            assert "schema_version: 3" in _by_css(browser, "#candidate-1-3").text
            screenshot(browser, "project-proposal-frontmatter")

            # Nothing chosen: the browser asks for a choice and sends nothing.
            _by_css(browser, "#proposal-1 button.decide").click()
            first_choice = _by_css(browser, "#candidate-1-1 input[value=approve]")
            assert first_choice.get_property("validationMessage")
            assert _all_css(browser, "#done") == []

            _by_css(browser, "#candidate-1-1 input[value=approve]").click()
            _by_css(browser, "#candidate-1-2 input[value=decline]").click()
            _by_css(browser, "#candidate-1-3 input[value=approve]").click()
            _click(browser, "#proposal-1 button.decide")

            knowledge = (
                "knowledge/knowledge-payment-retries-back-off-exponentially-with-jitter-2987a183.md"
            )
            assert _by_css(browser, "#done").text == (
                "Approved candidates 1 and 3, declined candidate 2: wrote"
                " rules/run-unit-tests-before-every-push.md (SUPERSEDE unit-tests-first),"
                f" {knowledge} (ADD)."
            )
            screenshot(browser, "project-proposals-decided")
        error = _commit_error(agent, token)
    assert error["message"] == "approval_token was already used"
    assert project.files() == [
        knowledge,
        "rules/deploy-on-tuesdays.md",
        "rules/run-unit-tests-before-every-push.md",
        "rules/unit-tests-first.md",
    ]
    rules = project.base / "rules"
    assert "- Deploy on Tuesdays" in (rules / "deploy-on-tuesdays.md").read_text()
    assert (
        "superseded_by: run-unit-tests-before-every-push"
        in (rules / "unit-tests-first.md").read_text()
    )


def test_the_project_views_show_memories_search_scores_and_what_a_task_loads(
    project: Project, browser: WebDriver
) -> None:
    project.write_memory("release-checklist", "rule", "Tag the release after the changelog.")
    project.write_memory("retry-policy", "knowledge", "Retries back off exponentially.")
    project.write_memory("style-guide", "skill", "Use black for Python code.")
    with _signed_in(browser, project) as console:
        browser.get(console.origin + "/project")
        rows = [row.text for row in _all_css(browser, "#memories tbody tr")]
        assert [row.split()[0] for row in rows] == [
            "release-checklist",
            "style-guide",
            "retry-policy",
        ]
        screenshot(browser, "project-memories")

        browser.get(console.origin + "/project/memory/release-checklist")
        assert _by_css(browser, "#body h1").text == "Release checklist"
        assert "Tag the release after the changelog." in _by_css(browser, "#body").text
        assert _by_css(browser, "#health").text == "Health: missing hash"
        screenshot(browser, "project-memory")

        browser.get(console.origin + "/project/search?q=release+changelog+deploy")
        first = _by_css(browser, "#results tbody tr")
        assert "release-checklist" in first.text
        assert _by_css(first, "td.why").text == (
            "matched 'release' in the title and the text, 'changelog' in the text (not 'deploy')"
        )
        assert "bm25(" not in _by_css(browser, "#ranking").text
        _by_css(first, "td.score summary").click()
        assert "lexical #1" in first.text
        assert "= BM25 " in _by_css(first, "td.score details").text
        assert len(_all_css(browser, "#results svg.share rect.kind-lexical")) >= 1
        screenshot(browser, "project-search")

        browser.get(console.origin + "/project/load?task=tag+the+release&budget=800")
        row = _by_css(browser, "#explain tbody tr")
        assert row.text.startswith("release-checklist yes matched 'release' in the title and")
        assert _by_css(browser, "#packed").text.startswith("# Engram memory for: tag the release")
        screenshot(browser, "project-load")


def test_open_leads_the_browser_into_a_session_through_its_private_file(
    project: Project, browser: WebDriver, tmp_path: Path
) -> None:
    kept = tmp_path / "forward.html"
    console = start_with_opener(project, tmp_path / "browser.sh", f'cp "${{1#file://}}" {kept}')
    try:
        from selenium.webdriver.support.wait import WebDriverWait

        # What the browser was given: a file that forwards (a cross-site start), then
        # the login page, which moves on to the console with the strict cookie.
        browser.get(kept.as_uri())
        WebDriverWait(browser, 30).until(lambda d: d.current_url == console.origin + "/")
        assert _by_css(browser, "h1").text == "Review"
        browser.get(console.origin + "/project")
        assert _by_css(browser, "h1").text == "Project memories"
    finally:
        console.stop()


# --- governed memory ---------------------------------------------------------------------


@pytest.fixture
def governed(tmp_path: Path, project: Project) -> Iterator[tuple[Path, LineClient]]:
    """A host profile (the operator confirms) and an agent's engram-mcp serving it."""
    profile = host_profile(tmp_path / "host", tenant="acme", workspace="payments")
    agent = project.start("--host-profile", str(profile))
    yield profile, agent
    agent.close()


#: One valid-time start for every capture: equal texts are then equal payloads.
VALID_T = now_ms() - 60_000


def _outcome(agent: LineClient, key: str, text: str = RECORD_TEXT) -> dict[str, Any]:
    arguments = current_capture_args(
        text=text, key=f"{key}.capture-000001", valid_time={"t": VALID_T}
    )
    candidate = value(call(agent, "engram_memory_capture", arguments))["candidate_id"]
    admitted = value(
        call(
            agent,
            "engram_memory_request_admission",
            {"candidate_id": candidate, "idempotency_key": f"{key}.admission-0001"},
        )
    )
    outcome: dict[str, Any] = admitted["outcome"]
    return outcome


def _admit(agent: LineClient, key: str, text: str = RECORD_TEXT) -> str:
    return str(_outcome(agent, key, text)["record_id"])


def _forget(agent: LineClient, record_id: str) -> dict[str, Any]:
    reply = call(
        agent,
        "engram_memory_forget",
        {
            "record_id": record_id,
            "idempotency_key": "forget-key-000001",
            "reason_ref": "reason:<img src=x>obsolete",
        },
    )
    governed: dict[str, Any] = reply["result"]["structuredContent"]
    return governed


def test_confirming_a_forget_in_the_page_lets_the_agents_retry_run(
    project: Project, governed: tuple[Path, LineClient], browser: WebDriver
) -> None:
    profile, agent = governed
    record_id = _admit(agent, "fact-one")
    assert _forget(agent, record_id)["error"]["code"] == "gate_failed"
    with _signed_in(browser, project, "--host-profile", str(profile)) as console:
        browser.get(console.origin + "/governed/0")
        row = _by_css(browser, "#confirmations tbody tr")
        assert f"forget {record_id}" in row.text
        assert "reason:<img src=x>obsolete" in row.text  # the agent's text, shown as text
        assert _all_css(browser, "#confirmations img") == []
        screenshot(browser, "governed-overview")

        _click(browser, "#confirmations button.approve")

        assert _by_css(browser, "#done").text == (
            f"approved forget of {record_id} for 300 s (asked by principal alice, agent alice):"
            " the agent may retry now"
        )
        forgotten = _forget(agent, record_id)
        assert forgotten["ok"] is True
        assert forgotten["output"]["value"]["receipt"]["to_state"] == "tombstoned"

        browser.get(console.origin + f"/governed/0/records/{record_id}")
        assert _by_css(browser, "#state").text == "tombstoned"
        lifecycle = _by_css(browser, "#lifecycle").text
        assert "capture" in lifecycle
        assert "tombstone" in lifecycle
        assert RECORD_TEXT not in browser.page_source
        screenshot(browser, "governed-record")


def test_denying_a_forget_in_the_page_refuses_the_agents_retry(
    project: Project, governed: tuple[Path, LineClient], browser: WebDriver
) -> None:
    profile, agent = governed
    record_id = _admit(agent, "fact-two")
    _forget(agent, record_id)
    with _signed_in(browser, project, "--host-profile", str(profile)) as console:
        browser.get(console.origin + "/governed/0")
        _click(browser, "#confirmations button.decline")
        assert _by_css(browser, "#done").text == (
            f"denied forget of {record_id} (asked by principal alice, agent alice)"
        )

        retried = _forget(agent, record_id)

        assert retried["ok"] is False
        assert retried["error"]["code"] == "gate_failed"
        browser.get(console.origin + "/governed/0")
        assert _by_css(browser, "#confirmations tbody").text == "Nothing to confirm."
        browser.get(console.origin + f"/governed/0/records/{record_id}")
        assert _by_css(browser, "#state").text == "accepted_current"
        assert _by_css(browser, "#content").text == RECORD_TEXT


def test_accepting_a_held_candidate_in_the_page_admits_the_content_again(
    project: Project, governed: tuple[Path, LineClient], browser: WebDriver
) -> None:
    profile, agent = governed
    forgotten = _admit(agent, "fact-held")
    _forget(agent, forgotten)
    with _signed_in(browser, project, "--host-profile", str(profile)) as console:
        browser.get(console.origin + "/governed/0")
        _click(browser, "#confirmations button.approve")
        assert _forget(agent, forgotten)["ok"] is True
        held = _outcome(agent, "fact-again")
        assert held["status"] == "pending_adjudication"

        browser.get(console.origin + "/governed/0")
        row = _by_css(browser, "#adjudications tbody tr")
        assert row.text.startswith(held["candidate_id"])
        assert forgotten in row.text
        assert RECORD_TEXT not in browser.page_source  # a held candidate is never shown
        _click(browser, "#adjudications button.approve")

        done = _by_css(browser, "#done").text
        assert done.startswith("accepted as mem_")
        record_id = done.removeprefix("accepted as ")
        browser.get(console.origin + f"/governed/0/records/{record_id}")
        assert _by_css(browser, "#state").text == "accepted_current"
        assert _by_css(browser, "#content").text == RECORD_TEXT


def test_the_governed_views_show_records_the_verified_journal_and_the_audit(
    project: Project, governed: tuple[Path, LineClient], browser: WebDriver
) -> None:
    profile, agent = governed
    records = [_admit(agent, f"fact-{n}", f"{RECORD_TEXT} (copy {n})") for n in range(3)]
    with _signed_in(browser, project, "--host-profile", str(profile)) as console:
        browser.get(console.origin + "/governed/0/records")
        listed = [row.text.split()[0] for row in _all_css(browser, "#records tbody tr")]
        assert sorted(listed) == sorted(records)
        screenshot(browser, "governed-records")

        browser.get(console.origin + "/governed/0/journal")
        assert len(_all_css(browser, "#journal li")) == 6  # 3 captures, 3 admissions
        _click(browser, "#verify")
        assert _by_css(browser, "#verified").text == "the chain verifies: 6 events"
        screenshot(browser, "governed-journal")

        browser.get(console.origin + "/governed/0/audit?tool=request_admission")
        tools = {row.text.split()[3] for row in _all_css(browser, "#audit tbody tr")}
        assert tools == {"request_admission"}
        screenshot(browser, "governed-audit")


# --- refusals ----------------------------------------------------------------------------


class _ForeignPage(http.server.BaseHTTPRequestHandler):
    """Another program serving on 127.0.0.1 (an agent's dev server, say): a page whose
    form posts to the console and whose image is itself, to catch any cookie sent."""

    form = ""
    cookies: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.cookies.append(self.headers.get("Cookie", ""))
        body = (self.form + '<img src="/pixel.png" alt="">').encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        """Quiet."""


def test_actions_without_the_session_from_another_page_or_replayed_are_refused(
    project: Project, agent: LineClient, browser: WebDriver
) -> None:
    _propose(agent)
    console = start_console(project)
    foreign = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ForeignPage)
    threading.Thread(target=foreign.serve_forever, daemon=True).start()
    port = foreign.server_address[1]
    try:
        _log_in(browser, console)
        browser.get(console.origin + "/project/proposals")
        form = _by_css(browser, "#proposal-1 form")
        action = form.get_attribute("action")
        token = _by_css(browser, "#proposal-1 form input[name=form_token]").get_attribute("value")
        digest = _by_css(browser, "#proposal-1 form input[name=digest]").get_attribute("value")
        _ForeignPage.form = (
            f'<form method="post" action="{action}"><input name="form_token" value="{token}">'
            f'<input name="digest" value="{digest}"><input name="decision" value="approve">'
            '<button id="go">go</button></form>'
        )

        # Another program on 127.0.0.1 never gets the session cookie, and its copy of the
        # console's own form arrives without the session.
        _ForeignPage.cookies = []
        browser.get(f"http://127.0.0.1:{port}/")
        _by_css(browser, "img")
        assert _ForeignPage.cookies
        assert not any("engram_console" in cookie for cookie in _ForeignPage.cookies)
        _click(browser, "#go")
        assert _by_css(browser, "#refusal").text.startswith("no console session:")

        # Even one that knew the console's own name (same site: the cookie goes along)
        # posts from another origin, and is refused.
        browser.get(f"http://{console.host.rsplit(':', 1)[0]}:{port}/")
        _click(browser, "#go")
        assert _by_css(browser, "#refusal").text == (
            "this action came from another page: use the console itself"
        )
        screenshot(browser, "refused")

        # The same form, without the session.
        browser.get(console.origin + "/project/proposals")
        browser.delete_all_cookies()
        _click(browser, "#proposal-1 button.approve")
        assert _by_css(browser, "#refusal").text.startswith("no console session:")

        # Logged in again (a new console: the link worked once), a form used twice.
        assert project.files() == []
    finally:
        console.stop()
        foreign.shutdown()
        foreign.server_close()
    with _signed_in(browser, project) as console:
        browser.get(console.origin + "/project/proposals")
        replay = browser.execute_script(
            "return document.querySelector('#proposal-1 form').outerHTML"
        )
        _click(browser, "#proposal-1 button.approve")
        assert _by_css(browser, "#done").text.startswith("Approved all: wrote ")
        browser.execute_script(
            "document.body.insertAdjacentHTML('beforeend', arguments[0]);"
            " const form = document.body.lastElementChild;"
            " form.insertAdjacentHTML('beforeend',"
            " '<input type=hidden name=decision value=approve>');"
            " form.submit();",
            replay,
        )
        assert _by_css(browser, "#refusal").text == (
            "this form was already used or is not this page's: reload the page"
        )
    assert len(project.files()) == 2


#: A reason that claims the owner asked, padded to wrap into a fake request, and a word
#: too long for any cell.
HOSTILE_REASON = (
    "reason:acme's owner agent-a asked for this"
    + " " * 250
    + "confirm  conf_bbbbbbbbbbbbbbbbbbbbbbbb  forget mem_x "
    + "y" * 150
)


def test_the_waiting_table_names_who_asked_and_keeps_a_hostile_reason_in_its_cell(
    project: Project, tmp_path: Path, store_location: StoreLocation, browser: WebDriver
) -> None:
    from engram.host.runtime import open_memory

    store = store_location.url if isinstance(store_location, DatabaseUrl) else str(store_location)
    keys = None if isinstance(store_location, Path) else tmp_path / "owner" / "memory.keys"
    owner = host_profile(
        tmp_path / "owner", tenant="acme", workspace="payments", principal="agent-a", store=store
    )
    mallory = host_profile(
        tmp_path / "mallory",
        tenant="acme",
        workspace="payments",
        principal="mallory",
        agent_id="mallory-bot",
        store=store,
        keys=keys,
    )
    with contextlib.closing(open_memory(owner)) as memory:
        captured = memory.call("capture", current_capture_args(RECORD_TEXT, "owner.capture-0001"))
        candidate = captured["output"]["value"]["candidate_id"]
        admission = {"candidate_id": candidate, "idempotency_key": "owner.admission-01"}
        record_id = memory.call("request_admission", admission)["output"]["value"]["outcome"][
            "record_id"
        ]
    forget = {"record_id": record_id, "idempotency_key": "mallory.forget-01", "reason_ref": ""}
    with contextlib.closing(open_memory(mallory)) as memory:
        refused = memory.call("forget", {**forget, "reason_ref": HOSTILE_REASON})
    assert refused["error"]["code"] == "gate_failed"

    with _signed_in(browser, project, "--host-profile", str(owner)) as console:
        browser.get(console.origin + "/governed/0")
        [row] = _all_css(browser, "#confirmations tbody tr")
        assert (
            _by_css(browser, "#confirmations td.who").text == "principal mallory\nagent mallory-bot"
        )
        assert _by_css(browser, "#confirmations .principal").text == "mallory"
        assert _by_css(browser, "#confirmations .agent").text == "mallory-bot"
        reason = _by_css(browser, "#confirmations td.reason")
        assert reason.text == (
            "reason:acme's owner agent-a asked for this confirm conf_bbbbbbbbbbbbbbbbbbbbbbbb"
            " forget mem_x " + "y" * 89 + " [+61 characters]"
        )
        overflow = browser.execute_script(
            "const cell = arguments[0]; return cell.scrollWidth - cell.clientWidth;", reason
        )
        assert overflow <= 0
        # The whole table fits the page: the operator sees the buttons beside each request.
        assert browser.execute_script(
            "return document.documentElement.scrollWidth <= window.innerWidth"
        )
        assert f"forget {record_id}" in row.text
        screenshot(browser, "governed-who-asked")


#: A tower of Thai marks (combining class 0, so no cap once stopped it): one character
#: to a browser, which cannot break it, so it ran out of its cell over the buttons.
THAI_TOWER = "reason:\u0e01" + "\u0e31\u0e34\u0e47\u0e4c" * 30 + " owner asked"


def test_no_request_draws_out_of_its_cell_a_tower_of_marks_or_a_long_agent_id_included(
    project: Project, tmp_path: Path, store_location: StoreLocation, browser: WebDriver
) -> None:
    from engram.host.runtime import open_memory

    store = store_location.url if isinstance(store_location, DatabaseUrl) else str(store_location)
    keys = None if isinstance(store_location, Path) else tmp_path / "owner" / "memory.keys"
    owner = host_profile(
        tmp_path / "owner", tenant="acme", workspace="payments", principal="agent-a", store=store
    )
    # Host-written, and host init takes it: an agent id of 300 characters.
    bot = host_profile(
        tmp_path / "bot",
        tenant="acme",
        workspace="payments",
        principal="bot",
        agent_id="b" * 300,
        store=store,
        keys=keys,
    )
    with contextlib.closing(open_memory(owner)) as memory:
        captured = memory.call("capture", current_capture_args(RECORD_TEXT, "owner.capture-0001"))
        candidate = captured["output"]["value"]["candidate_id"]
        admission = {"candidate_id": candidate, "idempotency_key": "owner.admission-01"}
        record_id = memory.call("request_admission", admission)["output"]["value"]["outcome"][
            "record_id"
        ]
    with contextlib.closing(open_memory(bot)) as memory:
        for key, reason in (("bot.forget-key-01", THAI_TOWER), ("bot.forget-key-02", "reason:x")):
            forget = {"record_id": record_id, "idempotency_key": key, "reason_ref": reason}
            assert memory.call("forget", forget)["error"]["code"] == "gate_failed"

    with _signed_in(browser, project, "--host-profile", str(owner)) as console:
        browser.get(console.origin + "/governed/0")
        assert len(_all_css(browser, "#confirmations tbody tr")) == 2
        for cell in _all_css(browser, "#confirmations td"):
            overflow = browser.execute_script(
                "const cell = arguments[0]; return cell.scrollWidth - cell.clientWidth;", cell
            )
            assert overflow <= 0, cell.text
        assert browser.execute_script(
            "return document.documentElement.scrollWidth <= window.innerWidth"
        )
