"""Runs over time: ``/runs`` with its charts at 10,000 runs against 100, and a 500-step run's page.

    .venv/bin/python benchmarks/bench_web_runs_charts.py [--many 10000] [--few 100] [--steps 500]

1. Two copies of ``sample_project/`` whose ``.crux/runs.sqlite3`` hold ``--few`` and ``--many`` runs
   of the sample agent (its tokens and durations varied run to run), served by uvicorn with the real
   ``ProjectSession``. Times the server's answer to ``/runs`` (the full page, charts included, and
   the htmx list block the filters swap), median of 40 requests taking turns; and the charts alone
   (``run_series`` + ``run_charts``). Prints each ratio many/few; target <= 2x.
2. A run of ``--steps`` steps (the sample agent's steps repeated): the size of ``/runs/{id}``, of
   its glance section, and the server's median time for it.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_web_runs import copy_project, live_server, sample_run  # noqa: E402

from crux_devtools.core.record.runstore import RunStore  # noqa: E402
from crux_devtools.inspector.features.runs.costs import prices_for  # noqa: E402
from crux_devtools.inspector.features.runs.series import run_series  # noqa: E402
from crux_devtools.inspector.session.service import ProjectSession  # noqa: E402
from crux_devtools.web.app import create_app  # noqa: E402
from crux_devtools.web.views.charts import run_charts  # noqa: E402

RATIO_TARGET = 2.0


def fill(project: Path, template: dict[str, Any], count: int) -> None:
    """``count`` runs a second apart whose tokens, durations and usage vary, so the charts have a shape."""
    begin = datetime(2026, 1, 1, tzinfo=UTC)
    with RunStore.for_project(project) as store, store.batch():
        for n in range(count):
            store.write({**template, "id": f"run-{n:06d}", "started_at": (begin + timedelta(seconds=n)).isoformat(),
                         "duration_ms": 10.0 + (n * 37) % 90, "usage": {"input_tokens": 900 + (n * 13) % 400, "output_tokens": 40},
                         "text": f"{template['text']} (run {n})"})


def median_ms(client: httpx.Client, path: str, headers: dict[str, str], samples: int) -> float:
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        client.get(path, headers=headers).raise_for_status()
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def charts_ms(project: Path, samples: int = 20) -> float:
    prices = prices_for(project)
    with RunStore.for_project(project, create=False) as store:
        times = []
        for _ in range(samples):
            start = time.perf_counter()
            run_charts(run_series(store, prices))
            times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def store_ms(project: Path, call: str, samples: int = 10) -> float:
    """The store's own time for one of the page's other reads (to tell the charts' share from theirs)."""
    with RunStore.for_project(project, create=False) as store:
        times = []
        for _ in range(samples):
            start = time.perf_counter()
            getattr(store, call)()
            times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--many", type=int, default=10_000)
    parser.add_argument("--few", type=int, default=100)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--samples", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        few, many = copy_project(tmp, "few"), copy_project(tmp, "many")
        template = sample_run(few)
        fill(few, template, args.few)
        fill(many, template, args.many)
        steps = []
        for n in range(args.steps):
            step = copy.deepcopy(template["steps"][n % len(template["steps"])])
            step.update(index=n, started_ms=n * 30.0, latency_ms=20.0 + n % 7, tool_ms=3.0 if n % 2 == 0 else None)
            steps.append(step)
        with RunStore.for_project(few) as store:
            store.write({**template, "id": "long-run", "steps": steps, "duration_ms": args.steps * 30.0,
                         "started_at": datetime(2027, 1, 1, tzinfo=UTC).isoformat()})
        sessions = {args.few: ProjectSession(few, history=False), args.many: ProjectSession(many, history=False)}
        with live_server(create_app(sessions[args.few])) as few_server, live_server(create_app(sessions[args.many])) as many_server:
            few_server.call(sessions[args.few].settled())
            many_server.call(sessions[args.many].settled())
            servers = {args.few: few_server.url, args.many: many_server.url}
            clients = {count: httpx.Client(base_url=url, timeout=60) for count, url in servers.items()}
            worst = 0.0
            try:
                for label, headers in (("full page with charts", {}), ("htmx list block with charts", {"HX-Request": "true"})):
                    for client in clients.values():
                        for _ in range(3):
                            client.get("/runs", headers=headers).raise_for_status()
                    times: dict[int, list[float]] = {count: [] for count in clients}
                    for _ in range(args.samples):
                        for count, client in clients.items():
                            times[count].append(median_ms(client, "/runs", headers, 1))
                    a, b = statistics.median(times[args.few]), statistics.median(times[args.many])
                    worst = max(worst, b / a)
                    print(f"/runs server time, {label}: {a:.1f} ms with {args.few:,} runs, {b:.1f} ms with {args.many:,}: ratio {b / a:.2f}x")
                page = clients[args.few].get("/runs/long-run")
                page.raise_for_status()
                text = page.text
                start = text.find('id="run-glance"')
                glance = text.find("</section>", start) - start
                long_ms = median_ms(clients[args.few], "/runs/long-run", {}, 5)
            finally:
                for client in clients.values():
                    client.close()
        alone = {count: charts_ms(project) for count, project in ((args.few, few), (args.many, many))}
        print(f"  the charts alone (run_series + run_charts): {alone[args.few]:.1f} ms with {args.few:,} runs, {alone[args.many]:.1f} ms with {args.many:,}")
        totals = {count: store_ms(project, "usage_by_model") for count, project in ((args.few, few), (args.many, many))}
        print(f"  the cost total the page also reads (RunStore.usage_by_model): {totals[args.few]:.1f} ms with {args.few:,} runs, {totals[args.many]:.1f} ms with {args.many:,}")
        print(f"charts alone ratio {alone[args.many] / alone[args.few]:.2f}x (target <= {RATIO_TARGET:.0f}x)")
        print(f"worst ratio {worst:.2f}x (target <= {RATIO_TARGET:.0f}x: {'met' if worst <= RATIO_TARGET else 'NOT met'})")
        print(f"/runs/{{id}} of a {args.steps}-step run: {len(text) / 1e6:.2f} MB, of which the glance (timeline and bars) {glance / 1e3:.0f} KB "
              f"({glance / args.steps:.0f} bytes a step); server time median {long_ms:.0f} ms")


if __name__ == "__main__":
    main()
