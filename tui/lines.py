"""What the dashboard's older modules import of the store's line format, from the engine.

The engine reads the store in one place: :meth:`engine.records.Record.from_json` judges a
line, :func:`engine.records.restore_name` restores a name kept as bytes and
:class:`engine.store.BadLine` names a line that is no record. This module only re-exports
them under the names ``tui.model`` still uses; new code imports the engine's.
"""

from __future__ import annotations

from engine.records import BadRecord, Record
from engine.store import BadLine

NotARecord = BadRecord
"""A line that cannot be a record (the engine's :class:`~engine.records.BadRecord`)."""

record_from_line = Record.from_json
"""The record of one line (raises :class:`NotARecord`)."""

__all__ = ["BadLine", "NotARecord", "record_from_line"]
