"""The typed report contract (``inspector/report_types.py``) is what real reports hold: every key of
each ``TypedDict`` is there with its type, and no key is there that the types do not name.

Reports come from real sessions and real worker processes: the sample project, a syntax error, a
module that hangs, examples that fail, a request the planner refuses, a job whose worker is gone.
Extra keys are forbidden, so a key added to a report without its type (or a type whose key is no
longer produced) fails here, and mypy then checks every reader of it.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic import ConfigDict, TypeAdapter, ValidationError

from crux_devtools.inspector.errors import FailedExample, LoadError
from crux_devtools.inspector.report_types import ExampleReport, LoadErrorDict, PlanErrorDict, PrepareResult, Report
from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.inspector.transport.pool import StartWorker
from crux_devtools.inspector.transport.inprocess import in_process

ROOT = Path(__file__).resolve().parents[3]
PROJECTS = Path(__file__).resolve().parents[2] / "projects"
STRICT = ConfigDict(extra="forbid", strict=True)
# A list wrapper lets the config (extra keys forbidden, no coercion) reach every nested TypedDict.
REPORTS = TypeAdapter(list[Report], config=STRICT)
EXAMPLES = TypeAdapter(list[ExampleReport], config=STRICT)
ERRORS = TypeAdapter(list[LoadErrorDict], config=STRICT)
PREPARED = TypeAdapter(list[PrepareResult], config=STRICT)


def valid_report(report: Any) -> Report:
    REPORTS.validate_python([report])
    return report  # type: ignore[no-any-return]


def valid_example(example: Any) -> ExampleReport:
    EXAMPLES.validate_python([example])
    return example  # type: ignore[no-any-return]


def copy_project(source: Path, tmp_path: Path) -> Path:
    root = tmp_path / source.name
    shutil.copytree(source, root, ignore=shutil.ignore_patterns(".crux", "__pycache__"))
    return root


def session(root: Path, timeout: float = 10.0, transport: StartWorker | None = in_process) -> ProjectSession:
    """A session whose workers run in this process, or (``transport=None``) real worker processes."""
    return ProjectSession(root, timeout=timeout, watch=False, history=False, prewarm=False, transport=transport)


def test_an_extra_or_missing_key_is_refused_so_the_check_below_can_fail() -> None:
    error = LoadError.plain("ConfigError", "bad", file="pyproject.toml", line=3).to_dict()
    ERRORS.validate_python([error])
    with pytest.raises(ValidationError, match="extra_forbidden|Extra inputs"):
        ERRORS.validate_python([{**error, "code": "X"}])
    with pytest.raises(ValidationError, match="traceback"):
        ERRORS.validate_python([{k: v for k, v in error.items() if k != "traceback"}])
    with pytest.raises(ValidationError):
        ERRORS.validate_python([{**error, "line": "3"}])


async def test_the_sample_projects_report_and_a_budgeted_example_match_the_types(tmp_path: Path) -> None:
    root = copy_project(ROOT / "sample_project", tmp_path)
    async with session(root) as s:
        report = valid_report(s.report)
        assert report["prompts"] and not report["errors"]
        assert any(ex["preview"] is not None for p in report["prompts"] for ex in p["examples"])
        first = report["prompts"][0]
        example = await s.evaluate(first["id"], example=first["examples"][0]["name"], token_budget=40)
        valid_example(example)
        assert example["inspection"] is not None and example["inspection"]["token_budget"] == 40


async def test_a_syntax_error_gives_a_report_whose_load_error_matches_the_types(tmp_path: Path) -> None:
    root = copy_project(PROJECTS / "syntax_error", tmp_path)
    async with session(root) as s:
        report = valid_report(s.report)
        [error] = report["errors"]
        assert error["type"] == "SyntaxError" and error["file"] is not None and error["line"] is not None


async def test_a_hanging_module_gives_a_timeout_load_error_that_matches_the_types(tmp_path: Path) -> None:
    root = copy_project(PROJECTS / "infinite_loop", tmp_path)
    async with session(root, timeout=2.0, transport=None) as s:  # a hang: only a process can be killed
        report = valid_report(s.report)
        assert [e["type"] for e in report["errors"]] == ["TimeoutError"]
        assert report["errors"][0]["file"] == "prompts.py"
        # The worker holds the project without the hung module: the job fails, and its ExampleReport
        # still has every key.
        failed = valid_example(await s.evaluate("ok"))
        assert failed["status"] == "error" and failed["error"] is not None and "'ok'" in failed["error"]["message"]


async def test_failing_examples_and_a_refused_request_match_the_types(tmp_path: Path) -> None:
    root = copy_project(PROJECTS / "bad_example", tmp_path)
    async with session(root) as s:
        report = valid_report(s.report)
        examples = {(p["id"], ex["name"]): ex for p in report["prompts"] for ex in p["examples"]}
        bad = examples[("orders", "bad")]
        assert bad["status"] == "invalid-input" and bad["error"] is not None and bad["error"]["type"] == "InputValidationError"
        loud = examples[("loud", "empty")]
        assert loud["error"] is not None and loud["error"]["file"] == "prompts.py"
        custom = valid_example(await s.evaluate("orders", input={"order_id": "x"}))
        assert custom["name"] == "custom" and custom["error"] is not None
        # A request budget below what the prompt needs: the planner refuses it, a PlanErrorDict.
        refused = valid_example(await s.evaluate("orders", example="good", input_budget=1))
        assert refused["error"] is None
        assert refused["preview_error"] is not None or (refused["preview"] or {}).get("status") == "over-limit"
        missing = valid_example(await s.evaluate("orders", example="no-such-example"))
        assert missing["error"] is not None
        prepared = await s.prepare_summaries("orders", example="good")
        PREPARED.validate_python([prepared])


def test_the_planners_refusal_is_a_plan_error_dict() -> None:
    """``preview_error`` holds only ``RequestCompositionError.to_dict()``: its shape is the type's."""
    from crux_devtools.core.errors import invalid_composition

    refusal = invalid_composition("two different tools are named 'search'", contributor="docs").to_dict()
    TypeAdapter(list[PlanErrorDict], config=STRICT).validate_python([refusal])
    example = FailedExample("x", {}, LoadError.plain("X", "y")).to_dict()
    valid_example({**example, "error": None, "preview_error": refusal, "status": "error"})


