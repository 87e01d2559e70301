"""The review console as its users meet it: ``engram console`` started as a command in a
project, read through real HTTP, and driven in Debian's chromium (headless, through its
own chromedriver; never a downloaded browser).

Screenshots of every view land in ``build/test-output/console/`` (docs/console.md shows
them). Under ``CI=true`` a missing chromium fails the browser tests; elsewhere they are
skipped, saying how to install it.
"""

from __future__ import annotations

import os
import queue
import re
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from engram.testing import new_project
from engram.testing.projects import ENGRAM, Project

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "test-output" / "console"
URL = re.compile(
    r"engram console: (http://(engram-[0-9a-f]{16}\.localhost:(\d+))/login\?secret=\S+)"
)


@dataclass
class RunningConsole:
    """An ``engram console`` process, its printed login URL and its output."""

    process: subprocess.Popen[str]
    login_url: str
    host: str
    port: int
    lines: list[str] = field(default_factory=list)
    pending: queue.Queue[str | None] = field(default_factory=queue.Queue)
    stderr: str | None = None

    @property
    def origin(self) -> str:
        return f"http://{self.host}"

    def stop(self) -> str:
        """Stop it as Ctrl-C would (once); what it wrote on stderr."""
        if self.stderr is not None:
            return self.stderr
        self.process.terminate()
        try:
            _, err = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate(timeout=30)
        while (line := self.pending.get(timeout=30)) is not None:
            self.lines.append(line)
        self.stderr = err
        return err


def start_console(
    project: Project, *args: str, env: dict[str, str] | None = None
) -> RunningConsole:
    """``engram console`` in the project, waiting (at most 60 s) for its URL line."""
    process = subprocess.Popen(
        [str(ENGRAM), "console", *args],
        cwd=project.root,
        env={**os.environ, **project.env, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    stdout = process.stdout

    def read() -> None:
        for line in stdout:
            lines.put(line)
        lines.put(None)  # the end

    threading.Thread(target=read, daemon=True).start()
    seen: list[str] = []
    while True:
        try:
            line = lines.get(timeout=60)
        except queue.Empty:
            line = None
        if line is None:
            process.kill()
            raise AssertionError(f"engram console printed no URL: {seen}")
        seen.append(line)
        match = URL.search(line)
        if match:
            return RunningConsole(
                process, match.group(1), match.group(2), int(match.group(3)), seen, lines
            )


def start_with_opener(project: Project, opener: Path, script: str) -> RunningConsole:
    """``engram console --open`` with ``$BROWSER`` a shell script of ``script`` (its first
    argument is the ``file://`` URL ``--open`` hands the browser)."""
    opener.write_text(f"#!/bin/sh\n{script}\n")
    opener.chmod(0o755)
    return start_console(project, "--open", env={"BROWSER": str(opener)})


@pytest.fixture
def project(tmp_path: Path) -> Project:
    made = new_project(tmp_path / "repo")
    subprocess.run(["git", "init", "-q"], cwd=made.root, check=True)
    return made


@pytest.fixture
def console(project: Project) -> Iterator[RunningConsole]:
    running = start_console(project)
    yield running
    running.stop()


def _browser_missing() -> str | None:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        return "Debian's chromium and chromium-driver are not installed (scripts/setup-browser)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (scripts/setup test)"
    return None


@pytest.fixture(scope="session")
def chromium() -> Iterator[WebDriver]:
    """One headless chromium for the session (each test gets fresh cookies)."""
    missing = _browser_missing()
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the console's browser tests must run under CI: {missing}")
        pytest.skip(missing)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,1000",
        "--no-first-run",
        "--disable-extensions",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


@pytest.fixture
def browser(chromium: WebDriver) -> Iterator[WebDriver]:
    chromium.delete_all_cookies()
    yield chromium
    chromium.delete_all_cookies()


def screenshot(driver: WebDriver, name: str) -> Path:
    """Save what the browser shows as ``build/test-output/console/NAME.png``."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    height = driver.execute_script("return document.body.scrollHeight")
    # The window's own frame takes part of its height (about 140 px in headless chromium):
    # without it, the end of a page taller than 660 px was cut off.
    frame = driver.execute_script("return window.outerHeight - window.innerHeight")
    driver.set_window_size(1280, max(700, min(int(height), 2400) + int(frame)))
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(str(path))
    driver.set_window_size(1280, 1000)
    return path
