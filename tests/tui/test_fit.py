"""Cells of the records table at any width: a path keeps its file name and its folder's start."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tui.widgets.record_table import fit_path, layout_columns


def test_a_long_path_keeps_the_name_and_the_start_of_its_folder() -> None:
    path = "projects/2024/customer-files/archive/scans/invoice-00042.pdf"
    assert fit_path(path, 100) == path
    assert fit_path(path, 40) == "projects/2024/custome…/invoice-00042.pdf"
    assert fit_path(path, 19) == "…/invoice-00042.pdf"
    assert fit_path(path, 12) == "…e-00042.pdf"
    assert fit_path("a-very-long-file-name-without-folder.txt", 20).endswith(".txt")


@settings(deadline=None)
@given(st.text(min_size=1, max_size=80), st.integers(4, 120))
def test_fit_never_exceeds_the_width(path: str, width: int) -> None:
    fitted = fit_path(path, width)
    assert len(fitted) <= width
    if len(path) <= width:
        assert fitted == path


def test_columns_drop_by_priority_when_narrow_and_path_keeps_room() -> None:
    wide = dict(layout_columns(160))
    assert set(wide) >= {"path", "status", "reason", "mime", "extractor", "chars", "size"}
    narrow = dict(layout_columns(60))
    assert "path" in narrow and "status" in narrow and narrow["path"] >= 20
    assert sum(w + 1 for w in narrow.values()) <= 60
    hidden = dict(layout_columns(160, hidden={"mime"}))
    assert "mime" not in hidden and hidden["path"] > wide["path"]
