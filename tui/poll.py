"""Following a store another process writes: re-read it and find what changed.

``quarry ui --store PATH`` has no session; the app polls ``extract.jsonl``'s mtime and size,
and when they move it calls :func:`diff_store` in a thread worker. The writer replaces the
file atomically, so a read sees the old file or the new one, never half.
"""

from __future__ import annotations

from array import array

from engine.store import Store
from tui.loader import Chunk, jsonl_stamp, load_rows, read_jsonl
from tui.messages import StoreChanged
from tui.model import R_PATH, R_ROOT, RecordModel


def _line(data: bytes, start: int) -> bytes:
    end = data.find(b"\n", start)
    return data[start : end if end >= 0 else len(data)]


def diff_store(store: Store, model: RecordModel) -> StoreChanged:
    """Read ``store`` again; compare each line with what ``model`` holds for its key."""
    stamp = jsonl_stamp(store)
    data = read_jsonl(store)
    rows: list[tuple[object, ...]] = []
    starts: array[int] = array("q")
    for chunk in load_rows(data, chunk_rows=1 << 30):
        rows.extend(chunk.rows)
        starts.extend(chunk.starts)
    changed: set[tuple[str, str]] = set()
    old_data, ids, live = model.data, dict(model.ids), dict(model.live)
    for row, start in zip(rows, starts, strict=True):
        key = (row[R_ROOT], row[R_PATH])
        rid = ids.get(key)  # type: ignore[call-overload]
        if rid is None:
            changed.add(key)  # type: ignore[arg-type]
            continue
        new_line = _line(data, start)
        if rid in live:
            if live[rid].to_json() != new_line:
                changed.add(key)  # type: ignore[arg-type]
        elif _line(old_data, model.starts[rid]) != new_line:
            changed.add(key)  # type: ignore[arg-type]
    return StoreChanged(
        Chunk(rows, starts, len(data), len(data)), data, changed, store.load_summary(), stamp
    )
