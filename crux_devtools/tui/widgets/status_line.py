"""One line above the tabs: which prompt, example and budget are shown, and whether it is stale."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static


def status_text(
    prompt: dict[str, Any] | None, example: str | None, names: list[str], budget: int | None, stale: bool, busy: str | None, target: str = "system", custom: str | None = None
) -> Text:
    if prompt is None:
        return Text("No prompt selected", style="dim")
    text = Text()
    if stale:
        text.append(" ◌ STALE: last load failed ", "bold black on yellow")
        text.append(" ")
    text.append(f" {prompt.get('kind', 'prompt')} ", "reverse")
    text.append(" ")
    text.append(prompt.get("id", "?"), "bold")
    if custom is not None:  # a recorded run's input, loaded from the run's detail
        text.append("  input of ")
        text.append(custom, "bold magenta")
    elif names:
        index = names.index(example) + 1 if example in names else 1
        text.append(f"  example {example} ({index}/{len(names)})", "")
    text.append("  budget ")
    default = prompt.get("default_budget")
    if budget is not None:
        text.append(str(budget), "bold cyan")
    elif default is not None:
        text.append(f"{default} (default)", "cyan")
    else:
        text.append("none", "dim")
    text.append(" · request" if target == "request" else " · system", "dim")
    if busy:
        text.append(f"  … {busy}", "italic dim")
    return text


class StatusLine(Static):
    """``data`` is the keyword arguments of ``status_text``."""

    data: reactive[dict[str, Any] | None] = reactive(None, always_update=True)

    def watch_data(self) -> None:
        self.update(status_text(**self.data) if self.data else Text(""))
