"""The offload store: exact values kept outside the model input, read back through ``read_offload``.

Storage is SQLite (a file the caller names, or a private ``":memory:"`` database by default). There
is no process-wide store: the caller (or its ``PlanningSession``) owns it; see ``requests.py``.
Blobs are content-addressed (keyed by the SHA-256 of their text). A *handle* names one source in
one namespace (``handle = digest(namespace, key)``), so it is opaque and is derived without writing
anything (``preview`` can show it). Every distinct content stored under a handle gets the next
*revision*. Reads are scoped: a handle is found only in the namespace that wrote it, so a handle
from another namespace or session reads as unknown.

Each write is one transaction: either the blob and its reference are both stored, or neither.

Previews are type-aware and bounded (at most ``PREVIEW_TOKENS`` tokens): JSON shows its shape and
first items, multi-line text (logs) its first and last lines, other text its head.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from ..errors import OffloadError
from ..lazy_sqlite import LazySQLite
from ..compose.results import _ToDict
from ..tokens import TiktokenCounter, TokenCounter, default_counter
from ..tools import Tool, tool

PREVIEW_TOKENS = 256
READ_OFFLOAD = "read_offload"
DEFAULT_READ_LIMIT = 4000


@dataclass(frozen=True, slots=True)
class OffloadReceipt(_ToDict):
    """Evidence that one value was offloaded: ``byte_size`` is the UTF-8 size of its text form."""

    handle: str
    revision: int
    byte_size: int
    source: str = ""


def canonical_text(value: Any) -> str:
    """A string as is; anything else as compact JSON (pydantic models through ``model_dump``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def make_handle(namespace: str, key: str) -> str:
    """The opaque handle of ``key`` in ``namespace`` (derivable without writing)."""
    # Decimal digits: tiktoken splits digit runs into groups of three, so every handle costs the same
    # number of tokens and a plan never depends on which namespace derived it.
    digest = int(hashlib.sha256(f"{namespace}\0{key}".encode()).hexdigest(), 16)
    return f"ofl_{digest % 10**24:024d}"


class OffloadStore(LazySQLite):
    """Content-addressed storage for offloaded values (see the module docstring).

    An in-memory store opens its database on the first write (``lazy_sqlite``).
    """

    SCHEMA = (
        "CREATE TABLE IF NOT EXISTS offload_blobs (digest TEXT PRIMARY KEY, content TEXT NOT NULL, byte_size INTEGER NOT NULL);"
        "CREATE TABLE IF NOT EXISTS offload_refs (namespace TEXT NOT NULL, handle TEXT NOT NULL, revision INTEGER NOT NULL,"
        " digest TEXT NOT NULL REFERENCES offload_blobs(digest), PRIMARY KEY (namespace, handle, revision));"
    )

    def put(self, namespace: str, key: str, value: Any) -> OffloadReceipt:
        """Store ``value`` under ``key`` in ``namespace``; same content as the latest revision is a no-op."""
        text = canonical_text(value)
        data = text.encode("utf-8")
        digest = hashlib.sha256(data).hexdigest()
        handle = make_handle(namespace, key)
        with self._lock:
            db = self._open()
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute(
                    "SELECT revision, digest FROM offload_refs WHERE namespace = ? AND handle = ? ORDER BY revision DESC LIMIT 1",
                    (namespace, handle),
                ).fetchone()
                if row is not None and row[1] == digest:
                    revision = int(row[0])
                else:
                    revision = (int(row[0]) if row else 0) + 1
                    db.execute(
                        "INSERT OR IGNORE INTO offload_blobs (digest, content, byte_size) VALUES (?, ?, ?)", (digest, text, len(data))
                    )
                    db.execute(
                        "INSERT INTO offload_refs (namespace, handle, revision, digest) VALUES (?, ?, ?, ?)",
                        (namespace, handle, revision, digest),
                    )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return OffloadReceipt(handle=handle, revision=revision, byte_size=len(data), source=key)

    def get(self, namespace: str, handle: str, revision: int | None = None) -> str:
        """The exact text stored under ``handle`` (latest revision unless given)."""
        query = (
            "SELECT b.content FROM offload_refs r JOIN offload_blobs b ON b.digest = r.digest "
            "WHERE r.namespace = ? AND r.handle = ?"
        )
        args: tuple[Any, ...] = (namespace, handle)
        if revision is not None:
            query += " AND r.revision = ?"
            args += (revision,)
        with self._lock:
            row = None if self._unwritten() else self._open().execute(query + " ORDER BY r.revision DESC LIMIT 1", args).fetchone()
        if row is None:
            raise OffloadError(f"unknown offload handle {handle!r} in this namespace; use a handle shown in this conversation")
        return str(row[0])

    def read(self, namespace: str, handle: str, offset: int = 0, limit: int = DEFAULT_READ_LIMIT) -> dict[str, Any]:
        """A slice of the exact text, by character ``offset`` and ``limit``, with what remains."""
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise OffloadError(f"read_offload offset must be an int >= 0, got {offset!r}")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
            raise OffloadError(f"read_offload limit must be a positive int, got {limit!r}")
        text = self.get(namespace, handle)
        chunk = text[offset : offset + limit]
        end = offset + len(chunk)
        return {"handle": handle, "offset": offset, "total_chars": len(text), "content": chunk, "next_offset": end if end < len(text) else None}

    def count(self) -> int:
        """How many references (handle revisions) are stored, in every namespace."""
        with self._lock:
            if self._unwritten():
                return 0
            return int(self._open().execute("SELECT COUNT(*) FROM offload_refs").fetchone()[0])


class ReadOffloadParameters(BaseModel):
    handle: str = Field(description="The opaque handle shown with the preview")
    offset: int = Field(default=0, ge=0, description="Character offset to start reading at")
    limit: int = Field(default=DEFAULT_READ_LIMIT, gt=0, le=20000, description="How many characters to read")


def read_offload_tool(store: OffloadStore, namespace: str) -> Tool:
    """The support tool injected while anything is offloaded; it reads only ``namespace``."""

    def execute(params: ReadOffloadParameters) -> dict[str, Any]:
        return store.read(namespace, params.handle, params.offset, params.limit)

    return tool(
        READ_OFFLOAD,
        description="Read the exact content behind an offload handle, a slice at a time (offset and limit in characters).",
        parameters=ReadOffloadParameters,
        execute=execute,
    )


def _truncate_tokens(text: str, limit: int, counter: TokenCounter) -> str:
    if counter.count(text) <= limit:
        return text
    if isinstance(counter, TiktokenCounter):
        encoding = counter._encoding or counter._load()
        tokens = encoding.encode_ordinary(text)
        cut = encoding.decode(tokens[: max(0, limit - 2)])
        while cut and counter.count(cut + " …") > limit:
            cut = cut[: int(len(cut) * 0.9)]
        return cut + " …"
    low, high = 0, len(text)
    while low < high:  # binary search on characters for any other counter
        mid = (low + high + 1) // 2
        if counter.count(text[:mid] + " …") <= limit:
            low = mid
        else:
            high = mid - 1
    return text[:low] + " …"


def _json_preview(value: Any) -> str:
    if isinstance(value, dict):
        keys = list(value)
        head = {k: value[k] for k in keys[:8]}
        return f"JSON object with {len(keys)} keys ({', '.join(map(str, keys[:20]))}); first entries: " + json.dumps(head, ensure_ascii=False, default=str)
    if isinstance(value, list):
        return f"JSON array of {len(value)} items; first items: " + json.dumps(value[:5], ensure_ascii=False, default=str)
    return "JSON value: " + json.dumps(value, ensure_ascii=False, default=str)


def preview_text(value: Any, counter: TokenCounter | None = None, limit: int = PREVIEW_TOKENS) -> tuple[str, str]:
    """A bounded, type-aware preview of ``value`` and the kind it was shown as."""
    counter = counter or default_counter()
    text = canonical_text(value)
    parsed: Any = None
    kind = "text"
    if not isinstance(value, str):
        parsed, kind = json.loads(text), "json"
    elif text[:1] in "{[":
        try:
            parsed, kind = json.loads(text), "json"
        except ValueError:
            parsed = None
    if kind == "json":
        body = _json_preview(parsed)
    else:
        lines = text.splitlines()
        if len(lines) > 12:
            kind = "lines"
            body = f"{len(lines)} lines; first and last lines:\n" + "\n".join(lines[:6]) + "\n…\n" + "\n".join(lines[-4:])
        else:
            body = text
    return _truncate_tokens(body, limit, counter), kind


def reference_text(label: str, handle: str, value: Any, counter: TokenCounter | None = None) -> str:
    """What the model sees instead of an offloaded value: a header with the handle, then the preview."""
    text = canonical_text(value)
    preview, kind = preview_text(value, counter)
    return (
        f"[{label} is offloaded: {kind}, {len(text)} characters. Exact content: "
        f"read_offload(handle=\"{handle}\", offset, limit).]\nPreview:\n{preview}"
    )
