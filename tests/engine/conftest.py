"""Fixtures shared by the engine's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.readers import registry


@pytest.fixture
def fault_reader() -> Iterator[None]:
    """Enable the fault-injection reader (tests/faultreader.py), in this process and in the
    workers it starts."""
    from tests.faultreader import SPEC

    registry.use_extra((SPEC,))
    yield
    registry.use_extra(())
