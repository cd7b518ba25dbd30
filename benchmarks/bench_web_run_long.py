"""A long recorded run on ``/runs/{id}``: the page's size and server time at 500 steps, and the
ratio of 1000 steps to 500 (a page that renders every step in full grows with the run; a bounded
page does not).

    .venv/bin/python benchmarks/bench_web_run_long.py [--steps 500] [--repeat 5]

Each run is made of copies of the steps of one real ``generate`` run (ScriptedModel: a tool call,
then the answer), written with the real ``RunStore``; the real app is reached through httpx over
ASGI (no socket) and each page is timed with ``time.perf_counter``, median of ``--repeat`` requests.
Prints the size and median time at N and 2N steps, the ratios 2N/N (target <= 1.75x: a step past
the window costs its compact row and its bar in the glance, not its card), and the size and time
of one step's card fetched on demand. Exits 1 when the size ratio misses its target.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from web_runs_fakes import RecordingSession, long_run, run_record  # noqa: E402

from crux_devtools.web.app import create_app  # noqa: E402

SIZE_RATIO_TARGET = 1.75  # the compact rows and the glance's bars grow with the run; the cards do not


async def measure(client: httpx.AsyncClient, url: str, repeat: int) -> tuple[int, float]:
    times = []
    size = 0
    for _ in range(repeat):
        start = time.perf_counter()
        response = await client.get(url)
        times.append(time.perf_counter() - start)
        response.raise_for_status()
        size = len(response.content)
    return size, statistics.median(times) * 1000


async def main(steps: int, repeat: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        session = RecordingSession(Path(tmp), agent_ids=("billing-agent",))
        base = run_record(run_id="base")
        session.store.write(long_run(steps, "long", base))
        session.store.write(long_run(steps * 2, "longer", base))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(session)), base_url="http://127.0.0.1:4400") as client:
            await client.get("/runs/long")  # warm the templates
            size_n, ms_n = await measure(client, "/runs/long", repeat)
            size_2n, ms_2n = await measure(client, "/runs/longer", repeat)
            card = await client.get(f"/runs/long/steps/{steps // 2}")
            card_size, card_ms = await measure(client, f"/runs/long/steps/{steps // 2}", repeat) if card.status_code == 200 else (0, float("nan"))
    print(f"{steps} steps:  {size_n / 1e6:8.2f} MB  {ms_n:8.1f} ms (median of {repeat})")
    print(f"{steps * 2} steps: {size_2n / 1e6:8.2f} MB  {ms_2n:8.1f} ms (median of {repeat})")
    print(f"ratio {steps * 2}/{steps}: size {size_2n / size_n:.2f}x  time {ms_2n / ms_n:.2f}x  (size target <= {SIZE_RATIO_TARGET}x)")
    print(f"each step past {steps}: {(size_2n - size_n) / steps / 1e3:.2f} kB of page")
    if card.status_code == 200:
        print(f"one step's card on demand (step {steps // 2}): {card_size / 1e3:.1f} kB  {card_ms:.1f} ms")
    else:
        print(f"one step's card on demand: not served ({card.status_code})")
    return 0 if size_2n / size_n <= SIZE_RATIO_TARGET else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    raise SystemExit(asyncio.run(main(args.steps, args.repeat)))
