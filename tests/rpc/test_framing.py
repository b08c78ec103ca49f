"""Strict LF framing: only a line feed ends a record."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from skillkit.rpc.framing import LineSplitter, LineTooLong


def test_u2028_u2029_cr_and_form_feed_do_not_end_a_record() -> None:
    record = json.dumps({"text": "a\u2028b\u2029c\rd\x0ce"}, ensure_ascii=False).encode()
    splitter = LineSplitter()
    assert splitter.feed(record + b"\n" + record[:5]) == [record]
    assert splitter.feed(record[5:] + b"\r\n") == [record + b"\r"]
    assert splitter.finish() == []


def test_a_last_record_without_a_line_feed_is_kept_at_the_end() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b'{"a": 1}') == []
    assert splitter.finish() == [b'{"a": 1}']


def test_an_over_long_line_is_reported_once_and_the_next_one_is_read() -> None:
    splitter = LineSplitter(max_line=10)
    out = splitter.feed(b"x" * 8)
    out += splitter.feed(b"y" * 8)
    out += splitter.feed(b"z" * 3 + b"\nok\n")
    assert out == [LineTooLong(19), b"ok"]
    assert splitter.feed(b"a" * 11 + b"\n") == [LineTooLong(11)]
    assert splitter.feed(b"b" * 10 + b"\n") == [b"b" * 10]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text(alphabet=st.characters(blacklist_categories=["Cs"])), max_size=8),
    st.integers(min_value=1, max_value=17),
)
def test_records_survive_any_chunking(texts: list[str], chunk: int) -> None:
    records = [json.dumps({"t": t}, ensure_ascii=False).encode() for t in texts]
    stream = b"".join(r + b"\n" for r in records)
    splitter = LineSplitter()
    out: list[bytes | LineTooLong] = []
    for start in range(0, len(stream), chunk):
        out += splitter.feed(stream[start : start + chunk])
    out += splitter.finish()
    assert out == records
    assert [json.loads(r)["t"] for r in out if isinstance(r, bytes)] == texts
