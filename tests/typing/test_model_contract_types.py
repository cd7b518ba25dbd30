"""mypy agrees with docs/models.md: the documented adapter, as written, and both shipped adapters are
``Model``s; an object without ``complete``, or whose ``complete`` returns something else, is not."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CHECKS = '''

from crux_devtools import Model, OpenAICompatibleModel, ScriptedModel


class NoComplete:
    name = "only hooks"

    async def acomplete(self, request: ModelRequest) -> ModelResponse:
        return ModelResponse("x")


class WrongReturn:
    def complete(self, request: ModelRequest) -> str:
        return "x"


documented: Model = OllamaChatModel("llama3.2")
scripted: Model = ScriptedModel(["hi"])
http: Model = OpenAICompatibleModel("http://127.0.0.1:8000/v1", "m")
no_complete: Model = NoComplete()  # expect-error
wrong_return: Model = WrongReturn()  # expect-error
'''


def test_mypy_accepts_the_documented_adapter_as_a_model_and_rejects_what_is_not_one(tmp_path: Path) -> None:
    section = (REPO / "docs" / "models.md").read_text().split("## Writing a provider adapter", 1)[1]
    (example,) = re.findall(r"```python\n(.*?)```", section, re.S)
    sample = tmp_path / "adapter_sample.py"
    sample.write_text(example + CHECKS)
    lines = sample.read_text().splitlines()
    expected = {n for n, line in enumerate(lines, start=1) if "# expect-error" in line}
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-incremental", "--hide-error-context", "--no-error-summary", str(sample)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "MYPYPATH": str(REPO)},
        timeout=300,
    )
    reported = {int(m.group(1)) for m in re.finditer(r"adapter_sample\.py:(\d+): error", proc.stdout)}
    assert len(expected) == 2
    assert reported == expected, proc.stdout + proc.stderr
