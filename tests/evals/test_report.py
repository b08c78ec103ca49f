"""The HTML report opened in Chromium: the chart and a failure's transcript are visible,
the judge's reasoning is there, the page asks the network for nothing, and a
``<script>`` from a transcript is shown as text, never run."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.evals.conftest import make_project, skillkit

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists() and shutil.which("chromium") is None:
    pytest.skip("Chromium is not installed (/usr/bin/chromium)", allow_module_level=True)
playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="the 'playwright' package (a dev dependency) is missing"
)
expect = playwright_api.expect
expect.set_options(timeout=15_000)

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of a run with two models: the good one passes, the bad one fails and
    its answer holds a script tag."""
    folder = tmp_path_factory.mktemp("report")
    project = make_project(folder)
    result = skillkit(
        "eval", "suite.yaml", "--models", "scripted:scripts/good.yaml,scripted:scripts/bad.yaml",
        "--allow", "write", "--out", "run", "--report", "report.html",
        cwd=project, home=folder / "home",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return project / "report.html"


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    with playwright_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM) if CHROMIUM.exists() else shutil.which("chromium"),
            headless=True,
            args=["--no-sandbox"],
        )
        try:
            yield launched
        finally:
            launched.close()


def test_the_report_shows_chart_failures_and_judge_without_running_a_script(
    report: Path, chromium: object
) -> None:
    context = chromium.new_context(viewport={"width": 1100, "height": 900})  # type: ignore[attr-defined]
    try:
        page = context.new_page()
        requests: list[str] = []
        errors: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(report.as_uri())
        chart = page.locator("#chart")
        expect(chart).to_be_visible()
        assert chart.locator("circle").count() == 2
        box = chart.bounding_box()
        assert box is not None and box["width"] > 300 and box["height"] > 200
        expect(page.locator("#cases")).to_contain_text("all-kinds")
        failure = page.locator(".failure").first
        failure.scroll_into_view_if_needed()
        expect(failure).to_be_visible()
        expect(failure).to_contain_text("all-kinds · scripted:scripts/bad.yaml")
        expect(failure).to_contain_text("skill 'greeting' was not loaded (loaded: farewell)")
        transcript = failure.locator("details .turn.assistant").last
        expect(transcript).to_be_visible()
        expect(transcript).to_contain_text("<script>window.ranFromTranscript = true;")
        expect(
            page.get_by_text("The answer greets Ada by name, as the rubric asks.").first
        ).to_be_attached()
        assert page.evaluate("typeof window.ranFromTranscript") == "undefined"
        assert page.title() == "greetings — SkillKit eval"
        assert page.locator("script").count() == 0
        assert requests == [report.as_uri()]
        assert errors == []
    finally:
        context.close()


def test_the_report_is_one_file_with_no_address_outside_it(report: Path) -> None:
    text = report.read_text()
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in text and "<link" not in text and "src=" not in text
    assert "&lt;script&gt;window.ranFromTranscript" in text
