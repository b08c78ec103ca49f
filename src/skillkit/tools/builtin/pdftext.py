"""PDF documents as text, for ``web_fetch`` and ``read``.

The text is extracted by pypdf, an optional dependency (``pip install
'skillkit-agent[pdf]'``); without it `pdf_text` raises `PdfError` with one line naming
the extra. What a caller may rely on:

- every failure — a document that is encrypted (and does not open with the empty
  password), broken, or not a PDF at all — is a `PdfError` with one line, never a
  traceback;
- the work is bounded: pages are read in order until ``max_chars`` characters,
  ``max_pages`` pages or ``seconds`` seconds are reached (checked between pages), and
  each page's streams are decoded under pypdf's resource limits, lowered here to
  ``_STREAM_BYTES`` per stream, so a small file that claims a million pages or
  inflates to gigabytes stops early with a note saying what was left out.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

__all__ = ["PDF_EXTRA_HINT", "PdfError", "PdfText", "looks_like_pdf", "pdf_available", "pdf_text"]

PDF_EXTRA_HINT = "PDF text needs the pdf extra: pip install 'skillkit-agent[pdf]'"

PDF_MEDIA_TYPES = frozenset({"application/pdf", "application/x-pdf"})

_STREAM_BYTES = 16_000_000
"""The most bytes one stream of the document may decode to."""


class PdfError(Exception):
    """A PDF that gave no text; the message says why in one line."""


@dataclass(frozen=True)
class PdfText:
    """The text of a PDF's first ``pages_read`` pages (of ``page_count``), page by page
    under ``--- page N ---`` lines; ``notes`` say what was left out and why."""

    text: str
    title: str
    page_count: int
    pages_read: int
    notes: tuple[str, ...] = ()


def looks_like_pdf(head: bytes) -> bool:
    """Whether ``head`` (a document's first bytes) starts a PDF: the ``%PDF-`` header in
    the first kilobyte, as readers accept it."""
    return b"%PDF-" in head[:1024]


def pdf_available() -> bool:
    """Whether the PDF reader (pypdf) is installed."""
    try:
        import pypdf  # noqa: F401
    except ImportError:
        return False
    return True


def pdf_text(
    data: bytes, *, max_chars: int = 60_000, max_pages: int = 500, seconds: float = 20.0
) -> PdfText:
    """The text of the PDF ``data`` (see the module docs). Blocking: run it in a thread.
    Raises `PdfError` for anything that gives no text."""
    try:
        import pypdf
    except ImportError:
        raise PdfError(f"no PDF reader is installed; {PDF_EXTRA_HINT}") from None
    if not looks_like_pdf(data):
        raise PdfError("the document is not a PDF (no %PDF- header)")
    try:
        with pypdf.apply_configuration(
            maximum_declared_stream_length=_STREAM_BYTES,
            array_based_stream_maximum_output_length=_STREAM_BYTES,
            zlib_maximum_output_length=_STREAM_BYTES,
            lzw_maximum_output_length=_STREAM_BYTES,
            run_length_maximum_output_length=_STREAM_BYTES,
            brotli_maximum_output_length=_STREAM_BYTES,
            jbig2_maximum_output_length=_STREAM_BYTES,
            stream_decoding_work_maximum_length=4 * _STREAM_BYTES,
            image_maximum_buffer_size=_STREAM_BYTES,
            jbig2dec_binary=None,
        ):
            return _extract(data, max_chars, max_pages, seconds)
    except PdfError:
        raise
    except RecursionError:
        raise PdfError("the PDF is nested too deeply to read") from None
    except MemoryError:
        raise PdfError("the PDF needs more memory than is allowed to read") from None
    except Exception as exc:
        raise PdfError(f"the PDF could not be read: {_one_line(exc)}") from None


def _extract(data: bytes, max_chars: int, max_pages: int, seconds: float) -> PdfText:
    import io
    import logging

    from pypdf import PdfReader

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # broken files warn on every object
    deadline = time.monotonic() + seconds
    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        try:
            opened = bool(reader.decrypt(""))
        except Exception:
            opened = False
        if not opened:
            raise PdfError("the PDF is encrypted and needs a password; its text cannot be read")
    count = len(reader.pages)
    title = ""
    try:
        meta = reader.metadata
        if meta is not None and isinstance(meta.title, str):
            title = " ".join(meta.title.split())
    except Exception:
        title = ""
    parts: list[str] = []
    chars = 0
    read = 0
    stopped = ""
    failed: list[int] = []
    for number in range(count):
        if read >= max_pages:
            stopped = f"only the first {max_pages} of {count} pages were read"
            break
        if chars > max_chars:
            stopped = f"pages {read + 1}-{count} were not read (the text was already long)"
            break
        if read and time.monotonic() > deadline:
            stopped = f"reading stopped after {seconds:g} s; pages {read + 1}-{count} were not read"
            break
        try:
            page_text = reader.pages[number].extract_text() or ""
        except (RecursionError, MemoryError):
            raise
        except Exception:
            failed.append(number + 1)
            page_text = ""
        read += 1
        piece = f"--- page {number + 1} ---\n{page_text.strip()}"
        parts.append(piece)
        chars += len(piece) + 2
    notes: list[str] = []
    if stopped:
        notes.append(stopped)
    if failed:
        shown = ", ".join(str(n) for n in failed[:10]) + (" ..." if len(failed) > 10 else "")
        notes.append(f"the text of page(s) {shown} could not be read")
    text = "\n\n".join(parts)
    if read and not any(p.split("\n", 1)[1] for p in parts):
        notes.append("the pages hold no extractable text (a scanned PDF is images)")
    return PdfText(text, title, count, read, tuple(notes))


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:200]
    return text or type(exc).__name__
