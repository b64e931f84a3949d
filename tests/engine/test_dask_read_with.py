"""Tools are part of the read, on a real cluster (issue 27): a Dask worker whose PATH lacks
pdftotext reads the PDFs the fallback way; their records say so, the summary counts them, and
the next sweep with pdftotext reads them again (and nothing else), giving a local sweep's
records and texts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engine.executors import dask_factory, parse_executor
from engine.limits import Limits, MiB
from engine.records import lacked
from engine.store import Store
from engine.sweep import Sweeper, SweepOptions
from engine.tools import ToolSet, discover
from tests.engine.daskkit import distributed, extra_worker, local_cluster, store_lines, texts

pytestmark = pytest.mark.timeout(240)

LIMITS = Limits(timeout_s=5.0, memory_bytes=512 * MiB, max_chars=100_000)
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PDF_TOOLS = ("pdftoppm", "pdftotext", "tesseract")


def _tool_dir(where: Path, names: tuple[str, ...]) -> Path:
    """A folder for ``PATH`` holding links to the named tools (and nothing else)."""
    where.mkdir()
    for name in names:
        found = shutil.which(name)
        assert found is not None
        (where / name).symlink_to(found)
    return where


def _sweep(root: Path, out: Path, tools: ToolSet, address: str | None = None) -> None:
    factory = None
    if address is not None:
        factory = dask_factory(parse_executor("dask://" + address.removeprefix("tcp://")))
    opts = SweepOptions(out=out, limits=LIMITS, workers=2, tools=tools, executor=factory)
    with Sweeper([root], opts) as s:
        s.run()


@pytest.mark.tools
def test_pdfs_a_worker_read_without_pdftotext_are_counted_then_read_again_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("pdftotext") is None:
        pytest.skip("needs pdftotext on PATH (poppler-utils) for the engine's machine")
    root = tmp_path / "docs"
    shutil.copytree(FIXTURES / "pdf", root)
    (root / "note.txt").write_text("a plain note\n")
    monkeypatch.setenv("PATH", str(_tool_dir(tmp_path / "with", ("pdftotext",))))
    here = discover()
    assert here.names == ("pdftotext",)
    store = tmp_path / "store"
    with (
        local_cluster(0) as c,
        extra_worker(c.scheduler_address, {"PATH": str(_tool_dir(tmp_path / "bare", ()))}),
        distributed.Client(c, set_as_default=False) as client,
    ):
        client.wait_for_workers(1, timeout=120)
        _sweep(root, store, here, c.scheduler_address)
    first = {str(r["path"]): r for r in store_lines(store)}
    pdfs = {p for p, r in first.items() if r["reader"] == "pdf"}
    assert pdfs
    # the worker had none of the pdf reader's tools (and this machine has only pdftotext)
    assert {lacked(str(first[p]["read_with"])) for p in pdfs} == {PDF_TOOLS}
    assert first["note.txt"]["read_with"] is None
    summary = Store(store).load_summary()  # every tool the reads lacked is counted
    assert summary is not None and summary.read_without["pdftotext"] == len(pdfs)

    _sweep(root, store, here)  # on this machine, which has pdftotext
    second = {str(r["path"]): r for r in store_lines(store)}
    assert {p for p, r in second.items() if not r["reused"]} == pdfs
    assert {second[p]["why"] for p in pdfs} == {"tools-changed"}
    summary = Store(store).load_summary()  # (pdftoppm and tesseract: lacked here too)
    assert summary is not None and "pdftotext" not in summary.read_without
    _sweep(root, tmp_path / "local", here)  # what one machine with pdftotext gives
    local = {str(r["path"]): r for r in store_lines(tmp_path / "local")}
    keep = ("status", "reason", "extractor", "chars", "read_with")
    assert {p: [r[k] for k in keep] for p, r in second.items()} == {
        p: [r[k] for k in keep] for p, r in local.items()
    }
    assert set(texts(tmp_path / "local").items()) <= set(texts(store).items())
