"""PDFs as text: web_fetch against a local server, pdf_text's bounds, encrypted and broken
files, and PDF bombs (a huge page tree, a stream that inflates to gigabytes)."""

from __future__ import annotations

import io
import re
import sys
import zlib
from pathlib import Path

import pytest

from skillkit.runtime.output import OutputLimits
from skillkit.secrets import Redactor
from skillkit.tools.base import ToolContext, ToolError, ToolResult
from skillkit.tools.builtin.netguard import AddressPolicy
from skillkit.tools.builtin.pdftext import PdfError, looks_like_pdf, pdf_text
from skillkit.tools.builtin.read import ReadTool
from skillkit.tools.builtin.webfetch import (
    FetchError,
    Redirected,
    WebFetchSettings,
    WebFetchTool,
    fetch_page,
)
from skillkit.tools.builtin.workspace import Workspace

from .webserver import send, serve

pytestmark = pytest.mark.timeout(60)

pypdf = pytest.importorskip("pypdf")

LOCAL = AddressPolicy(networks=("127.0.0.2/32",))


def build_pdf(objects: list[bytes], *, root: int = 1, info: int | None = None) -> bytes:
    """A PDF file holding ``objects`` (numbered from 1), with a correct cross-reference
    table, so every offset below is checked by the reader, not guessed."""
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    trailer = b"trailer\n<< /Size %d /Root %d 0 R" % (len(objects) + 1, root)
    if info is not None:
        trailer += b" /Info %d 0 R" % info
    out.write(trailer + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref)
    return out.getvalue()


def stream(data: bytes, *, compress: bool = False) -> bytes:
    if compress:
        data = zlib.compress(data, 9)
        return (
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + (b"\nendstream")
        )
    return b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


def text_pdf(pages: list[str], title: str = "") -> bytes:
    """A PDF whose pages show ``pages`` in Helvetica (objects: catalog, page tree, font,
    info, then a page and its content stream per page)."""
    kids = b" ".join(b"%d 0 R" % (5 + 2 * i) for i in range(len(pages)))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(pages)),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Title (%s) >>" % title.encode(),
    ]
    for i, line in enumerate(pages):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (6 + 2 * i)
        )
        objects.append(stream(b"BT /F1 18 Tf 72 700 Td (%s) Tj ET" % line.encode()))
    return build_pdf(objects, info=4)


def settings(**changes: object) -> WebFetchSettings:
    base: dict[str, object] = {"policy": LOCAL, "timeout": 20.0}
    base.update(changes)
    return WebFetchSettings(**base)  # type: ignore[arg-type]


async def run(tool: WebFetchTool, **arguments: object) -> ToolResult:
    args = tool.args_model.model_validate(arguments)
    return await tool.execute(args, ToolContext("call_1", tool.name))


def test_the_fixture_is_a_pdf_pypdf_reads() -> None:
    reader = pypdf.PdfReader(io.BytesIO(text_pdf(["Hello PDF", "Second page"], "Report")))
    assert len(reader.pages) == 2
    assert reader.pages[0].extract_text().strip() == "Hello PDF"
    assert reader.metadata.title == "Report"


async def test_a_pdf_page_becomes_text_between_untrusted_markers() -> None:
    body = text_pdf(["Quarterly revenue rose 12 percent", "Outlook: steady"], "Q3 report")
    routes = {"/r.pdf": lambda h: send(h, body, content_type="application/pdf")}
    with serve(routes) as server:
        result = await run(WebFetchTool(settings(), redactor=Redactor()), url=server.url("/r.pdf"))
    text = result.output
    assert not result.is_error
    assert text.startswith(f'<web_content source="{server.url("/r.pdf")}" trust="untrusted">')
    assert "# Q3 report" in text
    assert "(PDF document, 2 pages)" in text
    assert "--- page 1 ---\nQuarterly revenue rose 12 percent" in text
    assert "--- page 2 ---\nOutlook: steady" in text
    assert result.details["content_type"] == "application/pdf"
    assert result.details["cut"] is False


@pytest.mark.parametrize("content_type", ["application/octet-stream", ""])
async def test_a_pdf_served_untyped_is_known_by_its_magic_bytes(content_type: str) -> None:
    body = text_pdf(["Magic bytes page"])
    routes = {"/file": lambda h: send(h, body, content_type=content_type)}
    with serve(routes) as server:
        found = await fetch_page(server.url("/file"), settings())
    assert not isinstance(found, Redirected)
    assert found.content_type == "application/pdf"
    assert "Magic bytes page" in found.text


async def test_octet_stream_that_is_not_a_pdf_is_refused() -> None:
    routes = {"/b": lambda h: send(h, b"\0\1\2 data", content_type="application/octet-stream")}
    with serve(routes) as server, pytest.raises(FetchError, match="binary data, not text or a PDF"):
        await fetch_page(server.url("/b"), settings())


async def test_a_long_pdf_is_cut_to_the_same_budget_with_a_note() -> None:
    body = text_pdf([f"Page number {n} " + "words " * 40 for n in range(1, 201)])
    routes = {"/long.pdf": lambda h: send(h, body, content_type="application/pdf")}
    with serve(routes) as server:
        tool = WebFetchTool(settings(max_chars=2_000), redactor=Redactor())
        result = await run(tool, url=server.url("/long.pdf"))
    text = result.output
    assert "--- page 1 ---" in text
    assert "Page number 200" not in text
    assert re.search(r"\[note: pages \d+-200 were not read \(the text was already long\)\]", text)
    assert re.search(r"\[note: the text was cut to its first 2000 of \d+ characters\]", text)
    assert result.details["cut"] is True


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"%PDF-1.7\n1 0 obj << /Type /Catalog", "the PDF could not be read"),
        (b"%PDF-1.4\n" + b"\xff" * 500, "the PDF could not be read"),
        (b"<html>not a pdf</html>", "not a PDF"),
    ],
)
def test_a_broken_pdf_is_one_line(data: bytes, why: str) -> None:
    with pytest.raises(PdfError, match=why) as caught:
        pdf_text(data)
    assert "\n" not in str(caught.value)
    assert "Traceback" not in str(caught.value)


