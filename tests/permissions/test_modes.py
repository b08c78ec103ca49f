"""Permission modes: names, the Shift+Tab cycle, bypass only by flag, change listeners."""

from __future__ import annotations

import pytest

from skillkit.permissions.modes import ModeState, PermissionMode, next_mode, parse_mode


@pytest.mark.parametrize(
    ("text", "mode"),
    [
        ("default", PermissionMode.DEFAULT),
        ("accept-edits", PermissionMode.ACCEPT_EDITS),
        ("acceptEdits", PermissionMode.ACCEPT_EDITS),
        (" PLAN ", PermissionMode.PLAN),
        ("bypass", PermissionMode.BYPASS),
    ],
)
def test_parse_mode_accepts_the_usual_spellings(text: str, mode: PermissionMode) -> None:
    assert parse_mode(text) is mode


def test_parse_mode_rejects_unknown_names_listing_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="default, accept_edits, plan, bypass"):
        parse_mode("yolo")


def test_shift_tab_cycle_skips_bypass_unless_enabled() -> None:
    order = [PermissionMode.DEFAULT]
    for _ in range(3):
        order.append(next_mode(order[-1]))
    assert [m.value for m in order] == ["default", "accept_edits", "plan", "default"]
    assert next_mode(PermissionMode.PLAN, bypass_allowed=True) is PermissionMode.BYPASS
    assert next_mode(PermissionMode.BYPASS, bypass_allowed=True) is PermissionMode.DEFAULT


def test_mode_changes_notify_listeners_with_previous_and_new() -> None:
    state = ModeState()
    seen: list[tuple[str, str]] = []
    unsubscribe = state.subscribe(lambda prev, new: seen.append((prev.value, new.value)))
    assert state.set("plan") is PermissionMode.DEFAULT
    state.set("plan")  # no change, no event
    assert state.cycle() is PermissionMode.DEFAULT
    unsubscribe()
    state.set("accept_edits")
    assert seen == [("default", "plan"), ("plan", "default")]


def test_bypass_only_when_enabled_explicitly() -> None:
    state = ModeState()
    with pytest.raises(PermissionError):
        state.set("bypass")
    assert ModeState("bypass").bypass_allowed
    enabled = ModeState(bypass_allowed=True)
    enabled.set("bypass")
    assert enabled.mode is PermissionMode.BYPASS


def test_plan_remembers_the_mode_it_was_entered_from() -> None:
    state = ModeState("accept_edits")
    state.set("plan")
    assert state.mode_before_plan is PermissionMode.ACCEPT_EDITS
