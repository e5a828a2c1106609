"""The bytes of the work directory's text files, kept while a run is recorded, for its diffs.

A :class:`~phasegate.workspace.observer.WorkspaceObserver` given a :class:`FileContents`
hands it the bytes of every regular file it hashes (it reads them anyway), keyed by their
digest, so a file is kept once however many snapshots see it. Kept: UTF-8 text up to
:data:`FILE_BYTES` per file, within :data:`TOTAL_BYTES` in all. Not kept, with the reason a
recording names: binary files, larger ones, those past the total, those reached through a
symbolic link (never read for a diff), and unreadable ones. Only a recorded run keeps
anything: without a :class:`FileContents` the observer hashes as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field

FILE_BYTES = 1 << 20
"""The largest file whose text is kept (1 MiB)."""
TOTAL_BYTES = 64 << 20
"""The most text kept in all, over every version of every file (64 MiB)."""


@dataclass(slots=True)
class FileContents:
    """Text of files by digest, within a bound per file and in all."""

    file_bytes: int = FILE_BYTES
    total_bytes: int = TOTAL_BYTES
    used: int = 0
    """Bytes kept so far."""
    _texts: dict[str, str] = field(default_factory=dict)
    _why_not: dict[str, str] = field(default_factory=dict)
    _large: set[str] = field(default_factory=set)

    def wants(self, size: int) -> bool:
        """Whether a file of ``size`` bytes may be kept (within both bounds)."""
        return size <= self.file_bytes and self.used + size <= self.total_bytes

    def known(self, digest: str) -> bool:
        """Whether ``digest``'s text, or why it is missing, is known."""
        return digest in self._texts or digest in self._why_not

    def keep(self, digest: str, data: bytes | None, size: int) -> None:
        """Keep the bytes of a file whose digest is ``digest`` (``data`` None: they were not
        read, as the file was too large for the bounds)."""
        if self.known(digest) or digest.startswith(("link:", "unreadable:")):
            return  # nothing was read: why_not says why from the digest itself
        if data is None or len(data) != size:
            self._why_not[digest] = self._too_large(size)
            self._large.add(digest)
            return
        if b"\0" in data:
            self._why_not[digest] = "is binary"
            return
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            self._why_not[digest] = "is not UTF-8 text"
            return
        if self.used + len(data) > self.total_bytes:
            self._why_not[digest] = self._too_large(size)
            self._large.add(digest)
            return
        self.used += len(data)
        self._texts[digest] = text

    def skip(self, digest: str, why: str) -> None:
        """Record why the file with ``digest`` is not kept (a sentence's predicate: ``is
        reached through a symbolic link``)."""
        if digest not in self._texts:
            self._why_not[digest] = why

    def text(self, digest: str) -> str | None:
        """The text kept for ``digest``, or None."""
        return self._texts.get(digest)

    def why_not(self, digest: str) -> str:
        """Why there is no text for ``digest``: a sentence's predicate."""
        if digest.startswith("link:"):
            return "is a symbolic link, which is not followed"
        if digest.startswith("unreadable:"):
            return "could not be read"
        return self._why_not.get(digest, "was not read while the run was recorded")

    def too_large(self, digest: str) -> bool:
        """Whether ``digest``'s text was left out for size."""
        return digest in self._large

    def _too_large(self, size: int) -> str:
        if size > self.file_bytes:
            return f"is larger than {self.file_bytes} bytes, the most a recording diffs"
        return f"did not fit in the {self.total_bytes} bytes a recording keeps of all files"
