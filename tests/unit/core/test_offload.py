"""The offload store (SQLite, content-addressed, namespace-scoped) and type-aware previews."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from crux_devtools import OffloadStore
from crux_devtools.core.plan.offload_store import OffloadError, make_handle, preview_text, read_offload_tool, reference_text
from crux_devtools.core.plan.summaries import SummaryStore, artifact_key, summarize
from crux_devtools.core.tokens import default_counter


def test_a_value_is_stored_in_the_named_sqlite_file_and_read_back_exactly(tmp_path: Path) -> None:
    path = tmp_path / "offload.db"
    store = OffloadStore(path)
    receipt = store.put("ns", "log", "line one\nline two ü")
    assert receipt.byte_size == len("line one\nline two ü".encode())
    assert receipt.revision == 1 and receipt.handle == make_handle("ns", "log")
    store.close()
    reopened = OffloadStore(path)
    assert reopened.get("ns", receipt.handle) == "line one\nline two ü"
    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM offload_blobs").fetchone()[0] == 1


def test_the_same_content_keeps_its_revision_and_new_content_gets_the_next() -> None:
    store = OffloadStore()
    first = store.put("ns", "log", "a")
    assert store.put("ns", "log", "a") == first
    second = store.put("ns", "log", "b")
    assert (second.handle, second.revision) == (first.handle, 2)
    assert store.get("ns", first.handle) == "b"
    assert store.get("ns", first.handle, revision=1) == "a"


def test_blobs_are_content_addressed_across_handles(tmp_path: Path) -> None:
    path = tmp_path / "o.db"
    store = OffloadStore(path)
    store.put("ns", "one", "same text")
    store.put("other", "two", "same text")
    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM offload_blobs").fetchone()[0] == 1


def test_a_handle_from_another_namespace_cannot_be_read() -> None:
    store = OffloadStore()
    receipt = store.put("session-a", "log", "secret log")
    with pytest.raises(OffloadError, match="unknown offload handle"):
        store.read("session-b", receipt.handle)
    tool_b = read_offload_tool(store, "session-b")
    params = tool_b.parameters.model_validate({"handle": receipt.handle})
    with pytest.raises(OffloadError):
        tool_b.execute(params)


def test_read_pages_through_the_exact_text() -> None:
    store = OffloadStore()
    text = "".join(str(i % 10) for i in range(25))
    handle = store.put("ns", "k", text).handle
    first = store.read("ns", handle, 0, 10)
    assert first["content"] == text[:10] and first["next_offset"] == 10 and first["total_chars"] == 25
    last = store.read("ns", handle, 20, 10)
    assert last["content"] == text[20:] and last["next_offset"] is None
    with pytest.raises(OffloadError, match="offset"):
        store.read("ns", handle, -1, 10)


def test_byte_size_of_a_non_string_is_that_of_its_compact_json() -> None:
    value = {"rows": [1, 2, 3], "name": "é"}
    receipt = OffloadStore().put("ns", "k", value)
    assert receipt.byte_size == len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def test_handles_are_opaque_and_cost_the_same_number_of_tokens() -> None:
    counter = default_counter()
    handles = [make_handle(f"ns{i}", "key") for i in range(30)]
    assert all("ns" not in h and "key" not in h for h in handles)
    assert len({counter.count(f'handle="{h}"') for h in handles}) == 1


def test_previews_are_type_aware_and_bounded() -> None:
    counter = default_counter()
    log = "\n".join(f"2026-11-29 12:00:{i % 60:02d} INFO request {i} served in {i % 97} ms" for i in range(5000))
    text, kind = preview_text(log, counter)
    assert kind == "lines" and "5000 lines" in text and counter.count(text) <= 256
    data = {"items": list(range(10_000)), "owner": "nimbus"}
    text, kind = preview_text(data, counter)
    assert kind == "json" and "2 keys" in text and counter.count(text) <= 256
    text, kind = preview_text("word " * 5000, counter)
    assert kind == "text" and counter.count(text) <= 256


def test_the_reference_text_names_the_handle_and_read_offload() -> None:
    text = reference_text("log", "ofl_123", "x" * 10)
    assert 'read_offload(handle="ofl_123"' in text


def test_summary_artifacts_are_content_addressed_and_persist(tmp_path: Path) -> None:
    strategy = summarize.extractive()
    key = artifact_key("source", strategy, None)
    assert key != artifact_key("source!", strategy, None)
    assert key != artifact_key("source", summarize.extractive(0.5), None)
    assert key != artifact_key("source", strategy, "model-a")
    store = SummaryStore(tmp_path / "s.db")
    store.put(key, strategy, None, "summary")
    store.close()
    again = SummaryStore(tmp_path / "s.db").get(key)
    assert again is not None and again.text == "summary"
