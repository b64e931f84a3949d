"""The dashboard's activity log says what the default exclusions left out, as the sweep's
printed table does: on loading a store and when a full sweep ends, not at every watch batch."""

from __future__ import annotations

from engine.events import SweepFinished
from engine.records import Summary
from tui.eventlog import describe, store_lines

LEFT = {"*.tmp": 2, ".DS_Store": 1, ".git/": 1}


def _summary(left_out: dict[str, int]) -> Summary:
    return Summary(roots=("/r",), files=3, counts={"ok": 3}, left_out=left_out)


def test_a_store_and_a_full_sweep_say_what_was_left_out() -> None:
    loaded = [line.text for line in store_lines(_summary(LEFT))]
    want = "left out by default: 3 files (*.tmp 2, .DS_Store 1), 1 folder (.git/ 1)"
    assert any(text.startswith(want) for text in loaded), loaded
    swept = [line.text for line in describe(SweepFinished(1.0, _summary(LEFT), 3, 0, True))]
    assert any(text.startswith(want) for text in swept), swept


def test_nothing_left_out_and_watch_batches_add_no_line() -> None:
    assert not any("left out" in line.text for line in store_lines(_summary({})))
    batch = describe(SweepFinished(1.0, _summary(LEFT), 1, 0, False))
    assert not any("left out" in line.text for line in batch)
