"""Builds ``extract.summary.json`` from the records of a store."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from engine.readers.registry import reader_versions
from engine.records import Reason, Record, Status, Summary
from engine.tools import KNOWN_TOOLS, ToolSet


def iso(ts: float) -> str:
    """ISO-8601 UTC with microseconds."""
    return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat()


def tools_unlock(records: Iterable[Record], tools: ToolSet) -> dict[str, int]:
    """Missing tool -> records naming it among the tools that would unlock them."""
    missing = set(KNOWN_TOOLS) - set(tools.names)
    counts: Counter[str] = Counter()
    for r in records:
        if r.needs and (r.reason == Reason.NEEDS_TOOL or r.reason == Reason.SCANNED):
            for name in r.needs:
                if name in missing:
                    counts[name] += 1
    return {name: counts.get(name, 0) for name in sorted(missing)}


def build_summary(
    records: Iterable[Record],
    roots: Sequence[Path],
    tools: ToolSet,
    started: float,
    finished: float,
) -> Summary:
    """Counts per status and reason, totals, tools found and missing, readers, timing."""
    recs = list(records)
    counts = Counter(r.status for r in recs)
    reasons = Counter(f"{r.status}/{r.reason}" for r in recs if r.reason)
    return Summary(
        roots=tuple(str(r) for r in roots),
        files=len(recs),
        counts={s.value: counts.get(s.value, 0) for s in Status},
        reasons=dict(sorted(reasons.items())),
        reused=sum(1 for r in recs if r.reused),
        chars=sum(r.chars for r in recs),
        tools_found={t.name: t.version for t in tools.found},
        tools_missing=tools_unlock(recs, tools),
        readers=dict(sorted(reader_versions().items())),
        started=iso(started),
        finished=iso(finished),
        seconds=round(finished - started, 3),
    )
