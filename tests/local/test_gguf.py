"""The GGUF metadata reader: real files, hand-made files, and arbitrary bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillkit.local.errors import ModelFileError
from skillkit.local.gguf import read_gguf_info
from tests.local.gguf_files import gguf_bytes, write_gguf


def test_reads_the_default_models_architecture_name_and_context(default_gguf: Path) -> None:
    info = read_gguf_info(default_gguf)
    assert info.architecture == "llama"
    assert info.context_length == 8192
    assert info.version == 3
    assert info.tensor_count > 0
    assert info.chat_template is not None and "<|im_start|>" in info.chat_template
    assert info.file_size == default_gguf.stat().st_size


def test_reads_scalars_and_strings_and_skips_arrays(tmp_path: Path) -> None:
    path = write_gguf(
        tmp_path / "tiny.gguf",
        {
            "general.architecture": "qwen2",
            "general.name": "Tiny Test",
            "tokenizer.ggml.tokens": ["a", "b", "c"],
            "tokenizer.ggml.token_type": [1, 2, 3],
            "qwen2.context_length": 32768,
            "qwen2.rope.freq_base": 1e6,
            "tokenizer.ggml.add_bos_token": False,
            "tokenizer.chat_template": "{{ messages }}",
        },
    )
    info = read_gguf_info(path)
    assert (info.architecture, info.name, info.context_length) == ("qwen2", "Tiny Test", 32768)
    assert info.chat_template == "{{ messages }}"
    assert info.metadata["tokenizer.ggml.add_bos_token"] is False
    assert "tokenizer.ggml.tokens" not in info.metadata


def test_name_falls_back_to_the_file_name(tmp_path: Path) -> None:
    info = read_gguf_info(write_gguf(tmp_path / "my-model.Q8_0.gguf", {}))
    assert info.name == "my-model.Q8_0"
    assert info.context_length is None


def test_missing_file_is_named_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match=r"^model file not found: .*nope\.gguf$"):
        read_gguf_info(tmp_path / "nope.gguf")


def test_a_directory_is_not_a_model(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="not a file"):
        read_gguf_info(tmp_path)


def test_wrong_magic_says_not_a_gguf_file(tmp_path: Path) -> None:
    path = tmp_path / "weights.gguf"
    path.write_text("this is a text file, not weights")
    with pytest.raises(ModelFileError, match="not a GGUF model file"):
        read_gguf_info(path)


def test_unsupported_version_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "future.gguf"
    path.write_bytes(gguf_bytes({}, version=99))
    with pytest.raises(ModelFileError, match="unsupported GGUF version 99"):
        read_gguf_info(path)


def test_a_truncated_real_file_is_reported_as_truncated(default_gguf: Path, tmp_path: Path) -> None:
    with default_gguf.open("rb") as source:
        head = source.read(100_000)
    path = tmp_path / "cut.gguf"
    path.write_bytes(head)
    with pytest.raises(ModelFileError, match="truncated"):
        read_gguf_info(path)


_values = st.one_of(
    st.text(max_size=40),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
    st.booleans(),
    st.lists(st.text(max_size=8), max_size=5),
    st.lists(st.integers(min_value=-(2**31), max_value=2**31 - 1), max_size=5),
)


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(metadata=st.dictionaries(st.text(min_size=1, max_size=30), _values, max_size=8))
def test_written_metadata_reads_back(tmp_path: Path, metadata: dict[str, object]) -> None:
    path = tmp_path / "round.gguf"
    path.write_bytes(gguf_bytes(metadata))  # type: ignore[arg-type]
    info = read_gguf_info(path)
    expected = {key: value for key, value in metadata.items() if not isinstance(value, list)}
    assert info.metadata == expected


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300), keep_header=st.booleans())
def test_arbitrary_bytes_raise_only_model_file_error(
    tmp_path: Path, data: bytes, keep_header: bool
) -> None:
    path = tmp_path / "fuzz.gguf"
    path.write_bytes((b"GGUF\x03\x00\x00\x00" if keep_header else b"") + data)
    try:
        read_gguf_info(path)
    except ModelFileError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    metadata=st.dictionaries(st.text(min_size=1, max_size=10), _values, min_size=1, max_size=4),
    cut=st.integers(min_value=1, max_value=200),
)
def test_any_truncation_of_a_valid_file_is_a_model_file_error(
    tmp_path: Path, metadata: dict[str, object], cut: int
) -> None:
    data = gguf_bytes(metadata)  # type: ignore[arg-type]
    path = tmp_path / "cut.gguf"
    path.write_bytes(data[: max(0, len(data) - cut)])
    with pytest.raises(ModelFileError):
        read_gguf_info(path)
