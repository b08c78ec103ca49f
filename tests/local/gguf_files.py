"""Write small GGUF files for tests: a header and metadata, optionally cut short."""

from __future__ import annotations

import struct
from pathlib import Path

Value = str | int | float | bool | list[str] | list[int]


def gguf_bytes(metadata: dict[str, Value], *, version: int = 3, tensors: int = 0) -> bytes:
    """A GGUF file with ``metadata`` and no tensor data (ints as int64, floats as float64,
    lists as arrays of strings or int32)."""
    out = bytearray(b"GGUF")
    out += struct.pack("<IQQ", version, tensors, len(metadata))
    for key, value in metadata.items():
        out += _string(key)
        out += _value(value)
    return bytes(out)


def write_gguf(path: Path, metadata: dict[str, Value], **options: int) -> Path:
    path.write_bytes(gguf_bytes(metadata, **options))
    return path


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def _value(value: Value) -> bytes:
    if isinstance(value, bool):
        return struct.pack("<I?", 7, value)
    if isinstance(value, int):
        return struct.pack("<Iq", 11, value)
    if isinstance(value, float):
        return struct.pack("<Id", 12, value)
    if isinstance(value, str):
        return struct.pack("<I", 8) + _string(value)
    if all(isinstance(item, str) for item in value):
        body = b"".join(_string(str(item)) for item in value)
        return struct.pack("<IIQ", 9, 8, len(value)) + body
    body = b"".join(struct.pack("<i", int(item)) for item in value)
    return struct.pack("<IIQ", 9, 5, len(value)) + body
