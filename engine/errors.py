"""The engine's exceptions.

::

    QuarryError                   root: anything the engine raises on purpose
    ├── UsageError                a bad flag, a missing folder: exit 1 with one line
    ├── StoreLocked               another writer holds the store's lock: exit 1
    ├── MachineFailure            the machine failed, not a file: workers cannot start, disk full
    ├── StoreLost                 a writer's store folder or lock file vanished or was replaced
    ├── StoreCorrupt              the summary cannot be parsed
    ├── StoreUnusable             the store's shape, format or permissions forbid its use: exit 1
    └── ReadFailure               one file could not be read; becomes data on its record
        ├── CorruptFile           the bytes are not what the format says (error/corrupt)
        ├── EncryptedFile         needs a password we do not have (error/encrypted)
        ├── Refused               DTD / entity declarations, disallowed encodings (error/refused)
        ├── LimitExceeded         a named bound was hit and nothing useful was kept (error/<limit>)
        │   └── TimeSpent         a container's time ran out between its members (error/timeout)
        ├── ToolFailed            an external tool exited badly or timed out (error/tool_failed)
        ├── ReadTimeout           the read's own time budget ran out, in a tool (error/timeout)
        ├── NeedsTool             a reader exists but its tool is missing (unsupported/needs_tool)
        └── NoDecoder             a known format's variant no reader decodes (unsupported/no_reader)

A :class:`ReadFailure` never escapes a sweep: the sweep turns it into a record. Library
exceptions are wrapped at the reader boundary (``raise CorruptFile(...) from exc``).
"""

from __future__ import annotations


class QuarryError(Exception):
    """Root of every exception the engine raises on purpose."""


class UsageError(QuarryError):
    """Raised for a bad command line or a folder that does not exist; the CLI exits 1."""


class StoreLocked(QuarryError):
    """Raised when a second writer tries to open a store whose lock is held (``store``: the
    store's folder, for the command line to name in what it suggests)."""

    def __init__(self, message: str, store: str | None = None) -> None:
        super().__init__(message)
        self.store = store


class StoreCorrupt(QuarryError):
    """Raised when the store's files cannot be parsed (never for a missing store)."""


class MachineFailure(QuarryError):
    """Raised by an executor that cannot run reads (workers cannot start, a cluster is gone).

    Not any file's fault: a run keeps the earlier records of the files it could not read.
    """


class StoreLost(QuarryError):
    """Raised when a writer is about to write a store whose folder or lock file is gone.

    Writing on would make a new folder that no lock guards, with records naming texts that
    went with the old one; the writer stops instead (the CLI exits 1).
    """


class SessionClosed(QuarryError):
    """Raised by a session asked to sweep, retry or apply after it was closed: its store's
    lock is released, so writing now could overwrite another writer's store."""


class StoreUnusable(QuarryError):
    """Raised when a store cannot be read or written as it is: a file in the way of the store
    folder, a folder where one of its files belongs (or the reverse), a newer store format,
    no permission. The message names the problem in one line."""


class ReadFailure(QuarryError):
    """Raised by a reader for one file; carries the status and reason for its record."""

    status = "error"
    reason = "corrupt"

    def __init__(self, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        if reason is not None:
            self.reason = reason


class CorruptFile(ReadFailure):
    """Raised when a file's bytes do not parse as its format."""

    reason = "corrupt"


class EncryptedFile(ReadFailure):
    """Raised when a document needs a password."""

    reason = "encrypted"


class Refused(ReadFailure):
    """Raised for input the engine refuses by policy (DTDs, entities, odd XML encodings)."""

    reason = "refused"


class LimitExceeded(ReadFailure):
    """Raised when a named bound (zip ratio, member count, XML size...) stops a read."""

    reason = "limit"

    def __init__(self, limit: str, message: str) -> None:
        super().__init__(f"{limit}: {message}")
        self.limit = limit


class TimeSpent(LimitExceeded):
    """Raised by a container (archive, mailbox) that stops between two of its members or
    messages because the read's time (``timeout_s``) is almost spent: like any bound, the
    text read so far is kept; with none, the verdict is ``error/timeout``."""

    reason = "timeout"

    def __init__(self, message: str) -> None:
        super().__init__("timeout_s", message)


class ToolFailed(ReadFailure):
    """Raised when an external tool fails, crashes or times out."""

    reason = "tool_failed"


class ReadTimeout(ReadFailure):
    """Raised when a read's wall-time budget (``--timeout``) runs out inside the read, e.g.
    a tool stopped because the budget left to it ran out (not the tool's own 300 s bound)."""

    reason = "timeout"


class NoDecoder(ReadFailure):
    """Raised for a variant of a known format that no reader here decodes: a zip member
    compressed by a method of PKZIP 1.x (shrink, reduce, implode) or one the reader leaves
    alone. Not damage: ``unsupported/no_reader``, as a file of an unknown kind is."""

    status = "unsupported"
    reason = "no_reader"


class NeedsTool(ReadFailure):
    """Raised when a reader needs an external tool that is not available."""

    status = "unsupported"
    reason = "needs_tool"

    def __init__(self, *tools: str, message: str | None = None) -> None:
        super().__init__(message or f"needs {' or '.join(tools)} on this machine")
        self.tools = tools
