"""What ``quarry sweep`` shows on a terminal while it works, rendered from sequences of engine
events: files done of total (not bytes), files/s, and a time left that slow OCR reads of
small scans do not fool."""

from __future__ import annotations

import io
import re

from hypothesis import given
from hypothesis import strategies as st

from engine.console import WINDOW_S, Estimate, Rates, SweepReporter, how_decided, progress_text
from engine.events import Progress, RecordsChanged, SweepFinished, SweepStarted
from engine.records import Summary

MB = 1 << 20


def _event(at: float, done: int, total: int, bytes_done: int, bytes_total: int) -> Progress:
    return Progress(at, done, total, bytes_done, bytes_total, f"f{done}")


def _mixed_sweep() -> tuple[Rates, int, int]:
    """Ten big PDFs with a text layer read at one a second (10 MB each), then ten scans of
    100 KB each left for OCR: most bytes are done, most of the time is not."""
    total, bytes_total = 20, 10 * 10 * MB + 10 * 100 * 1024
    rates = Rates(0.0, total, bytes_total)
    for i in range(1, 11):
        rates.add(_event(float(i), i, total, i * 10 * MB, bytes_total))
    return rates, total, bytes_total


def test_the_time_left_counts_the_files_left_not_only_the_bytes() -> None:
    rates, _total, _bytes = _mixed_sweep()
    est = rates.estimate(10.0)
    assert est.done == 10 and est.total == 20
    assert est.files_per_s is not None and abs(est.files_per_s - 1.0) < 1e-9
    # the bytes left (1 MB at 10 MB/s) would say 0:00:00; ten files at one a second say 10 s
    assert est.left_s is not None and est.left_s >= 10.0
    assert progress_text(est) == "10/20 files  1.0 files/s  0:00:10 left"


def test_a_read_that_ends_no_file_makes_the_time_left_grow_not_stick() -> None:
    rates, total, bytes_total = _mixed_sweep()
    lefts = []
    for now in (10.0, 15.0, 30.0, 60.0, 120.0):  # one OCR read, no event all along
        est = rates.estimate(now)
        assert est.left_s is not None
        lefts.append(est.left_s)
    assert lefts == sorted(lefts) and lefts[-1] > 5 * lefts[0]
    # the scans then end one every 10 s: the recent rate, not the PDFs', says what is left
    at = 120.0
    for i in range(11, 14):
        at += 10.0
        rates.add(_event(at, i, total, 100 * MB + (i - 10) * 100 * 1024, bytes_total))
    est = rates.estimate(at)
    assert est.files_per_s is not None and est.files_per_s <= 0.15
    assert est.left_s is not None and est.left_s >= 7 * 10 * 0.9  # seven scans at ~10 s each


def test_before_any_file_ends_nothing_is_guessed() -> None:
    rates = Rates(100.0, 818, 38_493_926)
    est = rates.estimate(105.0)
    assert est == Estimate(0, 818, None, None)
    assert progress_text(est) == "0/818 files  -- files/s  -:--:-- left"


def test_the_time_before_the_first_file_ends_does_not_weigh_on_the_rate() -> None:
    # 5 s of walk and workers starting, then ten files a second
    rates = Rates(0.0, 1000, 1000 * 1000)
    rates.add(_event(5.0, 1, 1000, 1000, 1000 * 1000))
    assert rates.estimate(5.5).left_s is None  # one file tells no rate yet
    rates.add(_event(6.0, 11, 1000, 11 * 1000, 1000 * 1000))
    est = rates.estimate(6.0)
    assert est.files_per_s == 10.0 and est.left_s is not None and 98 <= est.left_s <= 99
    # a first read that never ends: once it is all there is, the whole time counts
    slow = Rates(0.0, 10, 10)
    slow.add(_event(1.0, 1, 10, 1, 10))
    assert slow.estimate(WINDOW_S / 2).left_s is None
    late = slow.estimate(WINDOW_S * 3)
    assert late.left_s is not None and late.left_s >= 9 * WINDOW_S * 3 * 0.99


