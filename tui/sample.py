"""A small store shaped like a sweep of ``fixtures/``, for tests, snapshots and screenshots.

Fixed root, times and hashes, so that screens drawn from it are the same on every machine.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from engine.records import Record, Summary
from engine.store import Store

ROOT = "/fixtures"
"""The root every sample record claims (fixed, so snapshots do not depend on tmp paths)."""
MTIME = 1_750_000_000_000_000_000

TEXTS: dict[str, str] = {
    "pdf/report.pdf": "Quarterly report\nRevenue grew.\fPage two: costs\nCosts fell.\fPage three\n"
    "Outlook: quarry more text.\n",
    "office/deck.pptx": "# slide1\nWelcome to textquarry\n# slide2\nWhy text matters\n"
    "# slide3\nQuestions?\n",
    "office/budget.xlsx": "# sheet1\nitem,amount\nstone,12\n# sheet2\ntotal,12\n",
    "text/readme.md": "# Sample folder\n\nEvery kind of file textquarry reads.\n"
    + "A very long line: "
    + "quarry " * 600
    + "\n",
    "text/latin1_no_bom.txt": "Déjà vu in Latin-1, stored as UTF-8.\n",
    "html/page.html": "A page title\nSome paragraph text about quarries.\n",
}


def _sha(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


def sample_records() -> list[Record]:
    """Every status and the common reasons, in ``extract.jsonl`` order."""
    ok = [
        Record(
            ROOT,
            p,
            size=len(t) + 100,
            mtime_ns=MTIME,
            status="ok",
            sha256=_sha(t),
            mime=m,
            extractor=e,
            reader=r,
            v=1,
            chars=len(t),
            pages=pg,
            why="new",
            ms=ms,
            reused=(i % 2 == 1),
        )
        for i, (p, m, e, r, pg, ms) in enumerate(
            [
                ("html/page.html", "text/html", "html", "html", None, 4),
                (
                    "office/budget.xlsx",
                    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                    "openpyxl",
                    "xlsx",
                    2,
                    31,
                ),
                (
                    "office/deck.pptx",
                    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
                    "python-pptx",
                    "pptx",
                    3,
                    55,
                ),
                ("pdf/report.pdf", "application/pdf", "pypdf", "pdf", 3, 120),
                ("text/latin1_no_bom.txt", "text/plain", "text:latin-1", "text", None, 1),
                ("text/readme.md", "text/markdown", "text:utf-8", "text", None, 1),
            ]
        )
        for t in [TEXTS[p]]
    ]
    other = [
        Record(ROOT, "pdf/encrypted.pdf", 2048, MTIME, "error", _sha("enc"), "application/pdf",
               "encrypted", "pypdf", "pdf", 1, error="PDF is encrypted and no password was "
               "given (pypdf: FileNotDecryptedError)", why="retry-error", ms=8),
        Record(ROOT, "pdf/truncated.pdf", 900, MTIME, "error", _sha("trunc"), "application/pdf",
               "corrupt", "pypdf", "pdf", 1, error="startxref not found: the file is "
               "truncated or not a PDF", why="new", ms=5),
        Record(ROOT, "hostile/zipbomb.docx", 40_000, MTIME, "error", _sha("bomb"),
               "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
               "limit", "docx", "docx", 1, error="zip member word/document.xml would "
               "decompress past 64 MiB (limit)", why="new", ms=40),
        Record(ROOT, "pdf/scanned.pdf", 30_000, MTIME, "empty", _sha("scan"), "application/pdf",
               "scanned", "pypdf", "pdf", 1, pages=2, why="new", ms=60),
        Record(ROOT, "text/empty.txt", 0, MTIME, "empty", _sha(""), "text/plain", "no_text",
               "text:utf-8", "text", 1, why="new", reused=True),
        Record(ROOT, "legacy/memo.doc", 12_288, MTIME, "unsupported", _sha("doc"),
               "application/msword", "needs_tool", None, "doc", 1,
               error="needs antiword or catdoc to read legacy Word files",
               needs=("antiword", "catdoc"), tools="t-3f2a", why="new"),
        Record(ROOT, "images/photo.png", 5_000, MTIME, "unsupported", _sha("png"), "image/png",
               "needs_tool", None, "image", 1, error="needs tesseract for OCR",
               needs=("tesseract",), tools="t-3f2a", why="new"),
        Record(ROOT, "bin/tool.exe", 70_000, MTIME, "unsupported", _sha("exe"),
               "application/x-dosexec", "no_reader", error="no reader for "
               "application/x-dosexec", why="new"),
        Record(ROOT, "big/huge.iso", 900 * 2**20, MTIME, "skipped", None,
               "application/x-iso9660-image", "too_large",
               error="900 MiB is over the 512 MiB limit"),
        Record(ROOT, "links/loop", 0, MTIME, "skipped", None, "", "link",
               error="symbolic link (not followed)"),
    ]  # fmt: skip
    return sorted(ok + other, key=lambda r: r.key)


def sample_summary(records: list[Record]) -> Summary:
    """A summary that agrees with ``records``."""
    counts: dict[str, int] = {}
    reasons: dict[str, int] = {}
    for r in records:
        counts[r.status] = counts.get(r.status, 0) + 1
        if r.reason:
            k = f"{r.status}/{r.reason}"
            reasons[k] = reasons.get(k, 0) + 1
    return Summary(
        roots=(ROOT,), files=len(records), counts=counts, reasons=reasons,
        reused=sum(r.reused for r in records), chars=sum(r.chars for r in records),
        tools_found={"pdftotext": "24.02.0"}, tools_missing={"antiword": 1, "catdoc": 1,
        "tesseract": 1}, readers={"pdf": 1, "text": 1}, started="2025-06-15T12:00:00+00:00",
        finished="2025-06-15T12:00:04+00:00", seconds=4.0,
    )  # fmt: skip


def build_sample_store(out: Path) -> Store:
    """Write the sample store into ``out`` and return it."""
    store = Store(out)
    records = sample_records()
    with store.writer():
        for r in records:
            if r.has_text and r.path in TEXTS:
                store.put_text(r.sha256 or "", TEXTS[r.path])
        store.write_records(records)
        store.write_summary(sample_summary(records))
    return store
