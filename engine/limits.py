"""Named bounds on every read. Tests lower them so a 4 KB file can act as a bomb."""

from __future__ import annotations

from dataclasses import dataclass

MiB = 1024 * 1024
DEFAULT_MAX_BYTES = 512 * MiB
"""Files larger than this are skipped (``--max-bytes``)."""
KILL_GRACE_S = 2.0
"""Most time a read gets past its own deadline before the pool kills it (readers stop first)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-read bounds; each has a name that appears in the verdict when it is reached."""

    timeout_s: float = 60.0
    """Wall time for one read, seconds (``--timeout``)."""
    memory_bytes: int = 1024 * MiB
    """Address-space limit of a worker process (``--memory``)."""
    max_chars: int = 16 * 1024 * 1024
    """Characters of text kept per document; the kept text ends with a line naming the cap."""
    zip_member_bytes: int = 64 * MiB
    """Decompressed bytes read from one zip member."""
    zip_members: int = 10_000
    """Members in one zip container."""
    zip_ratio: int = 100
    """Largest decompressed/compressed ratio of a member worth more than 1 MiB."""
    xml_bytes: int = 256 * MiB
    """Bytes of XML parsed per document."""
    parts_per_block: int = 200_000
    """Parts (runs, cells) in one paragraph or row."""
    tool_timeout_s: float = 300.0
    """Wall time of one external tool call, clipped to what is left of ``timeout_s``."""
    csv_field_chars: int = 16 * 1024 * 1024
    """Longest CSV field accepted."""
    archive_depth: int = 4
    """Containers (archives, compressed files, mail) nested in one another that are opened."""
    archive_members: int = 10_000
    """Members read from one archive (or attachments from one message)."""
    archive_bytes: int = 512 * MiB
    """Decompressed bytes of all members of one walked file, nested containers included."""
    mbox_messages: int = 100_000
    """Messages read from one mailbox (the text of those before the cap is kept)."""


DEFAULT_LIMITS = Limits()
