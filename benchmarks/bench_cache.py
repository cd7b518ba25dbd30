"""What the prompt cache reads when the planner places the breakpoints, whether the advisor names
what breaks it, and what ``crux-devtools cache`` costs.

Run: .venv/bin/python benchmarks/bench_cache.py

1. A 40-step agent loop over ``sample_project``'s house rules, catalogue (detail 2) and example
   replies (a static prefix of about 3,000 tokens) and one per-input context, against the fake
   provider of ``tests/cache_provider.py`` (both formats' real cache semantics, counted by the
   server). With ``cache = "auto"``: the share of the ideal (every step after the first reads the
   whole tools + system prefix) that the provider counted as read (target >= 95%), and, step by
   step, the planner's projected cacheable tokens (its last breakpoint's ``tokens``) against the
   provider's counted reads (target: within 1% on every step). The same loop as an SDK sends it
   by default (no breakpoints): its share (expected 0%).
2. ``crux-devtools cache tests/projects/cache_breakers --format json``: eight prompts, one seeded
   breaker each (timestamp, uuid, unsorted dict, tool order, a per-user block before the catalogue,
   a model switch, a ``when`` flip, a rung change). How many the advisor names with the right
   context and ``file:line`` (target >= 8), and for how many it suggests the fix (target >= 7).
3. ``crux-devtools cache sample_project`` against ``check sample_project``: medians of 3 runs each,
   alternated, wall clock (target: at most 1.2x); ``cache --runs 100`` of a target with 100
   recorded runs (target: under 10 s). No model is called by either.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests"), str(REPO / "sample_project")]
CLI = str(Path(sys.executable).parent / "crux-devtools")
STEPS = 40
# prompt -> (the block that breaks the cache, the line that defines it)
BREAKERS = {
    "timestamp": ("clock", 36), "random-id": ("request-id", 37), "unsorted-dict": ("prefs", 38), "tool-order": ("tools", 39),
    "per-user": ("user-profile", 40), "model-switch": ("small-notes", 41), "when-flip": ("vip-note", 43), "rung-change": ("history", 44),
}


def agent_loop(cached: bool) -> tuple[list[Any], list[Any]]:
    """The 40 steps of one loop against the fake provider: (the steps, the provider's counted calls)."""
    from cache_provider import CacheProvider
    from nimbus_data import EXAMPLE_REPLIES, full_catalog
    from pydantic import BaseModel
    from shared import house_rules

    from crux_devtools import AnthropicModel, CachePolicy, ModelCapacityProfile, agent, context, generate, prompt, tool

    class Ask(BaseModel):
        question: str
        customer: str

    class Sku(BaseModel):
        sku: str

    lookup = tool("lookup_sku", description="Look a SKU up in the catalogue.", parameters=Sku, execute=lambda a: {"sku": a.sku, "in_stock": True})
    catalog = context("catalog", system=full_catalog(2))
    replies = context("example-replies", system=EXAMPLE_REPLIES)
    customer = context("customer", system=lambda i: f"## Customer\nYou are helping {i.customer}.")
    target = prompt("shop-loop", system="You are Ari, a support agent for Nimbus cloud storage.", prompt=lambda i: i.question,
                    input=Ask, use=[house_rules, catalog, replies, customer], tools=[lookup])
    policy = CachePolicy(min_tokens=1024) if cached else None
    with CacheProvider(min_tokens=1024) as provider:
        for n in range(STEPS - 1):
            provider.reply_tool_call("lookup_sku", {"sku": f"NB-{n:03d}"})
        provider.reply_text("All in stock.")
        model = AnthropicModel("claude-bench", base_url=provider.root_url, api_key="bench",
                               capacity=ModelCapacityProfile(200_000, 1024, "estimated", policy))
        result = generate(agent("shop", prompt=target, model=model, max_steps=STEPS), input={"question": "Which SKUs are in stock?", "customer": "Ada"})
        return result.steps, list(provider.calls)


def part_one() -> None:
    steps, calls = agent_loop(cached=True)
    assert len(steps) == STEPS == len(calls), (len(steps), len(calls))
    ideal = sum(_system_tokens(call) for call in calls[1:])
    read = sum(call.read for call in calls[1:])
    worst = 0.0
    for step, call in zip(steps[1:], calls[1:], strict=True):
        projected = step.sent.cache["breakpoints"][-1]["tokens"]
        worst = max(worst, abs(projected - call.read) / call.read if call.read else 1.0)
    total_input = sum(call.total for call in calls)
    print(f"agent loop, {STEPS} steps, static prefix {steps[0].sent.cache['breakpoints'][0]['tokens']:,} tokens: "
          f"auto placement read {read:,} of the ideal {ideal:,} tokens: {100 * read / ideal:.1f}% (target >= 95%); "
          f"{100 * read / total_input:.1f}% of all {total_input:,} input tokens")
    print(f"projected cacheable tokens against the provider's counted reads: worst step off by {100 * worst:.2f}% (target <= 1%)")
    _steps, plain = agent_loop(cached=False)
    plain_read = sum(call.read for call in plain)
    print(f"SDK-default lowering (no breakpoints): {plain_read:,} tokens read, {100 * plain_read / ideal:.1f}% of the ideal (expected 0%)")


def _system_tokens(call: Any) -> int:
    """The tokens of the call's tools and system blocks as the provider counted them (the ideal read)."""
    from crux_devtools.core.tokens import default_counter

    counter = default_counter()
    body = call.body
    tools = sum(counter.count(json.dumps({k: v for k, v in t.items() if k != "cache_control"}, sort_keys=True, ensure_ascii=False)) for t in body.get("tools") or [])
    system = body.get("system")
    blocks = system if isinstance(system, list) else [{"text": system or ""}]
    return tools + sum(counter.count(b["text"]) for b in blocks)


def part_two() -> None:
    done = subprocess.run([CLI, "cache", str(REPO / "tests" / "projects" / "cache_breakers"), "--format", "json"], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    targets = {t["id"]: t for t in json.loads(done.stdout)["targets"]}
    named = fixed = 0
    for name, (block_id, line) in BREAKERS.items():
        target = targets[name]
        first = next((b for b in target["blocks"] if b["class"] != "static"), None)
        right = first is not None and first["id"] == block_id and (first["file"], first["line"]) == ("breakers.py", line)
        suggestion = target["suggestion"] or {}
        moves = [m["id"] for m in suggestion.get("moves") or ()]
        fix = block_id in moves and suggestion.get("prefix_tokens_after", 0) > 3000 if block_id != "tools" else f"breakers.py:{line}" in suggestion.get("text", "")
        named += right
        fixed += bool(fix)
        print(f"  {name}: named {first['id'] if first else None} at {first['file'] if first else None}:{first['line'] if first else None} "
              f"({'right' if right else 'WRONG'}); fix {'suggested' if fix else 'MISSING'}")
    print(f"advisor: named {named} of {len(BREAKERS)} seeded breakers with the right context and file:line (target >= 8); suggested the fix for {fixed} (target >= 7)")


def timed(*args: str) -> float:
    started = time.perf_counter()
    done = subprocess.run([CLI, *args], capture_output=True, text=True, cwd=REPO)
    assert done.returncode in (0, 1), done.stderr
    return time.perf_counter() - started


def part_three() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "sample_project"
        shutil.copytree(REPO / "sample_project", project, ignore=shutil.ignore_patterns("__pycache__", ".crux*"))
        caches, checks = [], []
        for _ in range(3):
            caches.append(timed("cache", str(project)))
            checks.append(timed("check", str(project)))
        c, k = statistics.median(caches), statistics.median(checks)
        print(f"cache sample_project: median {c:.2f} s; check: median {k:.2f} s; ratio {c / k:.2f}x (target <= 1.2x)")
        from crux_devtools.core.record.runstore import RunStore

        with RunStore.for_project(project) as store:
            for n in range(100):
                store.write({"target": "support-reply", "kind": "prompt", "status": "ok", "steps": [],
                             "input": {"message": f"Question {n}: why did my sync stall?", "customer_name": f"Customer {n}", "plan": "Plus"},
                             "started_at": f"2026-01-05T{10 + n // 60:02d}:{n % 60:02d}:00+00:00"})
        seconds = timed("cache", str(project), "--target", "support-reply", "--runs", "100")
        print(f"cache --runs 100: {seconds:.2f} s (target < 10 s)")


def main() -> None:
    part_one()
    part_two()
    part_three()


if __name__ == "__main__":
    main()
