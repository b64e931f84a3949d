"""The worker pipe's messages: typed both ways, anything else refused where it is read."""

from __future__ import annotations

import multiprocessing

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import worker
from engine.extract import Outcome
from engine.limits import Limits
from engine.records import Status
from engine.tools import ToolSet


def _pipe() -> tuple[multiprocessing.connection.Connection, multiprocessing.connection.Connection]:
    return multiprocessing.Pipe()


@given(st.lists(st.sampled_from(["text/plain", "application/pdf", "image/png"]), max_size=80))
def test_a_workers_messages_arrive_as_sent(mimes: list[str]) -> None:
    """Ready, Done (one outcome or many: over 16 KiB goes as one write) and Bye come back equal."""
    ours, theirs = _pipe()
    try:
        done = worker.Done(tuple(Outcome(Status.OK, m, reader="x" * 300) for m in mimes))
        for msg in (worker.Ready(), done, worker.Bye()):
            worker.send(theirs, msg)
            assert ours.poll(5)
            assert worker.from_worker(ours) == msg
    finally:
        ours.close()
        theirs.close()


def test_the_pools_messages_arrive_as_sent() -> None:
    ours, theirs = _pipe()
    try:
        batch = worker.Batch(Limits(), ToolSet.empty(), "/tmp", (("/a", "0" * 64, 1, None),), 3)
        for msg in (batch, worker.Stop()):
            worker.to_worker(ours, msg)
            assert worker.from_pool(theirs) == msg
    finally:
        ours.close()
        theirs.close()


@pytest.mark.parametrize("junk", [("ready",), ("done", []), None, "bye", 7])
def test_anything_else_on_the_pipe_is_refused(junk: object) -> None:
    """The old tuple words, or anything, are no message: the reader says so (an OSError, as
    a broken pipe is, which the pool and the worker already handle)."""
    ours, theirs = _pipe()
    try:
        theirs.send(junk)
        with pytest.raises(worker.PipeError):
            worker.from_worker(ours)
        ours.send(junk)
        with pytest.raises(worker.PipeError):
            worker.from_pool(theirs)
    finally:
        ours.close()
        theirs.close()
