"""What recorded runs cost, for every view of them (web, TUI, ``crux-devtools runs``).

Costs are worked out where runs are read, never stored: a price added to ``pyproject.toml`` later
prices every run already recorded. A step's cost is its provider-reported usage (cache reads and
writes at their own rates) at the price of the model that step called; a run's is the sum of its
steps' (a summary without steps: its summed usage at its model's price). Anything without usage or
without a known price is *unpriced* (``None``), never a guess.

Prices come from ``core.record.pricing`` (pure arithmetic, no heavy import: ``crux_devtools.core`` loads
its names lazily, so the session process still never loads pydantic or the planner) and the
project's ``[tool.crux-devtools.models.NAME]`` tables, re-read when ``pyproject.toml`` changes.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ....core.record.pricing import Price, cost_usd, format_usd, format_usd_column, input_cost_usd, price_for
from ...session.discovery import read_model_config


class Prices:
    """The prices of one project's models, looked up by name (cached; re-read on a pyproject change)."""

    def __init__(self, root: str | os.PathLike[str] | None, *, known_prices: bool = True) -> None:
        self.root = Path(root) if root is not None else None
        self.known_prices = known_prices
        self._lock = threading.Lock()
        self._stamp: float | None = None
        self._profiles: dict[str, Any] = {}
        self._prices: dict[str, Price | None] = {}

    def _refresh(self) -> None:
        if self.root is None:
            return
        try:
            stamp = (self.root / "pyproject.toml").stat().st_mtime
        except OSError:
            stamp = -1.0
        if stamp != self._stamp:
            self._stamp, self._prices = stamp, {}
            try:
                self._profiles = read_model_config(self.root)[0].get("models") or {}
            except Exception:  # noqa: BLE001 - an unreadable pyproject prices nothing; the list page says why elsewhere
                self._profiles = {}

    def price(self, model: Any) -> Price | None:
        if not isinstance(model, str) or not model:
            return None
        with self._lock:
            self._refresh()
            if model not in self._prices:
                self._prices[model] = price_for(model, self._profiles, known_prices=self.known_prices)
            return self._prices[model]

    def step_cost(self, step: Mapping[str, Any], model: Any = None) -> float | None:
        """One recorded step's cost, or None (no usage, or its model has no price)."""
        request = step.get("request")
        step_model = request.get("model") if isinstance(request, Mapping) and request.get("model") else model
        return cost_usd(step.get("usage"), self.price(step_model))

    def run_cost(self, run: Mapping[str, Any]) -> float | None:
        """A run's cost: the sum of its steps' when they reported usage (None if any of them is
        unpriced), else its summed usage at its model's price (a summary has no steps)."""
        steps = run.get("steps")
        reported = [s for s in steps if isinstance(s, Mapping) and isinstance(s.get("usage"), Mapping)] if isinstance(steps, list) else []
        if reported:
            costs = [self.step_cost(s, run.get("model")) for s in reported]
            return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)
        return cost_usd(run.get("usage"), self.price(run.get("model")))

    def estimate(self, model: Any, input_tokens: int | None) -> str:
        """What sending ``input_tokens`` to ``model`` is estimated to cost, in words for a confirmation:
        ``estimated input cost $0.0123 (1,234 input tokens, output extra)``, or ``unpriced (...)``.
        The one pricing of every confirmation (Run, replay send, continue), in every front end;
        ``model`` must be the model that will be called (the worker's question names it)."""
        price = self.price(model)
        if input_tokens is None:
            rate = f"{format_usd(price.input)} per million input tokens" if price is not None else f"no price known for {model or 'the model'}"
            return f"input cost not estimated: the first request could not be planned ({rate})"
        cost = input_cost_usd(input_tokens, price)
        if cost is None:
            return f"unpriced: no price known for {model or 'the model'} ({input_tokens:,} input tokens)"
        return f"estimated input cost {format_usd(cost)} ({input_tokens:,} input tokens, output extra)"

    def question(self, asked: Mapping[str, Any]) -> str:
        """The estimate of a worker's confirmation request (``run_confirm.confirmation_request``):
        priced at the model it names, for the request size it carries."""
        tokens = asked.get("input_tokens")
        return self.estimate(asked.get("model"), tokens if isinstance(tokens, int) else None)

    def total(self, usage_by_model: Iterable[Mapping[str, Any]]) -> CostTotal:
        """The cost of every run that matched a filter, from ``RunStore.usage_by_model`` rows."""
        amount, priced, unpriced = 0.0, 0, 0
        for row in usage_by_model:
            runs, reported = int(row.get("runs") or 0), int(row.get("reported") or 0)
            cost = cost_usd(row, self.price(row.get("model"))) if reported else None
            if cost is None:
                unpriced += runs
                continue
            amount += cost
            priced += reported
            unpriced += runs - reported
        return CostTotal(amount if priced else None, priced, unpriced)


_projects: dict[str, Prices] = {}
_projects_lock = threading.Lock()


def prices_for(root: str | os.PathLike[str] | None) -> Prices:
    """The ``Prices`` of the project in ``root`` (one per folder for the process)."""
    key = os.path.abspath(os.fspath(root)) if root is not None else ""
    with _projects_lock:
        if key not in _projects:
            _projects[key] = Prices(key or None)
        return _projects[key]


@dataclass(frozen=True, slots=True)
class CostTotal:
    """The cost of the runs of a filter: ``amount`` (None when no run is priced), and how many runs
    were priced and how many were not (no usage reported, or no price for the model)."""

    amount: float | None
    priced: int
    unpriced: int

    @property
    def label(self) -> str:
        if self.amount is None:
            return "unpriced"
        text = format_usd(self.amount)
        return f"{text} ({self.unpriced:,} unpriced)" if self.unpriced else text


__all__ = ["CostTotal", "Prices", "format_usd", "format_usd_column", "prices_for"]
