"""Cells of the records table at any width: a path keeps its file name and its folder's start."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from tui.model import COLUMNS
from tui.widgets.record_table import (
    WIDTHS,
    cell_text,
    end_cells,
    fit_cell,
    fit_path,
    layout_columns,
    start_cells,
)


def test_a_long_path_keeps_the_name_and_the_start_of_its_folder() -> None:
    path = "projects/2024/customer-files/archive/scans/invoice-00042.pdf"
    assert fit_path(path, 100) == path
    assert fit_path(path, 40) == "projects/2024/custome…/invoice-00042.pdf"
    assert fit_path(path, 19) == "…/invoice-00042.pdf"
    assert fit_path(path, 12) == "…e-00042.pdf"
    assert fit_path("a-very-long-file-name-without-folder.txt", 20).endswith(".txt")


def test_a_path_of_wide_characters_is_fitted_by_its_cells() -> None:
    """A CJK character takes two columns: fitted by its length, such a path overflowed its
    cell and pushed every column after it to the right."""
    path = "資料/二〇二四年/顧客ファイル/請求書-00042.pdf"
    assert fit_path(path, 45) == path
    assert fit_path(path, 30) == "資料/二〇二…/請求書-00042.pdf"  # (29 cells: 二〇二四 won't halve)
    assert fit_path(path, 20) == "資…/請求書-00042.pdf"
    assert fit_path(path, 12) == "…-00042.pdf"
    assert fit_cell("漢字漢字", 5) == "漢字…"
    assert fit_cell("漢字", 6, right=True) == "  漢字"


@settings(deadline=None)
@given(st.text(min_size=1, max_size=80), st.integers(4, 120))
def test_fit_never_exceeds_the_width(path: str, width: int) -> None:
    fitted = fit_path(path, width)
    assert cell_len(fitted) <= width
    if cell_len(path) <= width:
        assert fitted == path
    assert cell_len(fit_cell(fitted, width)) == width


@settings(deadline=None)
@given(st.text(min_size=0, max_size=40), st.integers(0, 40))
def test_a_cut_keeps_whole_characters_and_never_more_cells(text: str, cells: int) -> None:
    start, end = start_cells(text, cells), end_cells(text, cells)
    assert text.startswith(start) and text.endswith(end)
    assert cell_len(start) <= cells and cell_len(end) <= cells


def test_columns_drop_by_priority_when_narrow_and_path_keeps_room() -> None:
    wide = dict(layout_columns(160))
    assert set(wide) >= {"path", "status", "reason", "mime", "extractor", "chars", "size"}
    narrow = dict(layout_columns(60))
    assert "path" in narrow and "status" in narrow and narrow["path"] >= 20
    assert sum(w + 1 for w in narrow.values()) <= 60
    hidden = dict(layout_columns(160, hidden={"mime"}))
    assert "mime" not in hidden and hidden["path"] > wide["path"]


async def test_rows_of_wide_names_keep_the_columns_in_line(tmp_path: Path) -> None:
    """In the records table, a path of CJK characters, long or short, takes the cells of its
    column and no more: the status column starts in the same terminal column on every row."""
    from tests.tui.conftest import SIZE, screen_lines, settle, text_store
    from tui.app import QuarryApp
    from tui.widgets.record_table import RecordTable

    names = {
        "a.txt": "a\n",
        "請求書.txt": "b\n",
        "資料/二〇二四年/顧客ファイル/アーカイブ/スキャン/請求書-00042-最終版-確認済み.txt": "c\n",
    }
    for width in (SIZE[0], 80):
        app = QuarryApp(text_store(tmp_path / f"s{width}", names).out)
        async with app.run_test(size=(width, SIZE[1])) as pilot:
            await settle(pilot)
            lines = screen_lines(app.screen.query_one(RecordTable))
            rows = [line for line in lines if " ok " in line]
            assert len(rows) == 3, lines
            columns = {cell_len(row[: row.index(" ok ")]) for row in rows}
            assert len(columns) == 1, rows
            assert {cell_len(row) for row in rows} == {cell_len(lines[0])}


def test_the_triage_tables_measure_and_cut_their_cells_by_cells() -> None:
    """The groups' and tools' tables (Textual DataTables) size a natural column by its
    widest cell and cut the others to their share: both in cells, as the terminal draws."""
    from tui.screens.groups import widths
    from tui.widgets.record_table import cut

    assert widths([("name", 0)], [["請求書"], ["ab"]], 80) == [6]
    assert cut("請求書を確認", 7) == "請求書…" and cut("abc", 3) == "abc"


@given(
    st.sampled_from(["chars", "pages", "ms"]),
    st.one_of(st.integers(0, 10**15), st.sampled_from([16_777_278, 999_950, 9_999_999])),
)
@settings(max_examples=300, deadline=None)
def test_a_number_fits_its_column_and_is_exact_when_it_can_be(column: str, n: int) -> None:
    """A text cut at the 16 MiB cap has 16,777,278 characters: ten cells with its commas, in a
    column of nine, it showed as ``16,777,2…`` (seen on a 474 MB log at 160 columns)."""
    row: list[object] = [None] * (len(COLUMNS) + 1)
    row[COLUMNS.index(column) + 1] = n
    cell = cell_text(column, tuple(row))
    assert len(cell) <= WIDTHS[column] and "…" not in cell
    if len(f"{n:,}") <= WIDTHS[column]:
        assert cell == f"{n:,}"
    else:  # within 5% of the value, in its unit
        unit = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}[cell[-1]]
        assert abs(float(cell[:-1]) * unit - n) <= 0.05 * n
