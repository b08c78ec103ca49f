"""The HTML report of a run: one self-contained page.

No network and no script: styles are inline, the chart (pass rate against cost per
model, with 95 % intervals; against tokens when no model's cost is known) is inline
SVG, and a Content-Security-Policy that allows no script at all is set in the page —
every text from a run (answers, tool output, judge reasoning) is HTML-escaped besides,
so a transcript holding ``<script>`` shows it as text. Sections: the models, the pass
rate of each case on each model, every failure with its reasons and transcript, and
every judge verdict with its reasoning.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from html import escape
from pathlib import Path
from typing import Any

from skillkit.evals.run import EvalResults
from skillkit.evals.task import Outcome, outcome_of

__all__ = ["render_report", "write_report"]

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

_STYLE = " ".join(
    (
        "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;",
        "color:#1d2330;padding:0 1em}",
        "h1{font-size:1.5em}h2{margin-top:2em;border-bottom:1px solid #dde;padding-bottom:.2em}",
        "table{border-collapse:collapse;margin:.5em 0}",
        "td,th{border:1px solid #dde;padding:.3em .6em;text-align:left}",
        ".pass{background:#e3f6e8}.part{background:#fff4d6}.fail{background:#fde2e1}",
        ".failure{border:1px solid #f3c1bd;border-radius:6px;padding:.6em 1em;margin:1em 0}",
        ".turn{margin:.3em 0;padding:.3em .6em;border-left:3px solid #ccd;white-space:pre-wrap;",
        "font-family:ui-monospace,monospace;font-size:12.5px}",
        ".user{border-color:#5b8def}.assistant{border-color:#3aa76d}",
        ".tool{border-color:#b98b2f}.error{border-color:#d9534f}",
        ".muted{color:#667}svg text{font:11px system-ui,sans-serif}",
    )
)


def write_report(
    path: Path, results: EvalResults, manifest: Mapping[str, Any], *, title: str = "eval"
) -> None:
    """Write the report of ``results`` to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_report(results, manifest, title=title), encoding="utf-8")


def render_report(results: EvalResults, manifest: Mapping[str, Any], *, title: str) -> str:
    """The report page as text."""
    outcomes = [(r, outcome_of(r)) for r in results.results]
    parts = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        f"<title>{escape(title)} — SkillKit eval</title><style>{_STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        _meta(results, manifest),
        "<h2>Models</h2>",
        _chart(results),
        _model_table(results),
        "<h2>Cases</h2>",
        _case_table(results),
        "<h2 id=failures>Failures</h2>",
        _failures(outcomes),
        "<h2>Judge verdicts</h2>",
        _judgements(outcomes),
        "</body></html>",
    ]
    return "\n".join(parts)


def _meta(results: EvalResults, manifest: Mapping[str, Any]) -> str:
    settings = manifest.get("settings", {}) if isinstance(manifest, Mapping) else {}
    items = [
        ("suite", settings.get("suite")),
        ("suite sha256", str(settings.get("suite_sha256", ""))[:16]),
        ("engine", manifest.get("engine")),
        ("rows", len(results.results)),
        ("results sha256", results.results_sha256[:16]),
        ("finished", manifest.get("finished")),
    ]
    shown = " · ".join(f"{escape(k)}: {escape(str(v))}" for k, v in items if v not in (None, ""))
    return f"<p class=muted>{shown}</p>"