def _encrypted(user_password: str) -> bytes:
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(text_pdf(["Secret text"]))))
    writer.encrypt(user_password, "owner-password", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


async def test_an_encrypted_pdf_is_answered_with_one_line() -> None:
    body = _encrypted("letmein")
    routes = {"/e.pdf": lambda h: send(h, body, content_type="application/pdf")}
    with serve(routes) as server, pytest.raises(ToolError) as caught:
        await run(WebFetchTool(settings(), redactor=Redactor()), url=server.url("/e.pdf"))
    message = str(caught.value)
    assert message.endswith("the PDF is encrypted and needs a password; its text cannot be read")
    assert "\n" not in message


def test_a_pdf_encrypted_without_a_user_password_is_read() -> None:
    found = pdf_text(_encrypted(""))
    assert "Secret text" in found.text


def test_a_page_tree_bomb_is_stopped_by_a_limit() -> None:
    # Each level's Kids point 1,000 times at the level below: four small objects claim a
    # billion pages. The reader stops at its page-tree limits or at max_pages — a limit
    # on the tree, not the time budget (out of reach here): without one it would walk a
    # billion entries until the test's timeout.
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count 1000000000 >>" % (b"3 0 R " * 1000),
        b"<< /Type /Pages /Parent 2 0 R /Kids [%s] /Count 1000000 >>" % (b"4 0 R " * 1000),
        b"<< /Type /Pages /Parent 3 0 R /Kids [%s] /Count 1000 >>" % (b"5 0 R " * 1000),
        b"<< /Type /Page /Parent 4 0 R /MediaBox [0 0 612 792] /Contents 6 0 R "
        b"/Resources << /Font << /F1 7 0 R >> >> >>",
        stream(b"BT /F1 12 Tf 72 700 Td (bomb page) Tj ET"),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    data = build_pdf(objects)
    assert len(data) < 20_000
    try:
        found = pdf_text(data, max_pages=50, seconds=3600)
    except PdfError as exc:
        assert "\n" not in str(exc)
        assert "limit" in str(exc).lower()  # the reader's page-tree limit refused it
    else:
        assert found.pages_read == 50
        assert found.notes[0].startswith("only the first 50 of")


def test_a_stream_that_inflates_to_gigabytes_is_bounded() -> None:
    # 750 MB of text operators compress to a few MB; the per-stream limit stops them:
    # the bomb's page is a page that could not be read, the next page is read as usual
    # (the time budget, out of reach here, plays no part).
    packer = zlib.compressobj(9)
    chunk = b"BT /F1 12 Tf (x) Tj ET " * (1 << 15)
    packed = b"".join(packer.compress(chunk) for _ in range(1024)) + packer.flush()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R 5 0 R] /Count 2 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 7 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed) + packed + b"\nendstream",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 6 0 R "
        b"/Resources << /Font << /F1 7 0 R >> >> >>",
        stream(b"BT /F1 12 Tf 72 700 Td (after the bomb) Tj ET"),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    data = build_pdf(objects)
    found = pdf_text(data, seconds=3600)
    assert found.pages_read == 2
    assert found.text.endswith("--- page 2 ---\nafter the bomb")
    assert found.notes == ("the text of page(s) 1 could not be read",)


def test_pages_past_the_time_budget_are_left_out_with_a_note() -> None:
    found = pdf_text(text_pdf([f"page {n}" for n in range(30)]), seconds=0.0)
    assert found.pages_read == 1
    assert found.notes[0].startswith("reading stopped after 0 s; pages 2-30 were not read")


async def test_without_the_extra_a_pdf_is_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pypdf", None)  # import pypdf now fails
    body = text_pdf(["never read"])
    routes = {
        "/typed.pdf": lambda h: send(h, body, content_type="application/pdf"),
        "/untyped": lambda h: send(h, body, content_type=""),
    }
    with serve(routes) as server:
        for path in ("/typed.pdf", "/untyped"):
            with pytest.raises(FetchError) as caught:
                await fetch_page(server.url(path), settings())
            assert str(caught.value) == (
                "the page is a PDF; PDF text needs the pdf extra: pip install 'skillkit-agent[pdf]'"
            )


def test_magic_bytes() -> None:
    assert looks_like_pdf(b"%PDF-1.4\n")
    assert looks_like_pdf(b"\n\n  %PDF-2.0")
    assert not looks_like_pdf(b"<html>")


async def test_read_gives_a_local_pdf_as_text(tmp_path: Path) -> None:
    (tmp_path / "notes.pdf").write_bytes(text_pdf(["Local PDF text", "More"]))
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\n\0\0 truncated")
    tool = ReadTool(Workspace(tmp_path), OutputLimits())
    args = tool.args_model.model_validate({"path": "notes.pdf"})
    result = await tool.execute(args, ToolContext("call_1", "read"))
    assert result.output.startswith("(PDF document, 2 pages)\n\n--- page 1 ---\nLocal PDF text")
    assert result.details["pages_read"] == 2
    broken = tool.args_model.model_validate({"path": "broken.pdf"})
    with pytest.raises(ToolError, match=r"^broken.pdf: the PDF could not be read") as caught:
        await tool.execute(broken, ToolContext("call_2", "read"))
    assert "\n" not in str(caught.value)
