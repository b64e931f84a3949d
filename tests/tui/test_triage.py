"""The triage data without a screen: normalised messages, error groups, tools rows, the log."""

from __future__ import annotations

from engine.events import Notice, NoticeKind, Progress, RecordsChanged, SweepStarted, ToolsChanged
from engine.records import Record
from engine.tools import KNOWN_TOOLS, Tool, ToolSet
from tui.eventlog import ActivityLog
from tui.model import RecordModel
from tui.sample import sample_records
from tui.triage import (
    error_records,
    found_from_summary,
    found_from_toolset,
    group_errors,
    group_unsupported,
    install_hint,
    normalise,
    tool_rows,
    tools_waited_on,
    unsupported_records,
    waiting_records,
)


def _err(path: str, message: str, reason: str = "corrupt", mime: str = "x/y") -> Record:
    return Record("/r", path, 1, 0, "error", mime=mime, reason=reason, error=message)


def test_normalise_takes_out_names_paths_offsets_and_numbers() -> None:
    a = normalise("Bad CRC-32 for file 'word/document.xml'")
    b = normalise("Bad CRC-32 for file 'word/styles.xml'")
    assert a == b == "Bad CRC-32 for file '…'"
    assert normalise("zip member word/media/image1.png would decompress past 64 MiB") == (
        "zip member <path> would decompress past # MiB"
    )
    assert normalise("bad xref at offset 0x1F3A in /home/u/a.pdf") == (
        "bad xref at offset <hex> in <path>"
    )
    assert normalise("page 12 of 30: stream 4,096 bytes") == "page # of #: stream # bytes"
    assert normalise("PDF-1.4 header, UTF-8") == "PDF-1.4 header, UTF-8"
    assert normalise(None) == normalise("") == "(no message)"


def test_groups_are_by_reason_and_message_largest_first() -> None:
    records = [
        _err("a.docx", "Bad CRC-32 for file 'word/document.xml'", mime="docx"),
        _err("b.pdf", "needs a password", reason="encrypted", mime="pdf"),
        _err("c.docx", "Bad CRC-32 for file 'word/styles.xml'", mime="docx"),
        _err("d.xlsx", "Bad CRC-32 for file 'xl/workbook.xml'", mime="xlsx"),
        _err("e.docx", "Bad CRC-32 for file 'word/x.xml'", reason="limit", mime="docx"),
        Record("/r", "ok.txt", 1, 0, "ok"),
    ]
    groups = group_errors(records)
    assert [(g.reason, g.count) for g in groups] == [
        ("corrupt", 3),
        ("encrypted", 1),
        ("limit", 1),
    ]
    top = groups[0]
    assert top.message == "Bad CRC-32 for file '…'"
    assert [k[1] for k in top.keys] == ["a.docx", "c.docx", "d.xlsx"]
    assert top.mime_text() == "docx, xlsx"
    assert top.example_path == "a.docx" and "word/document.xml" in top.example


def test_model_records_by_status_and_waiting() -> None:
    model = RecordModel()
    model.apply(sample_records())
    assert {r.path for r in error_records(model)} == {
        "hostile/zipbomb.docx",
        "pdf/encrypted.pdf",
        "pdf/truncated.pdf",
    }
    # the records that name a tool that would unlock them (the sample's scanned PDF names
    # none: no tool retries it, and `quarry tools` does not count it)
    assert {r.path for r in waiting_records(model)} == {"images/photo.png", "legacy/memo.doc"}


def test_tool_rows_list_every_known_tool_with_files_and_hints() -> None:
    model = RecordModel()
    model.apply(sample_records())
    found = found_from_toolset(ToolSet((Tool("pdftotext", "/usr/bin/pdftotext", "24.02.0"),)))
    rows = tool_rows(found, waiting_records(model))
    assert {r.name for r in rows} == set(KNOWN_TOOLS)
    by_name = {r.name: r for r in rows}
    assert by_name["pdftotext"].found and by_name["pdftotext"].path == "/usr/bin/pdftotext"
    assert [k[1] for k in by_name["antiword"].files] == ["legacy/memo.doc"]
    assert [k[1] for k in by_name["tesseract"].files] == ["images/photo.png"]
    assert by_name["tesseract"].install["debian"] == "sudo apt install tesseract-ocr"
    assert rows[-1].found  # found tools last; missing ones with most files first
    assert not rows[0].found and rows[0].files
    assert {r.name for r in tools_waited_on(rows)} == {"antiword", "catdoc", "tesseract"}
    assert found_from_summary({"tesseract": "5.3"}) == {"tesseract": ("5.3", "-")}


