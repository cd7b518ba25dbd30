"""The provider's cache reads and writes are shown beside its input and output in every front end
(one sentence, ``cache_usage_text``), and not at all when it reported none."""

from __future__ import annotations

from crux_devtools.core.record.pricing import cache_usage_text
from crux_devtools.inspector.features.runs.text import usage
from crux_devtools.tui.runs_render import fmt_usage

CACHED = {"input_tokens": 3_000, "output_tokens": 20, "cache_read_tokens": 2_000, "cache_write_tokens": 400, "cache_write_1h_tokens": 100}


def test_cache_reads_and_writes_are_shown_with_the_usage():
    assert cache_usage_text(CACHED) == "cache read 2,000 · written 400 (1h 100)"
    assert usage(CACHED) == "3,000/20 (cache read 2,000 · written 400 (1h 100))"
    assert fmt_usage(CACHED) == "3,000/20 (cache read 2,000 · written 400 (1h 100))"


def test_usage_without_cache_tokens_says_nothing_of_the_cache():
    plain = {"input_tokens": 12, "output_tokens": 3}
    assert cache_usage_text(plain) is None
    assert usage(plain) == "12/3"
    assert fmt_usage(plain) == "12/3"
