"""Every command that needs an extra says which, with its pip line and exit code 2.

The end-to-end test runs each entry point in a virtual environment that holds engram and
its base dependencies only, as ``pip install engram-trust`` leaves it.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import engram
from engram.errors import ExtraMissing
from engram.extras import DISTRIBUTION, EXTRAS, install_line, installed, require

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
PG_URL = "postgresql://engram@127.0.0.1:1/engram"
PG_NEEDS = (
    "the PostgreSQL store at 127.0.0.1:1/engram needs the postgres extra:"
    " pip install 'engram-trust[postgres]'"
)
INIT = ["--tenant", "acme", "--workspace", "w", "--principal", "a", "--purpose", "purpose:p"]


def test_the_table_names_every_runtime_extra_of_the_distribution() -> None:
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    assert project["name"] == DISTRIBUTION == "engram-trust"
    assert set(EXTRAS) == set(project["optional-dependencies"]) - {"test"}
    for extra in EXTRAS.values():
        assert install_line(extra.name) == f"pip install 'engram-trust[{extra.name}]'"


def test_require_names_the_extra_and_its_pip_line_with_a_usage_exit_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    assert not installed("http")
    with pytest.raises(ExtraMissing) as raised:
        require("http", "--http")
    assert raised.value.detail == "--http needs the http extra: pip install 'engram-trust[http]'"
    assert (raised.value.code, raised.value.exit_code) == ("EXTRA_MISSING", 2)


def _base_distributions() -> dict[str, importlib.metadata.Distribution]:
    """engram's runtime dependencies, transitively, without any extra."""
    found: dict[str, importlib.metadata.Distribution] = {}
    todo = [
        Requirement(text)
        for text in importlib.metadata.requires(DISTRIBUTION) or []
        if not Requirement(text).marker
    ]
    while todo:
        requirement = todo.pop()
        key = canonicalize_name(requirement.name)
        if key in found:
            continue
        found[key] = importlib.metadata.distribution(requirement.name)
        for text in found[key].requires or []:
            needed = Requirement(text)
            if needed.marker is None or needed.marker.evaluate({"extra": ""}):
                todo.append(needed)
    return found


def _venv_without_extras(where: Path) -> Path:
    """A virtual environment with engram and its base dependencies, no extra: the base
    distributions this interpreter has installed are linked in whole (their files and
    metadata, as pip would have put them), offline and in a second; engram is the package
    under test (the source tree or the installed wheel, whichever the tests import)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    site = next((where / "lib").glob("python3*/site-packages"))
    for distribution in _base_distributions().values():
        tops = {Path(str(file)).parts[0] for file in distribution.files or []}
        for top in tops - {"..", "__pycache__"}:
            if not top.endswith(".pth"):
                (site / top).symlink_to(Path(str(distribution.locate_file(top))))
    (site / "engram").symlink_to(Path(engram.__file__).parent)
    for script, module in (("engram", "engram.cli.main"), ("engram-mcp", "engram.mcp.main")):
        path = where / "bin" / script
        path.write_text(f"#!{where}/bin/python\nfrom {module} import main\nmain()\n")
        path.chmod(0o755)
    return where / "bin"


@pytest.mark.e2e
def test_each_entry_point_without_its_extra_says_which_to_install(tmp_path: Path) -> None:
    bin_dir = _venv_without_extras(tmp_path / "venv")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "LC_ALL": "C.UTF-8"}

    def run(*argv: str, cwd: Path = tmp_path, **extra: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            argv,
            check=False,
            cwd=cwd,
            env={**env, **extra},
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
        assert "Traceback" not in done.stderr + done.stdout
        assert "internal error" not in done.stderr + done.stdout
        return done

    imports = "import importlib.util as u, sys; sys.exit(any(u.find_spec(m) for m in sys.argv[1:]))"
    modules = sorted({module for extra in EXTRAS.values() for module in extra.modules})
    assert run(str(bin_dir / "python"), "-c", imports, *modules).returncode == 0

    # postgres: creating, opening and serving a PostgreSQL store
    done = run("engram", "host", "init", "pg", *INIT, "--store", PG_URL)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"engram: {PG_NEEDS}\n")
    assert not (tmp_path / "pg" / "host.toml").exists()
    sqlite = run("engram", "host", "init", "lite", *INIT, "--grant", "all")
    assert sqlite.returncode == 0, sqlite.stderr
    profile = Path(sqlite.stdout.strip())
    pg_profile = tmp_path / "pg.toml"
    keys = profile.parent / "memory.db.keys"
    text = profile.read_text().replace('path = "memory.db"', f'url = "{PG_URL}"')
    text = text.replace('keys = "memory.db.keys"', f'keys = "{keys}"')
    pg_profile.write_text(text)
    pg_profile.chmod(0o600)
    for command in (["verify"], ["reindex"], ["pending"]):
        done = run("engram", "host", *command, "--host-profile", str(pg_profile))
        assert (done.returncode, done.stderr) == (2, f"engram: {PG_NEEDS}\n"), command
    done = run("engram-mcp", "--host-profile", str(pg_profile))
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"engram-mcp: {PG_NEEDS}\n")
    doctor = run("engram", "doctor", ENGRAM_HOST_PROFILE=str(pg_profile))
    assert f"FAIL  memory.profile [{pg_profile}]: {PG_NEEDS}\n" in doctor.stdout

    # http
    done = run("engram-mcp", "--http", "127.0.0.1:0", "--host-profile", str(profile))
    assert (done.returncode, done.stderr) == (
        2,
        "engram-mcp: --http needs the http extra: pip install 'engram-trust[http]'\n",
    )

    # console
    done = run("engram", "console")
    assert (done.returncode, done.stderr) == (
        2,
        "engram: the console needs the console extra: pip install 'engram-trust[console]'\n",
    )

    # semantic: no failure to report; searches rank lexically, reindex says what is missing
    done = run("engram", "host", "reindex", "--host-profile", str(profile))
    assert (done.returncode, done.stdout) == (
        0,
        "lexical: current\nsemantic: not installed (pip install 'engram-trust[semantic]')\n",
    )
    project = tmp_path / "project"
    project.mkdir()
    assert run("engram", "init", cwd=project).returncode == 0
    for command in (["search", "retry"], ["load", "retry"]):
        done = run("engram", *command, cwd=project, ENGRAM_SEMANTIC="on")
        assert (done.returncode, done.stderr) == (0, ""), command
    assert os.environ["ENGRAM_SEMANTIC"] == "off"  # the suite's own setting is untouched
