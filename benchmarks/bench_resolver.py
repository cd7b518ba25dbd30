"""Resolver speed: 1,000 contexts under a token budget, against one tiktoken pass over the same text.

Run: .venv/bin/python benchmarks/bench_resolver.py
Prints ratios measured in this run (the machine is shared and noisy: read ratios, not seconds).
Targets: resolve <= 2x one tiktoken pass (cold cache); growth 100 -> 1,000 contexts <= 12x.
"""

from __future__ import annotations

import random
import statistics
import time

from crux_devtools import context, prompt
from crux_devtools.core import tokens as tokens_module
from crux_devtools.core.tokens import TiktokenCounter

VOCAB = "storage sync folder invoice refund device upload share billing plan account error retry".split()


def make_prompt(n: int, seed: int = 7):
    rng = random.Random(seed)
    contexts = []
    for i in range(n):
        words = " ".join(rng.choice(VOCAB) for _ in range(rng.randint(20, 60)))
        contexts.append(context(f"ctx-{i}", system=f"## Section {i}\n{words}.", priority=rng.randint(0, 100)))
    return prompt(f"bench-{n}", system="You are a support agent.", use=contexts)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def measure(n: int, repeat: int = 9) -> dict[str, float]:
    """Median times, and the median of per-pair ratios (pass and resolve timed back to back)."""
    p = make_prompt(n)
    full_text = p.resolve().system
    encoding = tokens_module.default_counter()._load()
    budget = len(encoding.encode_ordinary(full_text)) // 2

    def cold() -> None:
        counter = TiktokenCounter()  # empty cache: every text counted afresh
        counter._encoding = encoding
        p.inspect(token_budget=budget, counter=counter)

    warm_counter = TiktokenCounter()
    p.inspect(token_budget=budget, counter=warm_counter)
    passes, colds, warms, cold_ratios, warm_ratios = [], [], [], [], []
    for _ in range(repeat):
        one_pass = timed(lambda: encoding.encode_ordinary(full_text))
        c = timed(cold)
        w = timed(lambda: p.inspect(token_budget=budget, counter=warm_counter))
        passes.append(one_pass)
        colds.append(c)
        warms.append(w)
        cold_ratios.append(c / one_pass)
        warm_ratios.append(w / one_pass)
    med = statistics.median
    return {
        "one_pass": med(passes),
        "cold": med(colds),
        "warm": med(warms),
        "cold_ratio": med(cold_ratios),
        "warm_ratio": med(warm_ratios),
    }


def main() -> None:
    small, large = measure(100), measure(1000)
    print("resolver benchmark (medians of 9 paired runs)")
    print(f"  1,000 contexts, budget = half the text: tiktoken pass {large['one_pass'] * 1e3:.1f} ms")
    print(f"  inspect with budget, cold token cache: {large['cold'] * 1e3:.1f} ms = {large['cold_ratio']:.2f}x one tiktoken pass (target <= 2x)")
    print(f"  inspect with budget, warm token cache: {large['warm'] * 1e3:.1f} ms = {large['warm_ratio']:.2f}x one tiktoken pass")
    print(f"  growth 100 -> 1,000 contexts (cold): {large['cold'] / small['cold']:.1f}x (target <= 12x)")
    print(f"  growth 100 -> 1,000 contexts (warm): {large['warm'] / small['warm']:.1f}x")


if __name__ == "__main__":
    main()
