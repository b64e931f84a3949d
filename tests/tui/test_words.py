"""Words on screen (issue 25): one plural helper; no markup leak in the help; error-group
announcements in real words, one at a time."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from textual.content import Content

from engine.events import RecordsChanged
from engine.records import Record
from engine.store import Store
from tests.tui.conftest import settle, wait_for
from tests.tui.triage_helpers import notes
from tui.app import QuarryApp
from tui.messages import EngineEvents
from tui.screens.help import help_text
from tui.words import count


@given(st.integers(min_value=0, max_value=10**9))
def test_count_is_singular_only_for_one(n: int) -> None:
    said = count(n, "file")
    assert said == (f"{n:,} file" if n == 1 else f"{n:,} files")
    assert count(n, "match", "matches").endswith("match" if n == 1 else "matches")


def test_the_help_shows_every_key_without_markup_left_over() -> None:
    plain = Content.from_markup(help_text(list(QuarryApp.BINDINGS))).plain
    assert "[/" not in plain and "[b]" not in plain
    lines = plain.splitlines()
    assert any(line.split() == ["[", "Prev", "page"] for line in lines)
    assert any(line.split() == ["]", "Next", "page"] for line in lines)


def _errors(batch: int, n: int) -> RecordsChanged:
    bad = [
        Record("/fixtures", f"new/{batch}-{i}.bin", 1, 0, "error", reason=f"kind{batch}x{i}",
               error=f"none of the {i + 2} passwords given opened it")
        for i in range(n)
    ]  # fmt: skip
    return RecordsChanged(float(batch), tuple(bad))


async def test_new_group_toasts_do_not_pile_up_at_80x24(store: Store) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: app.triage.known_groups is not None)
        app.post_message(EngineEvents([_errors(1, 3)]))
        await wait_for(pilot, lambda: any("error group" in n for n in notes(app)))
        for batch in (2, 3, 4):  # more new groups while the first toast shows
            app.post_message(EngineEvents([_errors(batch, 2)]))
            await pilot.pause(0.5)
        said = [n for n in notes(app) if "error group" in n]
        assert len(said) == 1, said
        assert said[0] == (
            "3 new error groups: kind1x0: none of the 2 passwords given opened it (+2 more)"
            " · x: errors"
        )
        assert sum("error group" in n.title for n in app._notifications) <= 1
