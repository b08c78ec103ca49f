"""The web page: one self-contained HTML document built from the package's ``static``
files, and the Content-Security-Policy that allows exactly its own script and style.

The stylesheet and the scripts are inlined into ``index.html`` (its ``{{style}}`` and
``{{script}}`` markers), so the page is one response: no CDN, no second request that
would need the token, works offline. The page's own scripts (`SCRIPTS`, one concept
each) share one function scope, in that order, after the vendored renderer; the
last, ``app.js``, starts the page. The policy names the SHA-256 of each inlined block,
so no other script or style runs even if text from the model reaches the document
(the page inserts the model's text as text, or as the Markdown rendering of it by the
vendored markdown-it with raw HTML off, filtered to an allowlist of elements and
attributes — never as HTML the model wrote).
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from importlib import resources

__all__ = ["SCRIPTS", "Page", "load_page"]

SCRIPTS = (
    "core.js",
    "markdown.js",
    "transcript.js",
    "requests.js",
    "commands.js",
    "checkpoints.js",
    "sessions.js",
    "app.js",
)
"""The page's own scripts, in the order they are inlined (see the module text)."""


@dataclass(frozen=True)
class Page:
    """The page's bytes and the Content-Security-Policy to serve them with."""

    html: bytes
    content_security_policy: str


def _digest(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def load_page() -> Page:
    """The page from the package data, with its script and style inlined."""
    static = resources.files("skillkit.serve") / "static"
    template = (static / "index.html").read_text(encoding="utf-8")
    style = (static / "app.css").read_text(encoding="utf-8")
    # markdown-it 14.1.0 (MIT, markdown-it.LICENSE.txt), vendored: the page renders the
    # model's Markdown with it, offline
    renderer = (static / "markdown-it.min.js").read_text(encoding="utf-8")
    own = "\n".join(
        f"// ---- {name}\n" + (static / name).read_text(encoding="utf-8") for name in SCRIPTS
    )
    script = renderer + '\n;\n(() => {\n"use strict";\n' + own + "\n})();\n"
    if "{{style}}" not in template or "{{script}}" not in template:
        raise RuntimeError("the page template lacks its {{style}} or {{script}} marker")
    html = template.replace("{{style}}", style).replace("{{script}}", script)
    policy = "; ".join(
        [
            "default-src 'none'",
            f"script-src 'sha256-{_digest(script)}'",
            f"style-src 'sha256-{_digest(style)}'",
            "connect-src 'self'",
            "img-src 'self' data:",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
        ]
    )
    return Page(html.encode("utf-8"), policy)