@given(
    st.lists(
        st.tuples(st.floats(0, 2 * WINDOW_S), st.integers(0, 5), st.integers(0, 10 * MB)),
        max_size=40,
    ),
    st.floats(0, 3 * WINDOW_S),
)
def test_any_sequence_gives_a_sane_estimate(
    steps: list[tuple[float, int, int]], wait: float
) -> None:
    total = sum(n for _dt, n, _b in steps) + 3
    bytes_total = sum(b for _dt, _n, b in steps) + 1
    rates = Rates(0.0, total, bytes_total)
    at, done, bytes_done = 0.0, 0, 0
    for dt, n, b in steps:
        at, done, bytes_done = at + dt, done + n, bytes_done + b
        rates.add(_event(at, done, total, bytes_done, bytes_total))
    est = rates.estimate(at + wait)
    assert (est.done, est.total) == (done, total)
    if est.left_s is not None:
        assert est.files_per_s is not None and est.files_per_s > 0 and est.left_s >= 0
        files_left_s = (total - done) / est.files_per_s
        assert est.left_s >= files_left_s - 1e-6  # never less than the files left take
    assert re.fullmatch(r"[\d,]+/[\d,]+ files  \S+ files/s  \d+:\d\d:\d\d left|.*-:--:-- left",
                        progress_text(est))  # fmt: skip


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_terminal_bar_shows_files_of_total_not_bytes() -> None:
    stream = _Tty()
    reporter = SweepReporter(stream)
    reporter(SweepStarted(0.0, ("/r",), 818, 38_493_926))
    for i in range(1, 4):
        reporter(_event(float(i), i, 818, i * 7_000_000, 38_493_926))
    reporter.console.width = 120
    progress = reporter._progress
    assert progress is not None
    with progress._lock:
        shown = "".join(seg.text for seg in reporter.console.render(progress.get_renderable()))
    assert "3/818 files" in shown and "files/s" in shown and " left" in shown
    assert "38493926" not in shown and "21000000" not in shown
    reporter(SweepFinished(4.0, Summary(roots=("/r",), files=818), 3, 0))
    assert reporter._progress is None


def test_read_reused_and_the_rest_add_up_to_the_files() -> None:
    assert how_decided(818, 3, 800) == "read 3, reused 800, 15 not read (empty, skipped)"
    assert how_decided(5, 5, 0) == "read 5, reused 0"


def test_a_log_says_a_sweep_s_files_and_bytes_as_people_say_them() -> None:
    """Not on a terminal (a log, ``watch`` under a service manager): one line a sweep."""
    stream = io.StringIO()
    reporter = SweepReporter(stream)
    reporter(SweepStarted(0.0, ("/r",), 1, 1))
    reporter(SweepStarted(1.0, ("/r",), 20_000, 38_493_926))
    assert stream.getvalue().splitlines() == [
        "sweep: 1 file, 1 byte",
        "sweep: 20,000 files, 38,493,926 bytes",
    ]


def test_a_watch_batch_on_a_terminal_says_each_file_it_read() -> None:
    """A full sweep's bar stands for its reads; a batch has none, and said "sweep: 2 files"
    and no verdict. A batch says its files and removals, not "sweep: N files" (a rescan that
    read nothing said "sweep: 1,000,000 files")."""
    from engine.records import Record

    stream = _Tty()
    reporter = SweepReporter(stream)
    reporter.console.width = 200
    reporter(SweepStarted(0.0, ("/r",), 1, 4))  # the first, full sweep: its bar only
    reporter(RecordsChanged(0.5, (Record("/r", "a.txt", 4, 0, "ok", chars=4),)))
    reporter(SweepFinished(1.0, Summary(roots=("/r",), files=1), 1, 0))
    assert "a.txt" not in stream.getvalue()
    reporter(SweepStarted(2.0, ("/r",), 1, 9, full=False))
    broken = Record("/r", "c.pdf", 9, 0, "error", reason="corrupt", error="no xref")
    reporter(RecordsChanged(2.5, (broken,)))
    reporter(SweepFinished(3.0, Summary(roots=("/r",), files=1), 1, 0))
    reporter(SweepStarted(4.0, ("/r",), 0, 0, full=False))
    reporter(RecordsChanged(4.5, (), (("/r", "a.txt"),)))
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", stream.getvalue())  # (the bar's codes)
    lines = [ln.rstrip() for ln in plain.splitlines() if ln.strip()]
    assert lines[-2:] == ["error/corrupt            c.pdf (no xref)", "removed  a.txt"], lines
    assert not [ln for ln in lines if ln.startswith("sweep:")], lines


def test_a_watch_says_each_full_sweep_s_counts_in_a_line() -> None:
    """``quarry watch`` prints no table: its first sweep's counts are one line, a batch's
    none (its files say theirs)."""
    stream = io.StringIO()
    reporter = SweepReporter(stream, summarize=True)
    summary = Summary(roots=("/r",), files=3, counts={"ok": 2, "error": 1}, reused=1, seconds=1.25)
    reporter(SweepStarted(0.0, ("/r",), 3, 30))
    reporter(SweepFinished(1.0, summary, 2, 1))
    reporter(SweepStarted(2.0, ("/r",), 1, 9, full=False))
    reporter(SweepFinished(3.0, summary, 1, 0, full=False))
    assert stream.getvalue().splitlines() == [
        "sweep: 3 files, 30 bytes",
        "swept 3 files in 1.2 s: ok 2, empty 0, unsupported 0, error 1, skipped 0;"
        " read 2, reused 1",
    ]


def test_a_read_of_one_character_says_one_char() -> None:
    from engine.console import record_line
    from engine.records import Record

    one = Record("/r", "a.txt", 1, 0, "ok", extractor="text:utf-8", chars=1)
    many = Record("/r", "b.txt", 9, 0, "ok", extractor="text:utf-8", chars=12_345)
    assert record_line(one).endswith("a.txt (text:utf-8, 1 char)")
    assert record_line(many).endswith("b.txt (text:utf-8, 12,345 chars)")
