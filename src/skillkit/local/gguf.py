"""Read the header and metadata of a GGUF model file, without loading its weights.

`read_gguf_info` checks that a file is a GGUF file llama.cpp can start reading and returns
what SkillKit needs before starting a server: the architecture, the model's name, its
training context length and whether it carries a chat template. Tensor data is never read,
so a call costs a few milliseconds even for a multi-gigabyte file.

The format (little-endian): magic ``GGUF``, ``uint32`` version (2 or 3), ``uint64`` tensor
count, ``uint64`` metadata count, then metadata entries ``(string key, uint32 type,
value)``; a string is a ``uint64`` byte length and UTF-8 bytes; an array is a ``uint32``
element type, a ``uint64`` length and the elements.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from typing import BinaryIO

from skillkit.local.errors import ModelFileError

__all__ = ["GGUFInfo", "read_gguf_info"]

_MAGIC = b"GGUF"
_SUPPORTED_VERSIONS = (2, 3)
_MAX_ENTRIES = 1 << 20
_MAX_STRING = 1 << 26  # 64 MiB: far above any real key, value or chat template
_MAX_ARRAY_DEPTH = 4

# metadata value types -> struct format of a scalar (None: string / array)
_SCALARS: dict[int, str] = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING, _ARRAY = 8, 9


@dataclass(frozen=True, slots=True)
class GGUFInfo:
    """What a GGUF file says about itself.

    ``metadata`` holds every scalar and string entry (arrays, such as the tokenizer's
    vocabulary, are skipped). ``context_length`` is ``{architecture}.context_length`` or
    None when absent.
    """

    path: str
    version: int
    tensor_count: int
    file_size: int
    metadata: dict[str, str | int | float | bool] = field(default_factory=dict)

    @property
    def architecture(self) -> str:
        value = self.metadata.get("general.architecture", "")
        return value if isinstance(value, str) else ""

    @property
    def name(self) -> str:
        """``general.name``, else the file name without ``.gguf``."""
        value = self.metadata.get("general.name")
        if isinstance(value, str) and value.strip():
            return value.strip()
        base = os.path.basename(self.path)
        return base[: -len(".gguf")] if base.lower().endswith(".gguf") else base

    @property
    def context_length(self) -> int | None:
        value = self.metadata.get(f"{self.architecture}.context_length")
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            return None
        return value

    @property
    def chat_template(self) -> str | None:
        value = self.metadata.get("tokenizer.chat_template")
        return value if isinstance(value, str) and value else None


def read_gguf_info(path: str | os.PathLike[str]) -> GGUFInfo:
    """Read ``path``'s GGUF header and metadata.

    Raises `ModelFileError` with a one-line message when the file is missing, not a
    regular file, unreadable, not a GGUF file, of an unsupported GGUF version, or cut short
    inside its metadata. Never raises anything else for bad file contents.
    """
    name = os.fspath(path)
    if not os.path.exists(name):
        raise ModelFileError(f"model file not found: {name}")
    if not os.path.isfile(name):
        raise ModelFileError(f"model path is not a file: {name}")
    try:
        size = os.path.getsize(name)
        with open(name, "rb") as file:
            return _parse(file, name, size)
    except PermissionError:
        raise ModelFileError(f"cannot read model file (permission denied): {name}") from None
    except OSError as exc:
        raise ModelFileError(f"cannot read model file {name}: {exc.strerror or exc}") from None


def _parse(file: BinaryIO, name: str, size: int) -> GGUFInfo:
    reader = _Reader(file, name, size)
    magic = file.read(4)
    if magic != _MAGIC:
        raise ModelFileError(f"not a GGUF model file (wrong magic bytes): {name}")
    version = reader.scalar("<I")
    if version not in _SUPPORTED_VERSIONS:
        raise ModelFileError(f"unsupported GGUF version {version} (expected 2 or 3): {name}")
    tensor_count = reader.scalar("<Q")
    entry_count = reader.scalar("<Q")
    if entry_count > _MAX_ENTRIES:
        raise ModelFileError(f"corrupt GGUF file (implausible metadata count): {name}")
    metadata: dict[str, str | int | float | bool] = {}
    for _ in range(entry_count):
        key = reader.string()
        kind = reader.scalar("<I")
        value = reader.value(kind, depth=0)
        if value is not None:
            metadata[key] = value
    return GGUFInfo(
        path=name, version=version, tensor_count=tensor_count, file_size=size, metadata=metadata
    )


class _Reader:
    __slots__ = ("file", "name", "size")

    def __init__(self, file: BinaryIO, name: str, size: int) -> None:
        self.file = file
        self.name = name
        self.size = size

    def _truncated(self) -> ModelFileError:
        return ModelFileError(f"corrupt or truncated GGUF file (metadata cut short): {self.name}")

    def _take(self, count: int) -> bytes:
        data = self.file.read(count)
        if len(data) != count:
            raise self._truncated()
        return data

    def _skip(self, count: int) -> None:
        target = self.file.tell() + count
        if target > self.size:
            raise self._truncated()
        self.file.seek(target)

    def scalar(self, fmt: str) -> int:
        value = struct.unpack(fmt, self._take(struct.calcsize(fmt)))[0]
        assert isinstance(value, int)
        return value

    def string(self) -> str:
        length = self.scalar("<Q")
        if length > _MAX_STRING or self.file.tell() + length > self.size:
            raise self._truncated()
        try:
            return self._take(length).decode("utf-8")
        except UnicodeDecodeError:
            raise ModelFileError(
                f"corrupt GGUF file (metadata text is not UTF-8): {self.name}"
            ) from None

    def value(self, kind: int, *, depth: int) -> str | int | float | bool | None:
        fmt = _SCALARS.get(kind)
        if fmt is not None:
            raw = struct.unpack(fmt, self._take(struct.calcsize(fmt)))[0]
            if isinstance(raw, (bool, int, float)):
                return raw
            raise self._truncated()
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            self._skip_array(depth + 1)
            return None
        raise ModelFileError(f"corrupt GGUF file (unknown metadata type {kind}): {self.name}")

    def _skip_array(self, depth: int) -> None:
        if depth > _MAX_ARRAY_DEPTH:
            raise ModelFileError(f"corrupt GGUF file (arrays nested too deep): {self.name}")
        kind = self.scalar("<I")
        length = self.scalar("<Q")
        fmt = _SCALARS.get(kind)
        if fmt is not None:
            self._skip(struct.calcsize(fmt) * length)
            return
        if length > self.size:  # every element takes at least one byte
            raise self._truncated()
        if kind == _STRING:
            for _ in range(length):
                count = self.scalar("<Q")
                self._skip(count)
            return
        if kind == _ARRAY:
            for _ in range(length):
                self._skip_array(depth + 1)
            return
        raise ModelFileError(f"corrupt GGUF file (unknown metadata type {kind}): {self.name}")