def _chart(results: EvalResults) -> str:
    """Pass rate (y) against mean cost per row (x) — or mean tokens when no cost is
    known — one point per model with its interval."""
    models = results.models
    if not models:
        return "<p class=muted>No results.</p>"
    use_cost = any(m.cost_known and m.cost > 0 for m in models)

    def x_of(m: Any) -> float:
        if use_cost:
            return m.cost / m.total if m.total else 0.0
        return (m.input_tokens + m.output_tokens) / m.total if m.total else 0.0

    label = "mean cost per run (USD)" if use_cost else "mean tokens per run (no prices known)"
    width, height, left, bottom, top, right = 560, 300, 60, 40, 20, 150
    xs = [x_of(m) for m in models]
    high = max(xs) or 1.0
    span = high * 1.1

    def px(x: float) -> float:
        return left + (width - left - right) * (x / span)

    def py(y: float) -> float:
        return top + (height - top - bottom) * (1 - y)

    palette = ["#3366cc", "#dc3912", "#109618", "#990099", "#ff9900", "#0099c6"]
    out = [
        f'<svg id=chart role=img aria-label="pass rate against {escape(label)}" '
        f'width={width} height={height} viewBox="0 0 {width} {height}">',
        f'<line x1={left} y1={py(0)} x2={width - right} y2={py(0)} stroke="#999"/>',
        f'<line x1={left} y1={py(0)} x2={left} y2={py(1)} stroke="#999"/>',
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        out.append(
            f"<text x={left - 6} y={py(tick) + 4:.1f} text-anchor=end>{tick:.0%}</text>"
            f"<line x1={left} y1={py(tick):.1f} x2={width - right} y2={py(tick):.1f} "
            'stroke="#eee"/>'
        )
    for fraction in (0.0, 0.5, 1.0):
        value = span * fraction / 1.1 if fraction else 0.0
        shown = f"${value:.4g}" if use_cost else f"{value:.0f}"
        out.append(
            f"<text x={px(value):.1f} y={height - bottom + 16} text-anchor=middle>"
            f"{escape(shown)}</text>"
        )
    out.append(
        f"<text x={(left + width - right) / 2} y={height - 6} text-anchor=middle>"
        f"{escape(label)}</text>"
    )
    for index, (model, x) in enumerate(zip(models, xs, strict=True)):
        colour = palette[index % len(palette)]
        low, high_rate = model.interval
        cx, cy = px(x), py(model.rate)
        out.append(
            f"<g class=point><title>{escape(model.model)}: {model.rate:.0%} "
            f"({model.passed}/{model.total})</title>"
            f"<line x1={cx:.1f} y1={py(low):.1f} x2={cx:.1f} y2={py(high_rate):.1f} "
            f'stroke="{colour}"/>'
            f'<circle cx={cx:.1f} cy={cy:.1f} r=5 fill="{colour}"/></g>'
            f'<text x={width - right + 10} y={top + 16 * index + 8} fill="{colour}">'
            f"● {escape(_short(model.model, 22))}</text>"
        )
    out.append("</svg>")
    return "".join(out)


def _model_table(results: EvalResults) -> str:
    rows = ["<table><tr><th>model<th>passed<th>rate<th>95% CI<th>tokens in / out<th>cost"]
    for m in results.models:
        low, high = m.interval
        cost = f"${m.cost:.4f}" if m.cost_known else "unknown"
        rows.append(
            f"<tr><td>{escape(m.model)}<td>{m.passed}/{m.total}<td>{m.rate:.0%}"
            f"<td>{low:.0%}–{high:.0%}<td>{m.input_tokens} / {m.output_tokens}<td>{cost}"
        )
    rows.append("</table>")
    return "".join(rows)


def _case_table(results: EvalResults) -> str:
    models = [m.model for m in results.models]
    cases = list(dict.fromkeys(s.case for s in results.cases))
    head = "".join(f"<th>{escape(m)}" for m in models)
    rows = [f"<table id=cases><tr><th>case{head}"]
    for case in cases:
        cells = []
        for model in models:
            score = results.case(case, model)
            if score is None:
                cells.append("<td>–")
                continue
            kind = "pass" if score.rate == 1 else "fail" if score.rate == 0 else "part"
            low, high = score.interval
            cells.append(
                f"<td class={kind}>{score.passed}/{score.total} ({score.rate:.0%}) "
                f"<span class=muted>[{low:.0%}–{high:.0%}]</span>"
            )
        rows.append(f"<tr><td>{escape(case)}{''.join(cells)}")
    rows.append("</table>")
    return "".join(rows)


def _failures(outcomes: list[tuple[Any, Outcome | None]]) -> str:
    failed = [(r, o) for r, o in outcomes if o is None or not o.passed]
    if not failed:
        return "<p>None: every run passed.</p>"
    out: list[str] = []
    for result, outcome in failed:
        if outcome is None:
            out.append(
                f"<div class=failure><b>row {result.row}</b>: {escape(result.error or '')}</div>"
            )
            continue
        reasons = "".join(
            f"<li><b>{escape(c.check)}</b>: {escape(c.reason)}"
            + (f"<br><i>judge:</i> {escape(c.reasoning)}" if c.reasoning else "")
            for c in outcome.checks
            if not c.passed
        )
        error = f"<p><b>error:</b> {escape(result.error)}</p>" if result.error else ""
        out.append(
            f"<div class=failure><h3>{escape(outcome.case)} · {escape(outcome.model)} · "
            f"run {outcome.repeat + 1}</h3>{error}<ul>{reasons}</ul>"
            f"<details open><summary>transcript</summary>{_transcript(outcome)}</details></div>"
        )
    return "".join(out)


def _transcript(outcome: Outcome) -> str:
    items: list[str] = []
    for item in outcome.transcript:
        role = str(item.get("role", ""))
        text = str(item.get("text", ""))
        calls = item.get("tool_calls") or []
        if calls:
            shown = "; ".join(
                f"{c.get('name')}({json.dumps(c.get('args', {}), ensure_ascii=False)})"
                for c in calls
                if isinstance(c, Mapping)
            )
            text = (text + "\n" if text else "") + f"→ {shown}"
        if role == "tool":
            role_class = "error" if item.get("is_error") else "tool"
            label = f"tool {item.get('tool', '')}"
        else:
            role_class = role if role in ("user", "assistant") else "tool"
            label = role
        items.append(f"<div class='turn {role_class}'><b>{escape(label)}</b>\n{escape(text)}</div>")
    return "".join(items) or "<p class=muted>(no transcript)</p>"


def _judgements(outcomes: list[tuple[Any, Outcome | None]]) -> str:
    rows = ["<table><tr><th>case<th>model<th>run<th>verdict<th>score<th>reasoning"]
    count = 0
    for _, outcome in outcomes:
        if outcome is None:
            continue
        for check in outcome.checks:
            if check.kind != "judge":
                continue
            count += 1
            score = "" if check.score is None else f"{check.score:g}"
            reasoning = check.reasoning or check.reason
            rows.append(
                f"<tr><td>{escape(outcome.case)}<td>{escape(outcome.model)}"
                f"<td>{outcome.repeat + 1}<td class={'pass' if check.passed else 'fail'}>"
                f"{'pass' if check.passed else 'fail'}<td>{score}<td>{escape(reasoning)}"
            )
    rows.append("</table>")
    return "".join(rows) if count else "<p class=muted>No judge checks in this run.</p>"


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]
