"""Where the permission layer's tools find their argument models and the models' stored
schemas (apart from `skillkit.permissions.arguments`, which imports pydantic)."""

from __future__ import annotations

from pathlib import Path

from skillkit.tools.arguments import ArgumentModels

__all__ = ["ARGUMENTS"]

ARGUMENTS = ArgumentModels(
    "skillkit.permissions.arguments", Path(__file__).with_name("arguments.json")
)
"""The models of ``ask_user`` and ``exit_plan_mode`` and their schemas, stored in
``arguments.json``."""
