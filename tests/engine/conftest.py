"""Fixtures shared by the engine's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.readers import registry


@pytest.fixture
def fault_reader(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Enable the fault-injection reader, in this process and in the workers it starts."""
    monkeypatch.setenv(registry.EXTRA_ENV, "engine.readers._fault")
    registry.reset()
    yield
    monkeypatch.delenv(registry.EXTRA_ENV)
    registry.reset()
