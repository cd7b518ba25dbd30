"""Run the sample agent with recording on, so the inspector can show what it really sent.

    .venv/bin/python sample_project/record_demo.py
    .venv/bin/crux-devtools runs sample_project

`record_runs(...)` writes every `generate` of this process to `sample_project/.crux/runs.sqlite3`:
the input, each step's literal request, the planner's receipt, the tool calls and results, the
offloads and the final answer. `crux-devtools serve sample_project` shows the same runs under
/runs, live. (An application can do the same without a code change:
`CRUX_DEVTOOLS_RECORD=sample_project python my_app.py`.)
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from crux_devtools import generate, record_runs

HERE = Path(__file__).resolve().parent


def sample_agent_module() -> ModuleType:
    """Lesson 5 (``05_agent.py``; its name starts with a digit, so it is loaded by path)."""
    sys.path.insert(0, str(HERE))  # it imports nimbus_data and shared from this folder
    spec = importlib.util.spec_from_file_location("sample_05_agent", HERE / "05_agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    lesson = sample_agent_module()
    with record_runs(HERE) as recorder:
        for name, data in lesson.agent_reply.examples.items():
            result = generate(lesson.support_agent, input=data)
            print(f"{name}: {len(result.steps)} steps, stop: {result.stop_reason}: {result.text}")
    print(f"recorded {recorder.written} runs in {recorder.path}")
    print("see them with: crux-devtools runs sample_project   (or open /runs in crux-devtools serve sample_project)")


if __name__ == "__main__":
    main()
