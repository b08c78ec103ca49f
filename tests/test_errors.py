"""`describe_exception`: the one line every layer shows for an exception."""

from __future__ import annotations

from skillkit.errors import describe_exception


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text")


def test_an_exception_is_its_type_and_message() -> None:
    assert describe_exception(ValueError("bad value")) == "ValueError: bad value"


def test_an_exception_without_a_message_is_its_type() -> None:
    assert describe_exception(TimeoutError()) == "TimeoutError"


def test_an_exception_whose_text_fails_is_still_described() -> None:
    assert describe_exception(Unprintable()) == "Unprintable"
