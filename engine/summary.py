"""Builds ``extract.summary.json`` from the records of a store."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from engine.console import read_without_line
from engine.index import Tally
from engine.mimes import DETECTION
from engine.quality import VERDICTS
from engine.records import Record, Status, Summary
from engine.tools import KNOWN_TOOLS, ToolSet
from engine.words import count


def iso(ts: float) -> str:
    """ISO-8601 UTC with microseconds."""
    return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat()


def started_ns(summary: Summary) -> int:
    """When the sweep that wrote ``summary`` started, in ns (0 when it does not say)."""
    try:
        return int(dt.datetime.fromisoformat(summary.started).timestamp() * 1e9)
    except (ValueError, OverflowError):
        return 0


def _missing(tally: Tally, tools: ToolSet) -> dict[str, int]:
    missing = set(KNOWN_TOOLS) - set(tools.names)
    return {name: max(0, tally.waiting.get(name, 0)) for name in sorted(missing)}


def _read_without(tally: Tally) -> dict[str, int]:
    """Per tool, the records whose read lacked it, found by this sweep or not: what is said
    of them depends on the tools found when it is said (a tool installed since the sweep:
    ``quarry tools``, the dashboard's check again)."""
    return {name: n for name, n in sorted(tally.without.items()) if n > 0}


def build_summary(
    records: Iterable[Record] | Tally,
    roots: Sequence[Path],
    tools: ToolSet,
    started: float,
    finished: float,
    *,
    readers: Mapping[str, int] | None = None,
    left_out: Mapping[str, int] | None = None,
    others: Mapping[str, int] | None = None,
) -> Summary:
    """Counts per status and reason, totals, tools found and missing, readers (``readers``:
    their versions when the caller knows them without importing every reader), timing, and
    what the default exclusions left out (``left_out``: per rule, from the last walk), and the
    records of folders the store holds that were not swept (``others``: per folder)."""
    tally = records if isinstance(records, Tally) else Tally.of(records)
    if readers is None:
        from engine.readers.registry import reader_versions  # every reader: not at import

        readers = reader_versions()
    return Summary(
        roots=tuple(str(r) for r in roots),
        files=tally.files,
        counts={s.value: tally.counts.get(s.value, 0) for s in Status},
        reasons={k: v for k, v in sorted(tally.reasons.items()) if v > 0},
        reused=tally.reused,
        chars=tally.chars,
        tools_found={t.name: t.version for t in tools.found},
        tools_missing=_missing(tally, tools),
        read_without=_read_without(tally),
        readers=dict(sorted(readers.items())),
        detection=DETECTION,
        started=iso(started),
        finished=iso(finished),
        seconds=round(finished - started, 3),
        quality={v: max(0, tally.quality.get(v, 0)) for v in VERDICTS},
        left_out=dict(left_out or {}),
        others=dict(others or {}),
    )


def summary_tally(summary: Summary, tools: ToolSet) -> Tally | None:
    """The tally ``summary`` was written from, as far as it keeps it: what a run counts on
    from (records in and out) when it holds no record. None when it does not keep enough
    for ``tools``: the files waiting on a tool missing now that it found."""
    missing = set(KNOWN_TOOLS) - set(tools.names)
    if not missing <= summary.tools_missing.keys():
        return None
    tally = Tally()
    tally.files, tally.reused, tally.chars = summary.files, summary.reused, summary.chars
    tally.counts = Counter({k: n for k, n in summary.counts.items() if n})
    tally.reasons = Counter(summary.reasons)
    tally.quality = Counter({k: n for k, n in summary.quality.items() if n})
    tally.waiting = Counter(summary.tools_missing)
    tally.without = Counter(summary.read_without)
    return tally


def with_cluster(
    summary: Summary, workers: Mapping[str, ToolSet], routed: Mapping[str, int]
) -> Summary:
    """``summary`` saying how the tools of the cluster's workers that took reads differ.

    ``workers``: each worker's tools; ``routed``: files per kind sent only to the workers with
    its tools. Per tool, on how many of the workers it is, when their tool sets differ.
    """
    if not workers:
        return summary
    sets = [frozenset(t.names) for t in workers.values()]
    tools: dict[str, int] = {}
    if len(set(sets)) > 1:
        names = set(KNOWN_TOOLS).union(*sets)
        tools = {name: sum(name in have for have in sets) for name in sorted(names)}
    return replace(
        summary,
        cluster_workers=len(workers),
        cluster_tools=tools,
        cluster_routed={k: v for k, v in sorted(routed.items()) if v > 0},
    )


def cluster_lines(summary: Summary, found: Collection[str]) -> list[str]:
    """What ``quarry tools`` says of tools that differed between reads: records read without
    a tool of ``found`` (those found now), and a cluster whose workers' tools differ
    (nothing when neither)."""
    lines = [line] if (line := read_without_line(summary.read_without, found)) else []
    n = summary.cluster_workers
    if not n or not (summary.cluster_tools or summary.cluster_routed):
        return lines
    if summary.cluster_tools:
        uneven = [f"{t} on {k} of {n}" for t, k in summary.cluster_tools.items() if k < n]
        lines.append(
            f"the last sweep's {n} Dask workers have different tools: " + ", ".join(uneven)
        )
    if summary.cluster_routed:
        kinds = ", ".join(f"{k} ({count(v, 'file')})" for k, v in summary.cluster_routed.items())
        lines.append(f"read only on the workers with their tools: {kinds}")
    return lines
