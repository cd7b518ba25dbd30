"""mypy, run once over the package and two samples, and what each part of its output must say.

- The package type-checks: it ships py.typed, so its annotations are a promise to users.
- ``ladder_misuse.py``: every illegal ladder is a type error, every legal one is not.
- docs/models.md's provider adapter, as written, and both shipped adapters are ``Model``s; an object
  without ``complete``, or whose ``complete`` returns something else, is not.

One mypy process checks all three (a run costs tens of seconds, most of it spent on the package the
samples import anyway); each test reads the lines about its own file. mypy runs in its incremental
mode, with a cache folder of this test's own (``mypy_cache_dir``): every module is still checked and
every error reported, and a module whose source (and whose dependencies' interfaces) did not change
since the last run is read from the cache instead of analysed again.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
LADDERS = HERE / "ladder_misuse.py"


def mypy_cache_dir(name: str) -> Path:
    """The cache folder of one test's mypy runs: under ``$MYPY_CACHE_DIR`` (mypy's own setting) or the
    repository's ``.mypy_cache``, one per test, since runs with other options would overwrite it."""
    return Path(os.environ.get("MYPY_CACHE_DIR") or REPO / ".mypy_cache") / name


def sample_file(name: str, text: str) -> Path:
    """``text`` written to ``name`` in a folder kept between runs (beside the caches): mypy's cache
    replays the errors of an unchanged module with the path it had, so a sample keeps its path."""
    path = mypy_cache_dir("samples") / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def shown(path: Path) -> Path:
    """``path`` as mypy (run in the repository) names it: relative when it is inside the repository."""
    return path.relative_to(REPO) if path.is_relative_to(REPO) else path


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


@dataclass(frozen=True)
class Mypy:
    adapter: Path
    returncode: int
    output: str

    def error_lines(self, path: Path) -> set[int]:
        """The line numbers mypy reports an error on in ``path``."""
        return {int(m.group(1)) for m in re.finditer(rf"^{re.escape(str(path))}:(\d+): error", self.output, re.M)}


def expected_errors(path: Path) -> set[int]:
    return {n for n, line in enumerate(path.read_text().splitlines(), start=1) if "# expect-error" in line}


@pytest.fixture(scope="module")
def mypy() -> Mypy:
    section = (REPO / "docs" / "models.md").read_text().split("## Writing a provider adapter", 1)[1]
    (example,) = re.findall(r"```python\n(.*?)```", section, re.S)
    adapter = sample_file("adapter_sample.py", example + CHECKS)
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", f"--cache-dir={mypy_cache_dir('test_types')}", "--hide-error-context", "--no-error-summary",
         "crux_devtools", str(shown(LADDERS)), str(shown(adapter))],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "MYPYPATH": str(REPO)},
        timeout=900,
    )
    return Mypy(adapter, proc.returncode, proc.stdout + proc.stderr)


def test_mypy_finds_no_errors_in_the_package(mypy: Mypy) -> None:
    assert mypy.returncode in (0, 1), mypy.output  # 1: the samples' expected errors; 2: mypy itself failed
    others = [line for line in mypy.output.splitlines() if not line.startswith((str(shown(LADDERS)), str(shown(mypy.adapter))))]
    assert others == [], mypy.output


def test_mypy_rejects_exactly_the_illegal_ladders(mypy: Mypy) -> None:
    expected = expected_errors(LADDERS)
    assert expected, "the sample must mark some lines"
    assert mypy.error_lines(shown(LADDERS)) == expected, mypy.output


def test_mypy_accepts_the_documented_adapter_as_a_model_and_rejects_what_is_not_one(mypy: Mypy) -> None:
    expected = expected_errors(mypy.adapter)
    assert len(expected) == 2
    assert mypy.error_lines(shown(mypy.adapter)) == expected, mypy.output
