"""``skillkit --trace`` / ``SKILLKIT_TRACE=1`` against a real OTLP/HTTP receiver: a small
HTTP server on 127.0.0.1 that decodes the protobuf export requests."""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http.trace_exporter")
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)

from skillkit.tracing import attributes as attr
from skillkit.tracing.otlp import OtlpUnavailableError, configure_otlp

SKILLKIT = Path(sys.executable).with_name("skillkit")

pytestmark = pytest.mark.timeout(60)


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


class Receiver:
    """Collects what OTLP exporters post: spans as (name, attributes), metric names with
    their data points' attributes, and each export's resource attributes."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, dict[str, Any]]] = []
        self.metrics: dict[str, list[dict[str, Any]]] = {}
        self.resources: list[dict[str, Any]] = []
        self.content_types: set[str] = set()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.content_types.add(self.headers["Content-Type"])
                receiver.take(self.path, body)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def take(self, path: str, body: bytes) -> None:
        if path == "/v1/traces":
            traces = ExportTraceServiceRequest()
            traces.ParseFromString(body)
            for resource_spans in traces.resource_spans:
                self.resources.append(
                    {a.key: _value(a.value) for a in resource_spans.resource.attributes}
                )
                for scope in resource_spans.scope_spans:
                    for span in scope.spans:
                        values = {a.key: _value(a.value) for a in span.attributes}
                        self.spans.append((span.name, values))
        elif path == "/v1/metrics":
            exported = ExportMetricsServiceRequest()
            exported.ParseFromString(body)
            for resource_metrics in exported.resource_metrics:
                for scope in resource_metrics.scope_metrics:
                    for metric in scope.metrics:
                        self.metrics.setdefault(metric.name, []).extend(
                            {a.key: _value(a.value) for a in point.attributes}
                            for point in metric.histogram.data_points
                        )

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.close()


def run_skillkit(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.yaml"
    script.write_text(
        "replies:\n"
        "  - tool_calls:\n"
        "      - name: ls\n"
        "        arguments: {path: '.'}\n"
        "  - text: Listed.\n"
    )
    (tmp_path / "home").mkdir(exist_ok=True)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    environ.pop("SKILLKIT_TRACE", None)
    return subprocess.run(
        [str(SKILLKIT), "-p", "list the folder", "--model", f"scripted:{script}", *args],
        cwd=tmp_path,
        env={**environ, "HOME": str(tmp_path / "home"), **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=50,
    )


def test_the_trace_flag_exports_spans_and_metrics_over_otlp_http(
    tmp_path: Path, receiver: Receiver
) -> None:
    run = run_skillkit(
        tmp_path,
        "--trace",
        "--no-session",
        OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "Listed."
    names = sorted(name.split(":")[0] for name, _ in receiver.spans)  # the model: scripted:PATH
    assert names == ["chat scripted", "chat scripted", "execute_tool ls", "invoke_agent main"]
    tool = next(values for name, values in receiver.spans if name == "execute_tool ls")
    assert tool[attr.GEN_AI_TOOL_CALL_ID] and tool[attr.GEN_AI_TOOL_DESCRIPTION]
    assert {r.get("service.name") for r in receiver.resources} == {"skillkit"}
    assert receiver.content_types == {"application/x-protobuf"}
    durations = receiver.metrics[attr.METRIC_OPERATION_DURATION]
    assert durations and all(p[attr.GEN_AI_PROVIDER_NAME] == "scripted" for p in durations)
    token_types = {p[attr.GEN_AI_TOKEN_TYPE] for p in receiver.metrics[attr.METRIC_TOKEN_USAGE]}
    assert token_types == {"input", "output"}


def test_skillkit_trace_in_the_environment_does_the_same_with_the_otel_settings(
    tmp_path: Path, receiver: Receiver
) -> None:
    run = run_skillkit(
        tmp_path,
        "--no-session",
        SKILLKIT_TRACE="1",
        OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
        OTEL_SERVICE_NAME="billing-agent",
        OTEL_METRICS_EXPORTER="none",
    )
    assert run.returncode == 0, run.stderr
    assert len(receiver.spans) == 4
    assert {r.get("service.name") for r in receiver.resources} == {"billing-agent"}
    assert receiver.metrics == {}


def test_without_the_switch_nothing_is_sent(tmp_path: Path, receiver: Receiver) -> None:
    run = run_skillkit(tmp_path, "--no-session", OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint)
    assert run.returncode == 0, run.stderr
    assert receiver.spans == [] and receiver.metrics == {}


def test_a_missing_exporter_is_one_line_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in (
        "opentelemetry.exporter.otlp.proto.http.trace_exporter",
        "opentelemetry.exporter.otlp.proto.http.metric_exporter",
    ):
        monkeypatch.setitem(sys.modules, name, None)  # makes importing it fail
    with pytest.raises(OtlpUnavailableError) as failed:
        configure_otlp({})
    assert str(failed.value) == (
        "--trace needs the OTLP exporter (opentelemetry-exporter-otlp-proto-http): "
        "pip install 'skillkit-agent[otlp]'"
    )


def test_an_unsupported_protocol_is_refused_before_anything_is_installed() -> None:
    with pytest.raises(OtlpUnavailableError, match="not supported"):
        configure_otlp({"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"})
