"""Recorded runs in the web inspector: ``/runs`` server time at 10,000 runs against 100, and how soon a
run written by another process is on an open page.

    .venv/bin/python benchmarks/bench_web_runs.py [--many 10000] [--few 100] [--writes 20]

1. Two copies of ``sample_project/`` whose ``.crux/runs.sqlite3`` hold ``--few`` and ``--many`` runs
   (copies of one real recorded run of the sample agent, a second apart, written with the real
   ``RunStore``). Each is served by uvicorn with the real ``ProjectSession``; the server's answer to
   ``/runs`` (the full page, the htmx list block, a filter, a text search, a deep page) is timed,
   median of 30 requests over one keep-alive connection. Prints each ratio many/few; target <= 2x.
2. Opens ``/runs`` in Debian's Chromium; a separate Python process records a run every
   ``--pause`` seconds with the real ``RunStore`` and prints the wall-clock time of each commit; a
   MutationObserver in the page stamps when that run's row is in the DOM. Prints the median of
   (row in the DOM - commit); target <= 500 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from web_conftest_helpers import chromium, live_server, new_page  # noqa: E402

from crux_devtools.core.record.runstore import RunStore  # noqa: E402
from crux_devtools.inspector.session.service import ProjectSession  # noqa: E402
from crux_devtools.web.app import create_app  # noqa: E402
from crux_devtools.web.views.runs import SEARCH_SCOPE  # noqa: E402

RATIO_TARGET = 2.0
LATENCY_TARGET_MS = 500.0

SAMPLE_RUN = """
import importlib.util, json, sys
sys.path.insert(0, sys.argv[1])
spec = importlib.util.spec_from_file_location("sample_agent", sys.argv[1] + "/05_agent.py")
module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
from crux_devtools import generate
result = generate(module.support_agent, input=module.agent_reply.examples["quiet-day"])
print(json.dumps(result.to_dict()))
"""

WRITER = """
import json, sys, time, uuid
from crux_devtools.core.record.runstore import RunStore
from datetime import UTC, datetime
store = RunStore.for_project(sys.argv[1])
template = json.loads(open(sys.argv[2]).read())
count, pause = int(sys.argv[3]), float(sys.argv[4])
for n in range(count):
    time.sleep(pause)
    run = dict(template, id=f"live-{n}-{uuid.uuid4().hex[:6]}", started_at=datetime.now(UTC).isoformat())
    store.write(run)
    print(json.dumps({"id": run["id"], "written": time.time() * 1000.0}), flush=True)
