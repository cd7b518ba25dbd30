"""History at scale: the page of an unchanged prompt after many saves, and `.crux/` growth per save.

    .venv/bin/python benchmarks/bench_scale_history.py [--modules 100] [--saves 60] [--requests 20]

On ``scale_project.make_project(modules=100)`` with a real ``ProjectSession`` (history on, the file
watcher on), in one run:

(a) the server time of the web page of a prompt in a module no save touches (the full page of its
    first example, which asks the history for the previous version), over the in-process web app
    (httpx ``ASGITransport`` over ``create_app``), the best of 3 rounds of ``--requests`` requests at the start,
    and again after ``--saves`` saves of OTHER modules (``touch_module`` with a new edit each time, so
    every save is a new version of that module's prompts). Target: after / start <= 1.5 (was x23).
(b) ``.crux/`` growth per one-module save against the size of one whole report JSON, measured on the
    closed files (a first session loads the project and closes; the measured session saves
    ``--saves`` times and closes; WAL folded in). The size with the session still open (WAL and
    shared-memory files counted) is printed too. Target: growth per save <= 1/5 of a report (was 1.1x).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from scale_project import make_project, touch_module  # noqa: E402

from crux_devtools.inspector.session.service import ProjectSession  # noqa: E402
from crux_devtools.web.app import create_app  # noqa: E402

PAGE_TARGET = 1.5
GROWTH_TARGET = 0.2


def crux_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in (root / ".crux").iterdir() if p.is_file())


def history_bytes(root: Path) -> int:
    """The history file and its WAL and shared-memory files, as they are on disk now."""
    return sum(p.stat().st_size for p in (root / ".crux").glob("devtools.sqlite3*"))


async def page_times(client: httpx.AsyncClient, prompt_id: str, example: str, requests: int, rounds: int = 3) -> tuple[float, float, str]:
    """Wall ms (median of a round) and CPU ms per request (server and client share this process),
    each the lowest of ``rounds`` rounds: the machine is shared, and what other processes take is noise."""
    url = f"/prompts/{prompt_id}"
    await asyncio.sleep(1.0)  # the session's own follow-up work (priming the next worker) is done
    await client.get(url, params={"example": example})  # warm
    walls, cpus = [], []
    body = ""
    for _ in range(rounds):
        samples = []
        cpu = time.process_time()
        for _ in range(requests):
            start = time.perf_counter()
            answer = await client.get(url, params={"example": example})
            samples.append((time.perf_counter() - start) * 1000.0)
            answer.raise_for_status()
            body = answer.text
        cpus.append((time.process_time() - cpu) * 1000.0 / requests)
        walls.append(statistics.median(samples))
    return min(walls), min(cpus), body


async def settle(session: ProjectSession) -> None:
    """No evaluation running and the history writes done (so sizes and pages see the same state)."""
    await session.settled()
    while session._reports.writes:  # the history write runs off the event loop after each report
        await asyncio.gather(*list(session._reports.writes), return_exceptions=True)


async def save_and_wait(session: ProjectSession, root: Path, module: int, edit: str) -> None:
    version = session.report["version"] if session.report else 0
    touch_module(root, module, edit)
    deadline = time.monotonic() + 120
    wanted = f"m{module:03d}-prompt-0"

    def shows_edit() -> bool:
        report = session.report or {}
        prompt = next((p for p in report.get("prompts", []) if p["id"] == wanted), None)
        return report.get("version", 0) > version and prompt is not None and edit in json.dumps(prompt)

    while not shows_edit():
        if time.monotonic() > deadline:
            raise SystemExit(f"no report after saving mod_{module:03d}.py")
        await asyncio.sleep(0.02)
    await settle(session)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=int, default=100)
    parser.add_argument("--saves", type=int, default=60)
    parser.add_argument("--requests", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = make_project(Path(tmp) / "p", modules=args.modules)
        quiet = args.modules - 1  # its module is never saved
        prompt_id, example = f"m{quiet:03d}-prompt-0", "plain"
        edited = list(range(min(10, quiet)))  # the saved modules, in turn

        first = ProjectSession(root, history=True)
        started = time.perf_counter()
        await first.start()
        await settle(first)
        report = first.report or {}
        report_bytes = len(json.dumps(report).encode("utf-8"))
        print(f"project: {args.modules} modules, {len(report.get('prompts', []))} prompts; first load {time.perf_counter() - started:.1f} s")
        print(f"one whole report JSON: {report_bytes / 1024:.0f} KB")
        await first.stop()
        closed_before = crux_bytes(root)

        session = ProjectSession(root, history=True)
        await session.start()
        await settle(session)
        app = create_app(session, manage_session=False)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            start_ms, start_cpu, _ = await page_times(client, prompt_id, example, args.requests)
            open_before = history_bytes(root)
            saves_started = time.perf_counter()
            for n in range(args.saves):
                await save_and_wait(session, root, edited[n % len(edited)], f"Edit {n}.")
            saves_s = time.perf_counter() - saves_started
            open_after = history_bytes(root)
            after_ms, after_cpu, body = await page_times(client, prompt_id, example, args.requests)
            # the page of a prompt that did change (its diff is shown): a check that the history answers
            changed_id = f"m{edited[(args.saves - 1) % len(edited)]:03d}-prompt-0"
            changed = await client.get(f"/prompts/{changed_id}", params={"example": example})
        assert session.history is not None, session.history_warning
        previous = session.previous_system(changed_id, example)
        diff_shown = 'class="dl dl-add"' in changed.text
        lookups = []
        for _ in range(200):
            t = time.perf_counter()
            session.history.previous_system(prompt_id, example, "a text that is not stored")
            lookups.append((time.perf_counter() - t) * 1e6)
        await session.stop()
        closed_after = crux_bytes(root)

    print(f"{args.saves} saves of {len(edited)} other modules took {saves_s:.0f} s")
    print(
        f"changed prompt {changed_id}: page {changed.status_code}; its previous version is found: "
        f"{previous is not None and f'Edit {args.saves - 1}.' not in previous}; its page shows the diff: {diff_shown}"
    )
    print(f"history.previous_system alone: median {statistics.median(lookups):.0f} us (one indexed read)")
    ratio = after_ms / start_ms
    cpu_ratio = after_cpu / start_cpu
    print(f"(a) page of unchanged prompt {prompt_id}?example={example}, server time (lowest of 3 rounds of {args.requests} requests; wall: median of a round):")
    print(f"    at the start      {start_ms:7.1f} ms wall, {start_cpu:7.1f} ms CPU per request")
    print(f"    after {args.saves:3d} saves   {after_ms:7.1f} ms wall, {after_cpu:7.1f} ms CPU per request")
    print(f"    ratio after/start: {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU (target <= {PAGE_TARGET}x: {'met' if ratio <= PAGE_TARGET else 'NOT met'}; was x23)")
    growth = (closed_after - closed_before) / args.saves
    open_growth = (open_after - open_before) / args.saves
    print("(b) .crux/ growth per one-module save:")
    print(f"    closed files: {closed_before / 1024:.0f} KB -> {closed_after / 1024:.0f} KB over {args.saves} saves = {growth / 1024:.1f} KB per save")
    print(f"    open (history file + WAL + shm, session running): {open_before / 1024:.0f} KB -> {open_after / 1024:.0f} KB = {open_growth / 1024:.1f} KB per save")
    print(
        f"    per save / one whole report ({report_bytes / 1024:.0f} KB): {growth / report_bytes:.3f} closed, {open_growth / report_bytes:.3f} open "
        f"(target <= {GROWTH_TARGET}: {'met' if max(growth, open_growth) / report_bytes <= GROWTH_TARGET else 'NOT met'}; was 1.1x)"
    )
    print(f"    the unchanged prompt's page: {len(body) / 1024:.0f} KB, says it has no previous version: {'No previous version' in body}")


if __name__ == "__main__":
    asyncio.run(main())
