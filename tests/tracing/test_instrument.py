"""``opentelemetry-instrument skillkit -p ...`` for real: OpenTelemetry's zero-code
instrumentation (the ``opentelemetry-distro`` package) sets the global tracer and meter
providers before SkillKit starts, with the console exporters, and SkillKit's spans and
GenAI metrics come out of it — no ``--trace`` needed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "opentelemetry.instrumentation.auto_instrumentation",
    reason="opentelemetry-distro (a dev dependency) is missing",
)

BIN = Path(sys.executable).parent
INSTRUMENT = BIN / "opentelemetry-instrument"

pytestmark = pytest.mark.timeout(90)

SCRIPT = """
replies:
  - text: "Let me look."
    tool_calls:
      - name: read
        arguments: {path: notes.txt}
  - text: "The notes say hello."
"""


def _json_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object the console exporters printed (each starts a line with ``{``)."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    index = 0
    while (start := text.find("\n{", index)) != -1:
        try:
            value, end = decoder.raw_decode(text, start + 1)
        except json.JSONDecodeError:
            index = start + 1
            continue
        if isinstance(value, dict):
            found.append(value)
        index = end
    return found


def test_opentelemetry_instrument_exports_skillkits_spans_and_metrics(tmp_path: Path) -> None:
    assert INSTRUMENT.exists() or shutil.which("opentelemetry-instrument"), "not installed"
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("hello\n")
    (tmp_path / "model.yaml").write_text(SCRIPT)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "SKILLKIT_"))},
        "HOME": str(tmp_path / "home"),
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "OTEL_SERVICE_NAME": "skillkit-under-test",
        "OTEL_TRACES_EXPORTER": "console",
        "OTEL_METRICS_EXPORTER": "console",
        "OTEL_LOGS_EXPORTER": "none",
    }
    done = subprocess.run(
        [str(INSTRUMENT), "skillkit", "-p", "what do the notes say?", "--sandbox", "off",
         "--model", f"scripted:{tmp_path / 'model.yaml'}"],
        cwd=work, env=env, capture_output=True, text=True, timeout=80, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("The notes say hello.\n"), done.stdout[:500]

    printed = _json_objects(done.stdout)
    spans = [o for o in printed if "context" in o and "name" in o]
    names = [span["name"] for span in spans]
    assert "invoke_agent main" in names, names
    assert "execute_tool read" in names, names
    assert sum(name.startswith("chat ") for name in names) == 2, names
    run = next(span for span in spans if span["name"] == "invoke_agent main")
    assert run["attributes"]["gen_ai.operation.name"] == "invoke_agent"
    assert run["resource"]["attributes"]["service.name"] == "skillkit-under-test"
    # one trace: the model calls and the tool call are children of the run
    assert {span["context"]["trace_id"] for span in spans} == {run["context"]["trace_id"]}
    run_id = run["context"]["span_id"]
    assert all(span["parent_id"] == run_id for span in spans if span is not run)

    metric_names = {
        metric["name"]
        for export in printed
        for resource in export.get("resource_metrics", [])
        for scope in resource["scope_metrics"]
        for metric in scope["metrics"]
    }
    assert {"gen_ai.client.token.usage", "gen_ai.client.operation.duration"} <= metric_names
