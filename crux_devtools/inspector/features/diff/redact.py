"""The project's ``redact`` hook applied to what change review prints and to the runs it replans.

An application records runs with ``record_runs(redact=...)``: a function ``run -> run`` that masks
secrets. ``crux-devtools diff`` (and the inspector's Changes page) never sees that call, so the
project names the same function in ``pyproject.toml``::

    [tool.crux-devtools]
    redact = "myapp.recording:redact"     # module:attribute, a function run -> run

It is imported and called in a child process (user code never runs in the caller: the command's or
the web server's process), with the project folder first on ``sys.path``:

- each recorded run ``--runs`` replans goes through it whole before its input is planned;
- every string value of the review document (the same one the text, markdown, JSON, web page and TUI
  show) goes through it, as a run-shaped dict ``{"id": "review", "target": None, "input": {},
  "steps": [], "texts": [...]}``. A function that masks values wherever they occur in the run (as
  ``redact_values`` does) masks them there; one that only blanks named fields of the run's input
  has nothing to blank, since a review prints no input.

It fails closed: a hook that cannot be imported, raises, or returns something else than the dict
it was given (with ``texts`` of the same length) is a ``RedactError`` (one line), and nothing is shown.

The worker also records the inspector's own runs (the Run button, ``run``, a replay sent) through the
same hook (``project_redact``): there it is loaded in the worker process, which runs the project's
code anyway.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any


class RedactError(Exception):
    """The ``redact`` setting is malformed, or the hook failed: one line for the user."""


def redact_setting(root: Path) -> str | None:
    """``[tool.crux-devtools] redact`` of ``root/pyproject.toml`` ("module:attribute"), or None."""
    path = root / "pyproject.toml"
    if not path.is_file():
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise RedactError(f"pyproject.toml cannot be read for [tool.crux-devtools] redact: {exc}") from None
    value = ((data.get("tool") or {}).get("crux-devtools") or {}).get("redact")
    if value is None:
        return None
    module, _, attribute = value.partition(":") if isinstance(value, str) else ("", "", "")
    if not (module and attribute and all(part.isidentifier() for part in [*module.split("."), *attribute.split(".")])):
        raise RedactError(f"[tool.crux-devtools] redact must be \"module:function\" (a function run -> run), got {value!r}")
    return str(value)


def _call(root: Path, spec: str, payload: dict[str, Any], timeout: float) -> dict[str, Any]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        done = subprocess.run(
            [sys.executable, "-m", __name__, str(root), spec], input=json.dumps(payload), capture_output=True, text=True,
            timeout=timeout, cwd=root, env=env, check=False,
        )
    except subprocess.TimeoutExpired:
        raise RedactError(f"redact hook {spec} did not answer in {timeout:g} s") from None
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        raise RedactError(f"redact hook {spec} failed: {lines[-1] if lines else f'exit status {done.returncode}'}")
    try:
        answer = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise RedactError(f"redact hook {spec} failed: it answered no JSON") from None
    if not isinstance(answer, dict):
        raise RedactError(f"redact hook {spec} failed: it answered no JSON object")
    return answer


def redact_runs(root: Path, spec: str, runs: list[dict[str, Any]], timeout: float) -> list[dict[str, Any]]:
    """Each of ``runs`` as the hook returns it (a run it does not return as a dict is an error)."""
    if not runs:
        return runs
    answer = _call(root, spec, {"runs": runs}, timeout)
    done = answer.get("runs")
    if not isinstance(done, list) or len(done) != len(runs) or not all(isinstance(r, dict) for r in done):
        raise RedactError(f"redact hook {spec} failed: it must return each run as a dict")
    return done


def _leaves(value: Any, found: list[str]) -> None:
    if isinstance(value, str):
        found.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _leaves(v, found)
    elif isinstance(value, list):
        for v in value:
            _leaves(v, found)


def _rebuild(value: Any, texts: list[str], at: list[int]) -> Any:
    def take() -> str:
        at[0] += 1
        return texts[at[0] - 1]

    if isinstance(value, str):
        return take()
    if isinstance(value, dict):
        return {k: _rebuild(v, texts, at) for k, v in value.items()}
    if isinstance(value, list):
        return [_rebuild(v, texts, at) for v in value]
    return value


def redact_document(root: Path, spec: str, document: dict[str, Any], timeout: float) -> dict[str, Any]:
    """``document`` with every string value in it as the hook masks it (its keys are its schema's)."""
    texts: list[str] = []
    _leaves(document, texts)
    run: dict[str, Any] = {"id": "review", "target": None, "input": {}, "steps": [], "texts": texts}
    answer = _call(root, spec, {"run": run}, timeout)
    done = (answer.get("run") or {}).get("texts") if isinstance(answer.get("run"), dict) else None
    if not isinstance(done, list) or len(done) != len(texts) or not all(isinstance(t, str) for t in done):
        raise RedactError(f"redact hook {spec} failed: it must return the run dict with its texts, each a string")
    redacted: dict[str, Any] = _rebuild(document, done, [0])
    return redacted


def _load(root: str, spec: str) -> Callable[[dict[str, Any]], Any]:
    import importlib

    sys.path.insert(0, root)
    module_name, _, attribute = spec.partition(":")
    target: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise TypeError(f"{spec} is a {type(target).__name__}, not a function run -> run")
    return target  # type: ignore[no-any-return]


def project_redact(root: Path) -> Callable[[dict[str, Any]], dict[str, Any]] | None:
    """The ``[tool.crux-devtools] redact`` hook, loaded in this process, for the runs the inspector
    records itself (the Run button, ``run``, a replay sent): called only in the worker, which runs
    the project's code anyway. ``None`` when the project names none. It fails closed: a setting or
    a hook that cannot be loaded becomes a hook that raises, so the recorder stores nothing."""
    try:
        spec = redact_setting(root)
        if spec is None:
            return None
        hook = _load(str(root), spec)
    except Exception as exc:  # noqa: BLE001 - the reason reaches the user when the first run is recorded
        reason = str(exc) if isinstance(exc, RedactError) else f"redact hook cannot be loaded: {type(exc).__name__}: {exc}"

        def refuse(run: dict[str, Any]) -> dict[str, Any]:
            raise RedactError(reason)

        return refuse
    return hook


def _checked(result: Any) -> dict[str, Any]:
    if not isinstance(result, dict):
        raise TypeError(f"redact returned {type(result).__name__}; it must return the run dict")
    return result


def main() -> None:
    """The child: ``python -m crux_devtools.inspector.features.diff.redact ROOT SPEC``, JSON in and out."""
    root, spec = sys.argv[1], sys.argv[2]
    payload = json.loads(sys.stdin.read())
    out = sys.stdout
    sys.stdout = sys.stderr  # what user code prints stays out of the answer
    try:
        redact = _load(root, spec)
        if "runs" in payload:
            answer: dict[str, Any] = {"runs": [_checked(redact(run)) for run in payload["runs"]]}
        else:
            answer = {"run": _checked(redact(payload["run"]))}
    except Exception as exc:  # noqa: BLE001 - one line for the caller
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    out.write(json.dumps(answer, ensure_ascii=False))
    out.flush()


if __name__ == "__main__":
    main()
