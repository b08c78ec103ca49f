"""SkillKit's distribution: its name is not the unrelated ``skillkit`` on PyPI, every
dependency and doc uses that name, and the installed distribution provides the
``skillkit`` command, the import name and the entry points."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import skillkit
from skillkit.doctor import DISTRIBUTION

ROOT = Path(__file__).resolve().parents[1]


def test_the_distribution_name_is_the_one_the_code_reads() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

    assert project["name"] == DISTRIBUTION == "skillkit-agent"


def test_every_plugin_example_depends_on_skillkit_by_its_distribution_name() -> None:
    manifests = sorted((ROOT / "examples" / "plugins").glob("*/pyproject.toml"))
    assert manifests
    for manifest in manifests:
        dependencies = tomllib.loads(manifest.read_text())["project"]["dependencies"]
        names = [re.match(r"[A-Za-z0-9._-]+", d).group(0) for d in dependencies]  # type: ignore[union-attr]
        assert "skillkit" not in names, manifest
        assert DISTRIBUTION in names, manifest


def test_no_doc_installs_the_unrelated_skillkit_from_pypi() -> None:
    texts = [*(ROOT / "docs").glob("*.md"), *(ROOT / "examples").rglob("*.md")]
    wrong = re.compile(r"pip install (?:-U )?skillkit(?![-\w])|[\"']skillkit(?:[<>=!~]=?|\[)")
    for path in texts:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            assert not wrong.search(line), f"{path.relative_to(ROOT)}:{number}: {line}"


def test_the_installed_distribution_gives_the_command_the_import_and_the_entry_points() -> None:
    dist = metadata.distribution(DISTRIBUTION)

    assert dist.version == skillkit.__version__
    scripts = {e.name: e.value for e in dist.entry_points if e.group == "console_scripts"}
    assert scripts == {"skillkit": "skillkit.cli:main"}
    providers = {e.name: e.value for e in dist.entry_points if e.group == "skillkit.providers"}
    assert providers["local"] == "skillkit.local:provider"


def test_doctor_reports_the_installed_version() -> None:
    result = subprocess.run(
        [str(Path(sys.executable).with_name("skillkit")), "doctor"],
        capture_output=True,
        text=True,
        timeout=60,
    )

    line = next(ln for ln in result.stdout.splitlines() if ln.strip().startswith("version"))
    assert line.split() == ["version", skillkit.__version__]
