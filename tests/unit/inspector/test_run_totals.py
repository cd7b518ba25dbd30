"""The cost total of ``/runs`` and ``RunStore.usage_by_model``: kept per target, status, origin and
model as runs are written, replaced and pruned, and equal to a sum worked out here, run by run, from
the runs themselves (priced, unpriced, without usage, without a model; every filter)."""

from __future__ import annotations

import random
import re
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from web_runs_fakes import RecordingSession

from crux_devtools.core.record.pricing import cost_usd
from crux_devtools.core.record.runstore import SCHEMA_VERSION, RunStore
from crux_devtools.inspector.features.runs.costs import CostTotal, Prices
from crux_devtools.web.app import create_app

PYPROJECT = """
[tool.crux-devtools.models.priced-a]
context_window = 8192
input_price = 2.0
output_price = 10.0
cache_read_price = 0.5
cache_write_price = 4.0

[tool.crux-devtools.models.priced-b]
context_window = 8192
input_price = 0.25
output_price = 1.25
cache_read_price = 0.025
"""
MODELS = ["priced-a", "priced-b", "unpriced-c", None]
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens")
WORDS = ["refund", "invoice", "sync", "versions", "quota"]


def random_runs(seed: int, count: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    begin = datetime(2026, 3, 1, tzinfo=UTC)
    runs = []
    for n in range(count):
        usage: dict[str, int] | None = None
        if rng.random() < 0.7:
            usage = {"input_tokens": rng.randint(0, 5000), "output_tokens": rng.randint(0, 800)}
            if rng.random() < 0.4:
                usage["cache_read_tokens"] = rng.randint(0, usage["input_tokens"])
        run: dict[str, Any] = {
            "id": f"r{n:04d}",
            "target": rng.choice(["billing-agent", "support-agent", "triage"]),
            "status": rng.choice(["ok", "ok", "error", "max_steps"]),
            "origin": rng.choice(["app", "inspector", "otel"]),
            "started_at": (begin + timedelta(seconds=n)).isoformat(),
            "duration_ms": float(rng.randint(5, 900)),
            "text": " ".join(rng.sample(WORDS, 2)),
            "usage": usage,
            "steps": [],
        }
        model = rng.choice(MODELS)
        if model is not None:
            run["model"] = model
        runs.append(run)
    return runs


def reference_rows(runs: list[dict[str, Any]], **wanted: str) -> list[dict[str, Any]]:
    """``usage_by_model``'s answer worked out run by run in Python: the matching runs grouped by model."""
    rows: dict[Any, dict[str, Any]] = {}
    text = wanted.pop("text", None)
    for run in runs:
        if any(run.get(key, "app" if key == "origin" else None) != value for key, value in wanted.items()):
            continue
        if text is not None and text not in run["text"].split():
            continue
        row = rows.setdefault(run.get("model"), {"model": run.get("model"), "runs": 0, "reported": 0, **dict.fromkeys(USAGE_KEYS, 0)})
        row["runs"] += 1
        usage = run.get("usage") or {}
        row["reported"] += "input_tokens" in usage
        for key in USAGE_KEYS:
            row[key] += usage.get(key, 0)
    return [rows[m] for m in sorted(rows, key=lambda m: (m is not None, m or ""))]


def reference_total(runs: list[dict[str, Any]], prices: Prices, **wanted: str) -> CostTotal:
    """The filter's cost as the sum of each matching run's own cost (not of per-model sums)."""
    amount, priced, unpriced = 0.0, 0, 0
    text = wanted.pop("text", None)
    for run in runs:
        if any(run.get(key, "app" if key == "origin" else None) != value for key, value in wanted.items()):
            continue
        if text is not None and text not in run["text"].split():
            continue
        cost = cost_usd(run.get("usage"), prices.price(run.get("model")))
        if cost is None:
            unpriced += 1
        else:
            amount += cost
            priced += 1
    return CostTotal(amount if priced else None, priced, unpriced)


FILTERS: list[dict[str, str]] = [
    {}, {"target": "billing-agent"}, {"status": "error"}, {"origin": "otel"}, {"target": "triage", "status": "ok"},
    {"text": "refund"}, {"text": "versions", "origin": "app"}, {"target": "nobody"},
]


def test_usage_by_model_equals_the_runs_summed_one_by_one_through_writes_replacements_and_prunes(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    runs = random_runs(seed=31, count=240)
    prices = Prices(tmp_path, known_prices=False)
    with RunStore.for_project(tmp_path) as store:
        with store.batch():
            for run in runs:
                store.write(run)
        runs[7] = {**runs[7], "model": "priced-b", "usage": {"input_tokens": 11, "output_tokens": 3}, "status": "error"}
        store.write(runs[7])  # the same id again: replaced, its old figures taken out of the sums
        assert store.prune(200) == 40  # the oldest 40 go, and their figures with them
        kept = runs[40:]
        for wanted in FILTERS:
            assert store.usage_by_model(**wanted) == reference_rows(kept, **wanted), wanted
            total, expected = prices.total(store.usage_by_model(**wanted)), reference_total(kept, prices, **wanted)
            assert (total.priced, total.unpriced) == (expected.priced, expected.unpriced), wanted
            assert total.amount == pytest.approx(expected.amount), wanted
            assert total.label == expected.label, wanted
            assert sum(row["runs"] for row in store.usage_by_model(**wanted)) == store.count(**wanted), wanted


def test_a_count_that_is_not_an_integer_is_summed_as_sql_sums_the_summaries(tmp_path: Path) -> None:
    """A model that is no text, or a usage count stored as a text or a float (another writer's bug),
    is summed as SQL's ``sum()`` sums it over the summaries' JSON, types included: those filters are
    summed over their runs' rows, the others still from the kept sums."""
    with RunStore.for_project(tmp_path) as store:
        store.write({"id": "a", "target": "t", "model": "m", "usage": {"input_tokens": 10, "output_tokens": 2}})
        store.write({"id": "b", "target": "t", "model": "m", "usage": {"input_tokens": "many", "output_tokens": 1.5}})
        store.write({"id": "c", "target": "u", "model": 7, "usage": {"input_tokens": 7, "output_tokens": 1}})
        store.write({"id": "d", "target": "v", "model": "m", "usage": {"input_tokens": 3, "output_tokens": 1}})
        found = {key: store.usage_by_model(**key_filter) for key, key_filter in (("all", {}), ("t", {"target": "t"}), ("u", {"target": "u"}), ("v", {"target": "v"}))}
        path = store.path
    sums = ", ".join(f"coalesce(sum(json_extract(summary, '$.usage.{k}')), 0)" for k in USAGE_KEYS)
    with sqlite3.connect(path) as db:
        def expected(target: str | None) -> list[dict[str, Any]]:
            where = "" if target is None else " WHERE seq IN (SELECT seq FROM runs WHERE target = ?)"
            rows = db.execute(
                f"SELECT json_extract(summary, '$.model') AS model, count(*), count(json_extract(summary, '$.usage.input_tokens')), {sums}"
                f" FROM run_summaries{where} GROUP BY model ORDER BY model", [] if target is None else [target],
            ).fetchall()
            return [{"model": r[0], "runs": r[1], "reported": r[2], **dict(zip(USAGE_KEYS, r[3:], strict=True))} for r in rows]

        for key in ("all", "t", "u", "v"):
            want = expected(None if key == "all" else key)
            assert found[key] == want and [[type(v) for v in row.values()] for row in found[key]] == [[type(v) for v in row.values()] for row in want], key
    assert isinstance(found["t"][0]["input_tokens"], float)  # SQL's sum() of an integer and a text


def test_a_version_3_file_gets_its_usage_sums_on_open(tmp_path: Path) -> None:
    runs = random_runs(seed=5, count=60)
    with RunStore.for_project(tmp_path) as store:
        for run in runs:
            store.write(run)
    path = tmp_path / ".crux" / "runs.sqlite3"
    with sqlite3.connect(path) as db:  # the file as the release before this one left it
        for trigger in ("runs_usage_added", "runs_usage_removed"):
            db.execute(f"DROP TRIGGER {trigger}")
        db.execute("DROP TABLE run_usage")
        for column in ("model", "duration_ms", "usage_input", "usage_output", "usage_cache_read", "usage_cache_write", "usage_cache_write_1h"):
            db.execute(f"ALTER TABLE runs DROP COLUMN {column}")
        db.execute("PRAGMA user_version = 3")
    with RunStore(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        for wanted in FILTERS:
            assert store.usage_by_model(**wanted) == reference_rows(runs, **wanted), wanted
        assert [f["id"] for f in store.figures(limit=5)] == [r["id"] for r in reversed(runs[-5:])]
        store.write({**runs[0], "id": "late", "started_at": "2026-04-01T00:00:00+00:00"})  # the triggers work after the migration
        assert sum(r["runs"] for r in store.usage_by_model()) == 61


def test_figures_are_each_runs_own_numbers_and_price_as_its_list_row(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    runs = random_runs(seed=8, count=30)
    prices = Prices(tmp_path, known_prices=False)
    with RunStore.for_project(tmp_path) as store:
        for run in runs:
            store.write(run)
        figures = store.figures(status="ok", limit=100)
        listed = store.list(status="ok", limit=100)
    assert [f["id"] for f in figures] == [r["id"] for r in listed]
    by_id = {r["id"]: r for r in runs}
    for figure, summary in zip(figures, listed, strict=True):
        run = by_id[figure["id"]]
        assert figure["duration_ms"] == run["duration_ms"] and figure["model"] == run.get("model") and figure["target"] == run["target"]
        assert figure["usage"] == run["usage"]
        assert prices.run_cost(figure) == prices.run_cost(summary)


@pytest.fixture
def session(tmp_path: Path) -> RecordingSession:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    return RecordingSession(tmp_path, agent_ids=("billing-agent",))


async def test_the_runs_page_total_is_the_sum_of_the_matching_runs_costs(session: RecordingSession, tmp_path: Path) -> None:
    runs = random_runs(seed=12, count=120)
    for run in runs:
        session.store.write(run)
    prices = Prices(tmp_path, known_prices=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(session)), base_url="http://127.0.0.1:4400") as client:
        for wanted in FILTERS:
            query = {("q" if key == "text" else key): value for key, value in wanted.items()}
            page = (await client.get("/runs", params=query)).text
            shown = re.search(r'id="runs-cost".*?<b class="mono">(.*?)</b>', page, re.S)
            matching = reference_total(runs, prices, **wanted)
            if matching.priced + matching.unpriced == 0:
                assert shown is None or shown.group(1) == "unpriced", wanted
                continue
            assert shown is not None and shown.group(1) == matching.label, wanted
            assert f"{matching.priced + matching.unpriced:,}" in page
