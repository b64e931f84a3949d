"""At 80x24 the footer keeps the verbs the tool exists for; at any width the path has room."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from textual.widgets._footer import FooterKey

from tests.tui.triage_helpers import NO_TOOLS, TriageApp, session_over, swept_home
from tui.widgets.footer import rank
from tui.widgets.record_table import MIN_PATH, layout_columns


async def test_the_footer_keeps_retry_errors_unsupported_and_tools_at_80(sample: Path) -> None:
    with session_over(sample, NO_TOOLS) as session:
        app = TriageApp(session.store.out, session)
        async with app.run_test(size=(80, 24)) as pilot:
            await swept_home(pilot, app)
            await pilot.pause()
            keys = [k for k in app.screen.query(FooterKey) if not k.has_class("-command-palette")]
            shown = [k.description for k in keys if k.display and k.description]
            for verb in ("Retry", "Errors", "Unsupported", "Tools", "Quit", "Help"):
                assert verb in shown, shown
            hidden = [k for k in keys if not k.display]
            assert hidden  # 80 columns hold not every key
            worst_shown = max(rank(k.action.removeprefix("app.")) for k in keys if k.display)
            assert all(rank(k.action.removeprefix("app.")) >= worst_shown for k in hidden)


@given(st.integers(60, 400))
def test_the_path_keeps_a_third_of_the_table(width: int) -> None:
    columns = dict(layout_columns(width))
    assert columns["path"] >= max(MIN_PATH, width // 3)
    assert sum(w + 1 for w in columns.values()) <= width
