"""Web inspector measures: save-to-DOM latency in a real browser, and server time per page.

    .venv/bin/python benchmarks/bench_web.py [--saves 20]

1. Serves a copy of ``sample_project/`` with the real ``ProjectSession``, opens the largest prompt in
   Debian's Chromium (the request as sent, the page's default view), then saves a source file ``--saves`` times. For each save it measures, in the
   browser's own clock, the time from the write to the moment the new text is in the DOM (a
   MutationObserver stamps it). Prints the median and the spread; the target is 250 ms or less.
2. Times the server's answer for that prompt's page (the full page and the htmx block, with and
   without a budget), median over 30 requests each over one keep-alive connection.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from web_conftest_helpers import chromium, live_server, new_page  # noqa: E402

from crux_devtools.inspector.session.service import ProjectSession  # noqa: E402
from crux_devtools.web.app import create_app  # noqa: E402

TARGET_MS = 250.0
PAUSE = 1.0  # seconds between saves, as when a person edits; the worker pool re-warms meanwhile

OBSERVE = """
(marker) => new Promise((resolve) => {
  const seen = () => document.querySelector('#sent-system, #system-text')?.textContent.includes(marker);
  if (seen()) { resolve(Date.now()); return; }
  const obs = new MutationObserver(() => { if (seen()) { obs.disconnect(); resolve(Date.now()); } });
  obs.observe(document.body, { childList: true, subtree: true, characterData: true });
})
"""


def largest_prompt(report: dict[str, Any]) -> dict[str, Any]:
    return max(report["prompts"], key=lambda p: int(p.get("total_tokens") or 0))


def find_source_line(project: Path, prompt: dict[str, Any]) -> tuple[Path, str]:
    """The prompt's own file and a quoted piece of its own system text (always kept under a budget)."""
    own = (prompt["examples"][0].get("inspection") or {}).get("parts", [{}])[0].get("text", "")
    path = project / prompt["file"]
    for line in path.read_text().splitlines():
        for piece in line.split('"')[1::2]:
            if len(piece) > 20 and piece in own:
                return path, piece
    raise SystemExit(f"could not find the system text of {prompt['id']!r} in {path}")


async def save_to_dom(url: str, session: ProjectSession, project: Path, prompt: dict[str, Any], saves: int) -> tuple[list[float], list[float]]:
    """Per save: (write -> new text in the DOM, the session's report event -> new text in the DOM)."""
    path, piece = find_source_line(project, prompt)
    original = path.read_text()
    latencies: list[float] = []
    web_part: list[float] = []
    reported: list[float] = []
    session.subscribe(lambda event: reported.append(time.time() * 1000.0) if event.kind == "report" else None)
    async with chromium() as browser, new_page(browser) as page:
        await page.goto(f"{url}/prompts/{prompt['id']}")
        await page.wait_for_selector("#live-status[data-state='live']")
        for n in range(saves + 1):  # the first save warms the worker; not counted
            marker = f"edit-{n}-{time.time_ns()}"
            waiter = asyncio.ensure_future(page.evaluate(OBSERVE, marker))
            await asyncio.sleep(0.05)  # the observer is installed
            reported.clear()
            written = time.time() * 1000.0
            path.write_text(original.replace(piece, f"{piece} {marker}", 1))
            seen = await asyncio.wait_for(waiter, 20)
            if n:
                latencies.append(seen - written)
                web_part.append(seen - reported[-1])
            await asyncio.sleep(PAUSE)
    path.write_text(original)
    return latencies, web_part


def server_times(url: str, prompt_id: str, runs: int = 30) -> dict[str, tuple[float, float]]:
    """Per case: the median wall time of one request, and the CPU time of this process per request
    (server and client share the process; CPU time is what a loaded machine disturbs least)."""
    results: dict[str, tuple[float, float]] = {}
    cases = {
        "full page": ({}, {}),
        "htmx block": ({}, {"HX-Request": "true"}),
        "block with budget (worker re-plan)": ({"budget": "BUDGET"}, {"HX-Request": "true"}),
    }
    with httpx.Client(base_url=url) as client:
        client.get("/")
        for label, (params, headers) in cases.items():
            samples = []
            cpu = time.process_time()
            for i in range(runs):
                query = {k: (str(80 + i) if v == "BUDGET" else v) for k, v in params.items()}
                start = time.perf_counter()
                r = client.get(f"/prompts/{prompt_id}", params=query, headers=headers)
                samples.append((time.perf_counter() - start) * 1000.0)
                r.raise_for_status()
            results[label] = (statistics.median(samples), (time.process_time() - cpu) * 1000.0 / runs)
    return results


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=20)
    parser.add_argument("--prompt", help="time this prompt instead of the largest (to compare with an older run)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "sample"
        shutil.copytree(REPO / "sample_project", project, ignore=shutil.ignore_patterns("data", "__pycache__", ".crux"))
        session = ProjectSession(project, history=False)
        with live_server(create_app(session)) as server:
            report = session.report or {}
            prompt = next(p for p in report["prompts"] if p["id"] == args.prompt) if args.prompt else largest_prompt(report)
            print(f"project: sample_project (copy); {'prompt' if args.prompt else 'largest prompt'}: {prompt['id']} ({prompt['total_tokens']} tokens)")
            times = server_times(server.url, prompt["id"], runs=60)
            for label, (ms, cpu_ms) in times.items():
                print(f"server time, {label}: median {ms:.1f} ms wall, {cpu_ms:.1f} ms CPU per request")
            latencies, web_part = await save_to_dom(server.url, session, project, prompt, args.saves)
    median = statistics.median(latencies)
    print(
        f"save-to-DOM latency over {len(latencies)} saves: median {median:.0f} ms "
        f"(min {min(latencies):.0f}, max {max(latencies):.0f}; target <= {TARGET_MS:.0f} ms: {'met' if median <= TARGET_MS else 'NOT met'})"
    )
    print(
        f"  of which the session's re-evaluation (save -> report event): median {statistics.median(a - b for a, b in zip(latencies, web_part)):.0f} ms; "
        f"the web part (report event -> SSE -> htmx fetch -> DOM): median {statistics.median(web_part):.0f} ms"
    )


if __name__ == "__main__":
    asyncio.run(main())
