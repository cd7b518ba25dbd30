"""Summary strategies and the SQLite store of summary artifacts.

An artifact is content-addressed: its key is a digest of the source text, the strategy (with its
settings) and the summary model's name, so a changed source never reuses a stale summary. Building
a ladder never runs a model; artifacts are prepared by ``generate`` (per ``on_miss``) and only read
by ``preview``.

Strategies:

- ``summarize.extractive(ratio=0.3)``: no model. Deterministic, about ``ratio`` of the source's
  characters. Prose (paragraphs of sentences): the lead sentences of each paragraph, round-robin
  across paragraphs and in order (at least one sentence); good for documents whose paragraphs lead
  with their point. A line-shaped source (a log, CI output, a listing: at least 8 lines, 4 or more
  per paragraph on average) keeps its line structure: every line that looks like an error
  (``error``, ``fail``, ``exception``, ``traceback``, ``fatal``, ``panic``, pytest's ``E   `` lines),
  then its first and last lines, in their original order, with a ``[... N lines omitted ...]`` line
  for each gap. So a CI log's failure, usually near its end, survives.
- ``summarize.hierarchical(chunk_chars=6000)``: uses a model. Splits the source into chunks on
  paragraph boundaries, asks the model for a summary of each, and, when there is more than one
  chunk, asks once more for a summary of the summaries.

A store write happens only after the whole summary was produced, so a failing model leaves nothing
half-written.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass
from typing import Any

from ..errors import CruxError, SummaryError
from ..lazy_sqlite import LazySQLite
from ..compose.results import _ToDict

_SENTENCE_END = re.compile(r"(?<=[.!?])[ \t]+(?=\S)|\n")  # sentences, and lines (logs, lists)
SUMMARY_SYSTEM = (
    "Summarize the text you are given for another model that must answer questions from it. "
    "Keep names, numbers, identifiers and decisions exactly; drop repetition. Answer with the summary only."
)


@dataclass(frozen=True, slots=True)
class ExtractiveStrategy(_ToDict):
    """About ``ratio`` of the source, without a model: lead sentences of prose; head, tail and error lines of a log."""

    ratio: float = 0.3
    needs_model = False

    def __post_init__(self) -> None:
        if isinstance(self.ratio, bool) or not isinstance(self.ratio, (int, float)) or not 0 < self.ratio <= 1:
            raise ValueError(f"summarize.extractive(ratio=...) must be a number in (0, 1], got {self.ratio!r}")

    @property
    def key(self) -> str:
        return f"extractive:{self.ratio}"

    def summarize_text(self, text: str) -> str:
        """The deterministic extractive summary of ``text``."""
        paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
        if not paragraphs:
            return ""
        lines = [line.rstrip() for line in text.splitlines() if line.strip()]
        if len(lines) >= LINE_SHAPED_MIN and len(lines) >= 4 * len(paragraphs):
            return _summarize_lines(lines, max(1, int(len(text) * self.ratio)))
        sentences_by_paragraph = [_SENTENCE_END.split(p) for p in paragraphs]
        target = max(1, int(len(text) * self.ratio))
        kept: list[list[str]] = [[] for _ in paragraphs]
        used = 0
        depth = 0
        # Round-robin by depth: every paragraph's first sentence, then every second sentence, ...
        while used < target:
            added = False
            for index, sentences in enumerate(sentences_by_paragraph):
                if depth < len(sentences) and used < target:
                    kept[index].append(sentences[depth])
                    used += len(sentences[depth]) + 1
                    added = True
            if not added:
                break
            depth += 1
        return "\n".join(" ".join(s) for s in kept if s)


LINE_SHAPED_MIN = 8  # lines; with 4+ lines per paragraph on average, a source is summarised by lines
_ERROR_LINE = re.compile(
    r"\b(?:error|errors|fail|failed|failing|failure|failures|fatal|exception|traceback|panic|critical|abort(?:ed)?)\b"
    r"|(?-i:[a-z](?:Error|Exception))\b|^E {2,}\S",
    re.IGNORECASE,
)


def looks_like_error(line: str) -> bool:
    """Whether a line of a log reads as a failure (kept by the extractive summary of a log)."""
    return _ERROR_LINE.search(line) is not None


def _summarize_lines(lines: list[str], target: int) -> str:
    """Error lines, then head and tail, up to ``target`` characters; original order, gaps marked."""
    keep: set[int] = set()
    used = 0

    def take(index: int) -> bool:
        nonlocal used
        if index in keep:
            return True
        cost = len(lines[index]) + 1
        if keep and used + cost > target:
            return False
        keep.add(index)
        used += cost
        return True

    take(0)
    take(len(lines) - 1)  # a CI log ends with its verdict
    for index, line in enumerate(lines):
        if looks_like_error(line) and not take(index):
            break
    head, tail = 1, len(lines) - 2
    while head <= tail:  # then head and tail alternately, while there is room
        if not take(head):
            break
        head += 1
        if head <= tail and not take(tail):
            break
        tail -= 1
    out: list[str] = []
    previous = -1
    for index in sorted(keep):
        if index > previous + 1:
            out.append(f"[... {index - previous - 1} lines omitted ...]")
        out.append(lines[index])
        previous = index
    if previous < len(lines) - 1:
        out.append(f"[... {len(lines) - 1 - previous} lines omitted ...]")
    return "\n".join(out)


@dataclass(frozen=True, slots=True)
class HierarchicalStrategy(_ToDict):
    """Chunk summaries by a model, then a summary of the summaries."""

    chunk_chars: int = 6000
    needs_model = True

    def __post_init__(self) -> None:
        if isinstance(self.chunk_chars, bool) or not isinstance(self.chunk_chars, int) or self.chunk_chars < 200:
            raise ValueError(f"summarize.hierarchical(chunk_chars=...) must be an int >= 200, got {self.chunk_chars!r}")

    @property
    def key(self) -> str:
        return f"hierarchical:{self.chunk_chars}"

    def chunks(self, text: str) -> list[str]:
        out: list[str] = []
        current = ""
        for paragraph in re.split(r"\n\s*\n", text):
            if current and len(current) + len(paragraph) + 2 > self.chunk_chars:
                out.append(current)
                current = ""
            current = f"{current}\n\n{paragraph}" if current else paragraph
            while len(current) > self.chunk_chars:
                out.append(current[: self.chunk_chars])
                current = current[self.chunk_chars :]
        if current.strip():
            out.append(current)
        return out

    async def summarize_with(self, model: Any, text: str) -> str:
        """Summarize ``text`` with ``model`` (its ``acomplete``, else ``complete``); raises ``SummaryError`` on failure."""
        parts = [await _ask(model, chunk) for chunk in self.chunks(text)]
        if len(parts) <= 1:
            return parts[0] if parts else ""
        return await _ask(model, "\n\n".join(parts))


async def _ask(model: Any, text: str) -> str:
    from ..contract import ModelRequest, acall  # the model layer is optional for extractive summaries

    request = ModelRequest(system=SUMMARY_SYSTEM, messages=[{"role": "user", "content": text}], tools=[])
    name = getattr(model, "name", type(model).__name__)
    try:
        response = await acall(model, request)
    except CruxError as exc:
        raise SummaryError(f"summary model {name!r} failed: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - any adapter fault becomes one clear error
        raise SummaryError(f"summary model {name!r} raised {type(exc).__name__}: {exc}") from exc
    result = getattr(response, "text", None)
    if not isinstance(result, str) or not result.strip():
        raise SummaryError(f"summary model {name!r} answered without text; a summary model must answer with plain text")
    return result.strip()


class summarize:  # noqa: N801 - a namespace used as summarize.extractive(), as in the seeds
    """Summary strategies: ``summarize.extractive()`` (no model) and ``summarize.hierarchical()``."""

    @staticmethod
    def extractive(ratio: float = 0.3) -> ExtractiveStrategy:
        return ExtractiveStrategy(ratio=ratio)

    @staticmethod
    def hierarchical(chunk_chars: int = 6000) -> HierarchicalStrategy:
        return HierarchicalStrategy(chunk_chars=chunk_chars)


SummaryStrategy = ExtractiveStrategy | HierarchicalStrategy


def artifact_key(source_text: str, strategy: SummaryStrategy, model_name: str | None) -> str:
    """The content address of a summary: source text + strategy + model."""
    digest = hashlib.sha256()
    for piece in (strategy.key, model_name or "", source_text):
        digest.update(piece.encode("utf-8"))
        digest.update(b"\0")
    return "sum_" + digest.hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class SummaryArtifact(_ToDict):
    key: str
    strategy: str
    model: str | None
    text: str
    created_at: float


class SummaryStore(LazySQLite):
    """Summary artifacts in SQLite: a file the caller names, or ``":memory:"`` (the default).

    An in-memory store opens its database on the first write (``lazy_sqlite``).
    """

    SCHEMA = (
        "CREATE TABLE IF NOT EXISTS summary_artifacts ("
        " key TEXT PRIMARY KEY, strategy TEXT NOT NULL, model TEXT, text TEXT NOT NULL, created_at REAL NOT NULL)"
    )

    def get(self, key: str) -> SummaryArtifact | None:
        with self._lock:
            if self._unwritten():
                return None  # an in-memory store nobody wrote to
            row = self._open().execute(
                "SELECT key, strategy, model, text, created_at FROM summary_artifacts WHERE key = ?", (key,)
            ).fetchone()
        return SummaryArtifact(*row) if row else None

    def put(self, key: str, strategy: SummaryStrategy, model_name: str | None, text: str) -> SummaryArtifact:
        artifact = SummaryArtifact(key, strategy.key, model_name, text, time.time())
        with self._lock:
            self._open().execute(
                "INSERT OR REPLACE INTO summary_artifacts (key, strategy, model, text, created_at) VALUES (?, ?, ?, ?, ?)",
                (artifact.key, artifact.strategy, artifact.model, artifact.text, artifact.created_at),
            )
        return artifact

    def count(self) -> int:
        with self._lock:
            if self._unwritten():
                return 0
            return int(self._open().execute("SELECT COUNT(*) FROM summary_artifacts").fetchone()[0])


class LayeredSummaryStore(SummaryStore):
    """Two stores read as one: ``get`` answers from ``top``, else from ``below``; ``put`` writes to
    ``top`` only. The inspector plans previews against the project's store (``below``) with the
    summaries it prepares itself kept apart, in memory (``top``)."""

    def __init__(self, top: SummaryStore, below: SummaryStore) -> None:
        super().__init__()
        self.top = top
        self.below = below

    def get(self, key: str) -> SummaryArtifact | None:
        return self.top.get(key) or self.below.get(key)

    def put(self, key: str, strategy: SummaryStrategy, model_name: str | None, text: str) -> SummaryArtifact:
        return self.top.put(key, strategy, model_name, text)

    def count(self) -> int:
        return self.top.count() + self.below.count()
