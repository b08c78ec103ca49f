# ruff: noqa: ASYNC240 - tests read small files directly

import gc
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillkit.runtime import BackgroundTasks, BashRuntime
from skillkit.runtime.output import OutputBuffer, OutputLimits, SpillFiles, truncate_text
from skillkit.runtime.sandbox import Sandbox

LINES = [f"line {i}\n" for i in range(1, 101)]


def test_text_within_limits_is_kept_whole() -> None:
    result = truncate_text("".join(LINES), OutputLimits(max_lines=100, max_chars=10_000))
    assert not result.truncated
    assert result.text == "".join(LINES)
    assert result.total_lines == 100


def test_keep_head_cuts_the_end_and_says_how_much() -> None:
    result = truncate_text("".join(LINES), OutputLimits(max_lines=10), keep="head")
    assert result.truncated
    assert result.text.startswith("".join(LINES[:10]))
    assert "line 11\n" not in result.text
    assert "omitted" in result.text.splitlines()[-1]
    assert result.total_lines == 100


def test_keep_tail_cuts_the_start() -> None:
    result = truncate_text("".join(LINES), OutputLimits(max_lines=10), keep="tail")
    assert result.text.endswith("".join(LINES[-10:]))
    assert "line 90\n" not in result.text
    assert "omitted" in result.text.splitlines()[0]


def test_keep_middle_keeps_both_ends() -> None:
    result = truncate_text("".join(LINES), OutputLimits(max_lines=10), keep="middle")
    assert result.text.startswith("".join(LINES[:5]))
    assert result.text.endswith("".join(LINES[-5:]))
    assert "line 50\n" not in result.text


def test_character_limit_applies_as_well_as_the_line_limit() -> None:
    result = truncate_text(
        "x" * 30 + "\n" + "y" * 30 + "\n", OutputLimits(max_chars=40), keep="head"
    )
    assert result.truncated
    assert result.text.startswith("x" * 30 + "\n")
    assert "y" * 20 not in result.text


def test_one_huge_line_is_cut_to_the_budget() -> None:
    result = truncate_text("z" * 10_000, OutputLimits(max_chars=100), keep="tail")
    assert result.truncated
    assert result.text.endswith("z" * 100)
    assert len(result.text) < 300


def test_spill_file_holds_the_complete_text(tmp_path: Path) -> None:
    buffer = OutputBuffer(OutputLimits(max_lines=5), keep="tail", spill=True)
    for line in LINES:
        buffer.append(line)
    result = buffer.finish()
    assert result.truncated and result.spill_path is not None
    assert Path(result.spill_path).read_text() == "".join(LINES)
    assert result.spill_path in result.text
    Path(result.spill_path).unlink()


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError):
        OutputLimits(max_lines=0)


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.text(max_size=40).map(lambda s: s.replace("\n", "") + "\n"), max_size=60),
    max_lines=st.integers(1, 20),
    max_chars=st.integers(1, 300),
    keep=st.sampled_from(["head", "tail", "middle"]),
)
def test_truncation_is_bounded_and_the_spill_is_exact(
    lines: list[str], max_lines: int, max_chars: int, keep: str
) -> None:
    limits = OutputLimits(max_lines=max_lines, max_chars=max_chars)
    buffer = OutputBuffer(limits, keep=keep, spill=True)  # type: ignore[arg-type]
    for line in lines:
        buffer.append(line)
    result = buffer.finish()
    full = "".join(lines)
    assert result.total_chars == len(full)
    if not result.truncated:
        assert result.text == full
        assert result.spill_path is None
        return
    assert result.spill_path is not None
    with open(result.spill_path, encoding="utf-8", errors="replace", newline="") as handle:
        spilled = handle.read()
    Path(result.spill_path).unlink()
    assert spilled == full.encode("utf-8", "replace").decode("utf-8", "replace")
    marker_line = next(line for line in result.text.splitlines() if "omitted" in line)
    kept = len(result.text) - len(marker_line) - 2
    assert kept <= max_chars


def test_spill_files_are_capped_and_deleted_on_close() -> None:
    spills = SpillFiles(max_bytes=1000)
    buffer = OutputBuffer(OutputLimits(max_lines=5), keep="head", spill=spills)
    for i in range(10_000):
        buffer.append(f"line {i}\n")
    result = buffer.finish()
    assert result.spill_path is not None and spills.directory is not None
    spilled = Path(result.spill_path).read_bytes()
    assert spilled.startswith(b"line 0\nline 1\n")
    assert spilled.endswith(b"\n[... spill file cut at 1000 bytes ...]\n")
    assert len(spilled) < 1100
    assert oct(os.stat(spills.directory).st_mode & 0o777) == "0o700"
    directory = spills.directory
    spills.close()
    assert not Path(directory).exists() and not Path(result.spill_path).exists()
    spills.close()  # idempotent


async def test_a_runtime_deletes_its_spill_files_on_close() -> None:
    runtime = BashRuntime(limits=OutputLimits(max_lines=10), sandbox=Sandbox.disabled())
    first = await runtime.execute("seq 1 100", timeout=30)
    second = await runtime.execute("seq 1 100", timeout=30)
    paths = [Path(p) for p in (first.full_output_path, second.full_output_path) if p]
    assert len(paths) == 2 and all(p.read_text().endswith("100\n") for p in paths)
    await runtime.aclose()
    assert not any(p.exists() for p in paths)
    again = await runtime.execute("seq 1 100", timeout=30)  # still usable afterwards
    assert again.full_output_path is not None and Path(again.full_output_path).exists()
    await runtime.aclose()


async def test_background_aclose_deletes_its_spill_files(tmp_path: Path) -> None:
    manager = BackgroundTasks(
        cwd=tmp_path, limits=OutputLimits(max_lines=10), sandbox=Sandbox.disabled()
    )
    task = manager.start("seq 1 100")
    await manager.wait(task.id, timeout=30)
    spill = manager.read_output(task.id).full_output_path
    assert spill is not None and Path(spill).exists()
    await manager.aclose()
    assert not Path(spill).exists()


def test_a_dropped_spill_store_deletes_its_files() -> None:
    spills = SpillFiles()
    handle, path = spills.create()
    handle.close()
    del spills
    gc.collect()
    assert not Path(path).exists()
