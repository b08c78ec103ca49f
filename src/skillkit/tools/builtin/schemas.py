"""Where the built-in tools find their argument models and the models' stored schemas.

Kept apart from `skillkit.tools.builtin.arguments` (which imports pydantic) so a tool
class can name its model without importing it.
"""

from __future__ import annotations

from pathlib import Path

from skillkit.tools.arguments import ArgumentModels

__all__ = ["ARGUMENTS"]

ARGUMENTS = ArgumentModels(
    "skillkit.tools.builtin.arguments", Path(__file__).with_name("arguments.json")
)
"""The built-in tools' argument models (``skillkit.tools.builtin.arguments``) and their
schemas, stored in ``arguments.json``."""
