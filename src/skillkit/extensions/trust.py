"""Project trust for project-local plugins (``.skillkit/plugins/*.py``).

A project-local plugin is Python code that came with the project and runs with the
user's rights, so it runs only in a project the user trusts. The trust decision and its
store live in `skillkit.trust` (one decision covers a project's plugins and its
settings); this module keeps the names plugin code has always imported from here.
"""

from __future__ import annotations

from skillkit.trust import (
    TRUST_ENV,
    AskTrust,
    TrustStore,
    decide_trust,
    default_trust_file,
)

__all__ = [
    "TRUST_ENV",
    "AskTrust",
    "TrustStore",
    "decide_trust",
    "default_trust_file",
]
