"""``quarry retry`` in a big store holds no record but those it retries: its targets are
ranges of the index's keys and its run is served by the index, the store's tally taken from
the summary when the index's counts agree with it (one file's retry loaded every record,
twice: 680 MB at 200,000 records). The summary it writes is the one a recount gives."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from engine.cli import main
from engine.records import Summary
from engine.store import Store
from engine.summary import build_summary
from engine.sweep import SweepOptions, sweep
from engine.tools import ToolSet

NO_TOOLS = SweepOptions(tools=ToolSet(()))


def _folder(root: Path) -> Path:
    for i in range(12):
        sub = root / f"d{i % 3}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"n{i}.txt").write_text(f"note {i} with enough words to be judged a text\n")
    (root / "d0" / "empty.txt").write_text("")
    (root / "d1" / "odd.xyz").write_bytes(b"\x00\x01 no reader for this")
    return root


def _recounted(store: Store) -> Summary:
    summary = store.load_summary()
    assert summary is not None
    return build_summary(store.load_records(), summary.roots, ToolSet(()), 0, 0, readers={})


def _same_tally(a: Summary, b: Summary) -> None:
    fields = ("files", "counts", "reasons", "reused", "chars", "quality", "read_without")
    fields += ("tools_missing",)
    assert {f: getattr(a, f) for f in fields} == {f: getattr(b, f) for f in fields}


@pytest.fixture
def refused_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every load of the whole ``extract.jsonl`` noted (a served retry makes none)."""
    loads: list[str] = []
    real = Store.load

    def noted(self: Store) -> object:
        loads.append(str(self.out))
        return real(self)

    monkeypatch.setattr(Store, "load", noted)
    return loads


def test_a_retry_loads_no_record_and_writes_the_summary_a_recount_gives(
    tmp_path: Path, refused_loads: list[str]
) -> None:
    root = _folder(tmp_path / "docs")
    sweep([root], NO_TOOLS)
    store = Store(root / ".quarry")
    (root / "d0" / "n0.txt").write_text("")  # ok -> empty
    (root / "d0" / "empty.txt").write_text("now it has words in it, enough of them\n")
    (root / "d2" / "new.txt").write_text("a file the store has not seen yet\n")

    for target in ("d0/n0.txt", "d0/empty.txt", "d2"):
        refused_loads.clear()
        assert main(["retry", "--no-external", str(root / target)]) == 0
        assert refused_loads == []
        _same_tally(store.load_summary() or Summary(()), _recounted(store))

    records = {r.path: r for r in store.load_records()}
    assert (records["d0/n0.txt"].status, records["d0/empty.txt"].status) == ("empty", "ok")
    assert "d2/new.txt" in records


def test_a_summary_that_disagrees_with_the_index_is_not_trusted(
    tmp_path: Path, refused_loads: list[str]
) -> None:
    """Counts a hand or another writer changed: the retry loads the records and counts them,
    as before, and its summary is right again."""
    root = _folder(tmp_path / "docs")
    sweep([root], NO_TOOLS)
    store = Store(root / ".quarry")
    path = store.out / "extract.summary.json"
    data = orjson.loads(path.read_bytes())
    data["counts"]["ok"] += 5
    path.write_bytes(orjson.dumps(data))

    assert main(["retry", "--no-external", str(root / "d1" / "n1.txt")]) == 0
    assert refused_loads  # (loaded: the summary's tally was not taken)
    _same_tally(store.load_summary() or Summary(()), _recounted(store))