"""

OBSERVE = """
() => {
  window.__seen = {};
  const stamp = () => document.querySelectorAll('#runs-list tr.run-row').forEach((tr) => {
    if (!(tr.dataset.id in window.__seen)) { window.__seen[tr.dataset.id] = Date.now(); }
  });
  stamp();
  new MutationObserver(stamp).observe(document.body, { childList: true, subtree: true });
}
"""


def sample_run(project: Path) -> dict[str, Any]:
    """One real run of the sample agent (in a child process, as an application would run it)."""
    out = subprocess.run([sys.executable, "-c", SAMPLE_RUN, str(project)], capture_output=True, text=True, check=True, cwd=project)
    result = json.loads(out.stdout)
    return {
        "target": "support-agent", "kind": "agent", "file": "05_agent.py", "line": 150, "origin": "app",
        "duration_ms": 12.0, "status": "ok", "error": None, "model": "nimbus-scripted",
        "input": {"question": "Which plan keeps 30 days of versions?", "log_hours": 1},
        "text": result["text"], "usage": None, "steps": result["steps"],
    }


def copy_project(tmp: Path, name: str) -> Path:
    root = tmp / name
    shutil.copytree(REPO / "sample_project", root, ignore=shutil.ignore_patterns("data", "__pycache__", ".crux"))
    return root


def fill(project: Path, template: dict[str, Any], count: int) -> float:
    """Write ``count`` runs, a second apart, with the real store; returns the seconds it took."""
    start = time.perf_counter()
    begin = datetime(2026, 1, 1, tzinfo=UTC)
    with RunStore.for_project(project) as store:
        for n in range(count):
            status = "error" if n % 10 == 3 else "ok"
            store.write({**template, "id": f"run-{n:06d}", "status": status, "started_at": (begin + timedelta(seconds=n)).isoformat(), "text": f"{template['text']} (run {n})"})
    return time.perf_counter() - start


CASES: dict[str, tuple[str, dict[str, str]]] = {
    "full page": ("/runs", {}),
    "htmx list block (the live refresh)": ("/runs", {"HX-Request": "true"}),
    "filtered: status=ok": ("/runs?status=ok", {"HX-Request": "true"}),
    "text search: q=versions": ("/runs?q=versions", {"HX-Request": "true"}),
    "page 2": ("/runs?page=2", {"HX-Request": "true"}),
    "JSON /api/runs": ("/api/runs", {}),
}


def server_times(urls: dict[int, str], samples: int = 60) -> dict[int, dict[str, float]]:
    """Median server time per case and store size; the sizes take turns, so background work (the
    sessions' store polling, the worker) weighs on both alike."""
    results: dict[int, dict[str, float]] = {count: {} for count in urls}
    clients = {count: httpx.Client(base_url=url, timeout=30) for count, url in urls.items()}
    try:
        for label, (path, headers) in CASES.items():
            times: dict[int, list[float]] = {count: [] for count in urls}
            for client in clients.values():
                for _ in range(3):
                    client.get(path, headers=headers).raise_for_status()  # warm
            for _ in range(samples):
                for count, client in clients.items():
                    start = time.perf_counter()
                    client.get(path, headers=headers).raise_for_status()
                    times[count].append((time.perf_counter() - start) * 1000.0)
            for count in urls:
                results[count][label] = statistics.median(times[count])
    finally:
        for client in clients.values():
            client.close()
    return results


def store_search_ms(project: Path, samples: int = 20, at_most: int | None = SEARCH_SCOPE + 1) -> float:
    """The store's own time for the text search the page runs: the list of one page and the count,
    up to one more than the page reads (``SEARCH_SCOPE``), or of every match with ``at_most=None``."""
    with RunStore.for_project(project, create=False) as store:
        times = []
        for _ in range(samples):
            start = time.perf_counter()
            store.list(text="versions", limit=50)
            store.count(text="versions", at_most=at_most)
            times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


async def write_to_dom(url: str, project: Path, template_file: Path, writes: int, pause: float) -> list[float]:
    async with chromium() as browser, new_page(browser) as page:
        await page.goto(url + "/runs")
        await page.wait_for_selector("#live-status[data-state='live']")
        await page.evaluate(OBSERVE)
        writer = await asyncio.create_subprocess_exec(
            sys.executable, "-c", WRITER, str(project), str(template_file), str(writes), str(pause), stdout=asyncio.subprocess.PIPE
        )
        written: dict[str, float] = {}
        assert writer.stdout is not None
        async for line in writer.stdout:
            record = json.loads(line)
            written[record["id"]] = record["written"]
        await writer.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            seen = await page.evaluate("window.__seen")
            if all(run_id in seen for run_id in written):
                break
            await asyncio.sleep(0.1)
        seen = await page.evaluate("window.__seen")
    missing = [run_id for run_id in written if run_id not in seen]
    if missing:
        raise SystemExit(f"{len(missing)} of {len(written)} runs never appeared on the open page: {missing[:3]}")
    return [seen[run_id] - written[run_id] for run_id in written]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--many", type=int, default=10_000)
    parser.add_argument("--few", type=int, default=100)
    parser.add_argument("--writes", type=int, default=20)
    parser.add_argument("--pause", type=float, default=0.7, help="seconds between two runs written by the other process")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        few, many = copy_project(tmp, "few"), copy_project(tmp, "many")
        template = sample_run(few)
        template_file = tmp / "run.json"
        template_file.write_text(json.dumps(template))
        steps_kb = len(json.dumps(template["steps"])) / 1024
        took = fill(few, template, args.few), fill(many, template, args.many)
        print(f"stores: {args.few:,} and {args.many:,} runs of the sample agent ({len(template['steps'])} steps, {steps_kb:.0f} KB each); written in {took[0]:.1f} s and {took[1]:.1f} s")
        few_session, many_session = ProjectSession(few, history=False), ProjectSession(many, history=False)
        with live_server(create_app(few_session)) as few_server, live_server(create_app(many_session)) as many_server:
            few_server.call(few_session.settled())
            many_server.call(many_session.settled())
            timings = server_times({args.few: few_server.url, args.many: many_server.url})
            latencies = await write_to_dom(many_server.url, many, template_file, args.writes, args.pause)
        store_ms = {count: store_search_ms(project) for count, project in ((args.few, few), (args.many, many))}
        exact_ms = {count: store_search_ms(project, at_most=None) for count, project in ((args.few, few), (args.many, many))}
        worst = 0.0
        for label in CASES:
            a, b = timings[args.few][label], timings[args.many][label]
            worst = max(worst, b / a)
            print(f"/runs server time, {label}: {a:.1f} ms with {args.few:,} runs, {b:.1f} ms with {args.many:,}: ratio {b / a:.2f}x")
        print(
            f"  of the text search, RunStore.list(text=...) + count(text=..., at_most={SEARCH_SCOPE + 1:,}) alone take {store_ms[args.few]:.1f} ms "
            f"with {args.few:,} runs and {store_ms[args.many]:.1f} ms with {args.many:,} (counting every match: {exact_ms[args.few]:.1f} and {exact_ms[args.many]:.1f} ms)"
        )
        print(f"worst ratio {worst:.2f}x (target <= {RATIO_TARGET:.0f}x: {'met' if worst <= RATIO_TARGET else 'NOT met'})")
        median = statistics.median(latencies)
        print(
            f"a run written by another process is on the open /runs page after: median {median:.0f} ms over {len(latencies)} runs "
            f"(min {min(latencies):.0f}, max {max(latencies):.0f}; target <= {LATENCY_TARGET_MS:.0f} ms: {'met' if median <= LATENCY_TARGET_MS else 'NOT met'})"
        )


if __name__ == "__main__":
    asyncio.run(main())