def test_the_failed_example_value_has_every_key_of_an_example_report() -> None:
    error = LoadError.plain("WorkerExited", "the worker process exited with code 1")
    example = FailedExample("custom", {"a": 1}, error).to_dict()
    valid_example(example)
    assert LoadError.from_dict(example["error"]) == error  # type: ignore[arg-type]


def test_a_load_error_from_an_exception_points_at_the_project_line(tmp_path: Path) -> None:
    def fail() -> None:
        raise ValueError("boom")

    try:
        fail()
    except ValueError as exc:
        error = LoadError.from_exception(Path(__file__).resolve().parent, exc)
    assert error.file == "test_report_contract.py" and error.type == "ValueError" and error.message == "boom"
    assert "Traceback" in error.traceback
    ERRORS.validate_python([error.to_dict()])
    assert error.located("other.py", 1) is error
    assert LoadError.plain("X", "y").located("other.py", 1).file == "other.py"


def test_the_front_end_fakes_hold_reports_of_the_same_shape(tmp_path: Path) -> None:
    """The web and TUI tests run on fake sessions: their reports must be real reports' shape, or a
    front-end test could pass on a key the engine never sends."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    import tui_fakes
    import web_fakes

    tui = tui_fakes.FakeSession()
    valid_report(tui.build_report())
    valid_report(tui.build_report(errors=[LoadError.plain("SyntaxError", "invalid syntax", file="support.py", line=3).to_dict()], stale=True))
    web = web_fakes.FakeSession(tmp_path)
    valid_report(web.report)
    ERRORS.validate_python([web_fakes.load_error("prompts.py", 3, "invalid syntax")])