def test_activity_log_describes_events_and_stays_bounded() -> None:
    log = ActivityLog(limit=5)
    ok = Record("/r", "a.txt", 1, 0, "ok", chars=12, why="new")
    bad = _err("b.pdf", "needs a password", reason="encrypted")
    reused = Record("/r", "c.txt", 1, 0, "ok", reused=True)
    lines = log.add(
        [
            SweepStarted(0.0, ("/r",), 3, 10),
            Progress(0.5, 1, 3, 1, 10, "a.txt"),
            RecordsChanged(1.0, (ok, bad, reused), (("/r", "gone.txt"),)),
            ToolsChanged(2.0, ("tesseract",), ("tesseract",), ()),
            Notice(3.0, NoticeKind.POLLING, "native watching failed; polling every 2 s", "warning"),
        ]
    )
    kinds = [line.kind for line in lines]  # the reused file, inside a sweep, has no line
    assert kinds == ["sweep", "extracted", "error", "removed", "tools", "notice"]
    assert lines[1].text == "a.txt → ok · 12 chars [new]"
    one = ActivityLog().add([RecordsChanged(1.0, (ok.evolve(path="one.txt", chars=1),))])
    assert one[0].text == "one.txt → ok · 1 char [new]"  # (it said "1 chars")
    assert "needs a password" in lines[2].text
    assert lines[4].text == "found tesseract"
    assert log.total == 6 and len(log.lines) == 6  # 4 routine lines, the error, the warning
    log.add([RecordsChanged(4.0 + i, (ok.evolve(path=f"n{i}.txt"),)) for i in range(20)])
    assert log.lines[0].kind == "error" and log.lines[1].kind == "notice"  # never let go
    assert sum(not line.kept for line in log.lines) <= 5 and log.dropped == 26 - len(log.lines)


def test_unsupported_groups_by_reason_and_mime_with_what_unlocks_them() -> None:
    def unsupported(path: str, mime: str, reason: str, needs: tuple[str, ...] = ()) -> Record:
        error = f"needs {' or '.join(needs)}" if needs else f"no reader for {mime}"
        return Record("/r", path, 1, 0, "unsupported", mime=mime, reason=reason, error=error,
                      needs=needs)  # fmt: skip

    records = [
        unsupported("a.exe", "application/x-dosexec", "no_reader"),
        unsupported("b.png", "image/png", "needs_tool", ("tesseract",)),
        unsupported("c.doc", "application/msword", "needs_tool", ("antiword", "catdoc")),
        unsupported("d.png", "image/png", "needs_tool", ("tesseract",)),
        unsupported("e.doc", "application/msword", "needs_tool", ("catdoc",)),
        unsupported("f.png", "image/png", "needs_tool", ("tesseract",)),
        _err("g.pdf", "broken"),
        Record("/r", "ok.txt", 1, 0, "ok"),
    ]
    groups = group_unsupported(records)
    assert [(g.reason, g.mime, g.count) for g in groups] == [
        ("needs_tool", "image/png", 3),
        ("needs_tool", "application/msword", 2),
        ("no_reader", "application/x-dosexec", 1),
    ]
    png, doc, exe = groups
    assert png.unlock == "install tesseract" and png.example_path == "b.png"
    assert doc.unlock == "install catdoc or antiword"  # the tool more of them name first
    assert exe.unlock == "nothing: no reader for it yet"
    assert exe.example == "no reader for application/x-dosexec"
    assert png.keys == [("/r", "b.png"), ("/r", "d.png"), ("/r", "f.png")]
    assert png.ident == ("needs_tool", "image/png")
    # the command that installs them here, each package once (xls2csv comes with catdoc),
    # nothing for a machine no hint fits
    assert install_hint(["tesseract"], "debian") == "sudo apt install tesseract-ocr"
    assert install_hint(["catdoc", "antiword", "xls2csv"], "fedora") == (
        "sudo dnf install catdoc; sudo dnf install antiword"
    )
    assert install_hint(["tesseract"], None) == "" and install_hint(["nosuch"], "debian") == ""


def test_model_unsupported_records() -> None:
    model = RecordModel()
    model.apply(sample_records())
    assert sorted(r.path for r in unsupported_records(model)) == [
        "bin/tool.exe", "images/photo.png", "legacy/memo.doc",
    ]  # fmt: skip
