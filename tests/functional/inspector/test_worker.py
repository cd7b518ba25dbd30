"""The worker process: user code runs there, talks JSON lines, and cannot break the protocol.

What a load or an evaluation reports (lines, schemas, errors, a budget) is read from an
in-process worker (``inprocess.InProcessWorker``: the worker's own handlers behind the same checks and
JSON round trip); what only a process shows (its fds, exits, hangs, kills, forks) from real ones."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from waits import WAIT

from crux_devtools.inspector.session.discovery import discover
from crux_devtools.inspector.worker.evaluate import MAX_TEXT
from crux_devtools.inspector.transport.inprocess import InProcessWorker
from crux_devtools.inspector.transport.process import SpawnedWorker, WorkerError, WorkerProcess

PROJECTS = Path(__file__).parents[2] / "projects"


async def load(root: Path, timeout: float = WAIT, *, start: Any = SpawnedWorker.start) -> tuple[WorkerProcess, dict[str, Any]]:
    """A worker of ``root`` (a process unless ``start`` says otherwise) and its answer to ``load``."""
    worker = await start(root)
    modules = [m.to_dict() for m in discover(root).modules]
    try:
        answer = await worker.call("load", {"root": str(root), "modules": modules}, timeout)
    except WorkerError:
        await worker.close()
        raise
    return worker, answer


async def test_a_good_project_loads_with_lines_examples_and_schemas() -> None:
    worker, answer = await load(PROJECTS / "good", start=InProcessWorker.start)
    await worker.close()
    assert answer["ok"], answer
    prompts = {p["id"]: p for p in answer["result"]["prompts"]}
    support = prompts["support"]
    assert (support["file"], support["line"], support["kind"]) == ("prompts.py", 30, "prompt")
    assert [e["name"] for e in support["examples"]] == ["basic", "expert"]
    assert set(support["input_schema"]["properties"]) == {"question", "expert", "tone"}
    assert [c["id"] for c in support["contexts"]] == ["style", "expert"]
    assert support["tools"] == ["lookup"]
    # A prompt without examples whose input allows {} is shown with the empty input.
    assert [e["name"] for e in prompts["greeter"]["examples"]] == ["empty"]


async def test_prints_and_reads_from_stdin_in_user_code_do_not_corrupt_the_protocol(tmp_path: Path) -> None:
    (tmp_path / "noisy.py").write_text(
        "import os, sys\nfrom crux_devtools import prompt\nprint('{\"id\": 1, \"ok\": false}')\n"
        "os.write(1, b'raw bytes on fd 1\\n')\nprint('to stderr', file=sys.stderr)\nsys.stdin.read()\n"
        "noisy = prompt('noisy', system='still fine')\n",
        encoding="utf-8",
    )
    worker, answer = await load(tmp_path)
    await worker.close()
    assert answer["ok"]
    assert [p["id"] for p in answer["result"]["prompts"]] == ["noisy"]


async def test_an_import_error_names_the_file_and_line_and_keeps_other_modules(tmp_path: Path) -> None:
    shutil.copy(PROJECTS / "import_error" / "prompts.py", tmp_path / "broken.py")
    (tmp_path / "fine.py").write_text("from crux_devtools import prompt\nfine = prompt('fine', system='ok')\n", encoding="utf-8")
    worker, answer = await load(tmp_path, start=InProcessWorker.start)
    await worker.close()
    [error] = answer["result"]["errors"]
    assert (error["file"], error["line"], error["type"]) == ("broken.py", 4, "RuntimeError")
    assert "settings.ini" in error["message"] and "Traceback" in error["traceback"]
    assert [p["id"] for p in answer["result"]["prompts"]] == ["fine"]


@pytest.mark.parametrize(
    ("project", "kind", "line"),
    [("syntax_error", "SyntaxError", 5), ("sys_exit", "SystemExit", 6), ("missing_dependency", "ModuleNotFoundError", 2)],
)
async def test_faults_at_import_are_reported_with_file_and_line(project: str, kind: str, line: int) -> None:
    worker, answer = await load(PROJECTS / project)
    assert worker.alive  # sys.exit in user code does not end the worker
    await worker.close()
    [error] = answer["result"]["errors"]
    assert (error["file"], error["line"], error["type"]) == ("prompts.py", line, kind)


async def test_a_hang_times_out_kills_the_worker_and_points_at_the_loop() -> None:
    with pytest.raises(WorkerError) as caught:
        await load(PROJECTS / "infinite_loop", timeout=1.0)
    error = caught.value.error
    assert error["type"] == "TimeoutError"
    assert error["file"] == "prompts.py" and error["line"] in (4, 5)  # the `while` or its body


async def test_a_worker_killed_by_user_code_is_reported_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "bye.py").write_text("import os\nimport crux_devtools\nos._exit(7)\n", encoding="utf-8")
    with pytest.raises(WorkerError) as caught:
        await load(tmp_path)
    assert caught.value.error["type"] == "WorkerExited"
    assert "code 7" in caught.value.error["message"]


async def test_a_huge_system_text_is_truncated_in_the_report_with_its_true_token_count() -> None:
    worker, answer = await load(PROJECTS / "huge_text", timeout=30.0)  # a process: counting 10 MB costs less there than in this heap
    await worker.close()
    [huge] = answer["result"]["prompts"]
    [example] = huge["examples"]
    inspection = example["inspection"]
    assert example["truncated"] is True
    assert len(inspection["system"]) < MAX_TEXT + 200
    assert "[truncated by crux-devtools" in inspection["system"]
    assert inspection["system_tokens"] > 1_000_000  # counted on the full 10 MB text


async def test_evaluate_uses_the_loaded_project_with_a_budget_and_custom_input() -> None:
    worker, _ = await load(PROJECTS / "good", start=InProcessWorker.start)
    try:
        answer = await worker.call("evaluate", {"prompt_id": "support", "example": "expert", "token_budget": 12}, 10)
        custom = await worker.call("evaluate", {"prompt_id": "support", "input": {"question": "hi", "tone": "dry"}}, 10)
        unknown = await worker.call("evaluate", {"prompt_id": "support", "example": "nope"}, 10)
    finally:
        await worker.close()
    assert [d["id"] for d in answer["result"]["inspection"]["dropped_contexts"]] == ["expert"]
    assert custom["result"]["name"] == "custom"
    assert "Answer in a dry tone." in custom["result"]["inspection"]["system"]
    assert not unknown["ok"] and "known examples: basic, expert" in unknown["error"]["message"]


async def test_an_answer_to_a_cancelled_request_is_never_taken_for_the_next_ones() -> None:
    """A caller cancelled after its request was sent (a newer budget replaces an evaluation in
    flight) leaves that answer in the pipe: the next request must get its own answer, not that one."""
    worker, _ = await load(PROJECTS / "good")
    try:
        sent = asyncio.Event()
        write = worker.writer.write

        def noting(data: bytes) -> None:
            write(data)
            sent.set()

        worker.writer.write = noting  # type: ignore[method-assign]
        first = asyncio.ensure_future(worker.call("evaluate", {"prompt_id": "support", "example": "expert", "token_budget": 12}, WAIT))
        await sent.wait()  # the request is in the worker's input: its answer will come
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        worker.writer.write = write  # type: ignore[method-assign]
        custom = await worker.call("evaluate", {"prompt_id": "support", "input": {"question": "hi", "tone": "dry"}}, WAIT)
    finally:
        await worker.close()
    assert custom["ok"] and custom["result"]["name"] == "custom", custom
    assert "Answer in a dry tone." in custom["result"]["inspection"]["system"]


async def test_a_worker_loads_one_project_version_only() -> None:
    worker, _ = await load(PROJECTS / "good")
    again = await worker.call("load", {"root": str(PROJECTS / "good"), "modules": []}, 10)
    await worker.close()
    assert not again["ok"] and "fresh worker" in again["error"]["message"]


async def test_forked_workers_are_fresh_interpreters_for_user_code(tmp_path: Path) -> None:
    from crux_devtools.inspector.transport.forkserver import ForkServer

    (tmp_path / "counter_prompts.py").write_text(
        "import builtins\nfrom crux_devtools import prompt\n"
        "builtins.loads = getattr(builtins, 'loads', 0) + 1\n"
        "p = prompt('p', system=f'loaded {builtins.loads} time(s)')\n",
        encoding="utf-8",
    )
    server = ForkServer(tmp_path)
    await server.start()
    try:
        modules = [m.to_dict() for m in discover(tmp_path).modules]
        texts = []
        for _ in range(2):
            worker = await server.fork()
            answer = await worker.call("load", {"root": str(tmp_path), "modules": modules}, 10)
            texts.append(answer["result"]["prompts"][0]["examples"][0]["inspection"]["system"])
            await worker.close()
        (tmp_path / "counter_prompts.py").write_text("import os\nimport crux_devtools\nos._exit(5)\n", encoding="utf-8")
        dying = await server.fork()
        with pytest.raises(WorkerError) as caught:
            await dying.call("load", {"root": str(tmp_path), "modules": modules}, 10)
        await dying.close()
    finally:
        await server.close()
    assert texts == ["loaded 1 time(s)", "loaded 1 time(s)"]  # the server itself never imported user code
    assert "code 5" in caught.value.error["message"]


async def test_a_hang_in_a_forked_worker_is_located_and_killed(tmp_path: Path) -> None:
    from crux_devtools.inspector.transport.forkserver import ForkServer

    shutil.copy(PROJECTS / "infinite_loop" / "prompts.py", tmp_path / "prompts.py")
    server = ForkServer(tmp_path)
    await server.start()
    try:
        worker = await server.fork()
        modules = [m.to_dict() for m in discover(tmp_path).modules]
        with pytest.raises(WorkerError) as caught:
            await worker.call("load", {"root": str(tmp_path), "modules": modules}, 1.0)
        await worker.close()
        code = await asyncio.wait_for(worker.exited, WAIT)
    finally:
        await server.close()
    assert caught.value.error["type"] == "TimeoutError"
    assert caught.value.error["file"] == "prompts.py" and caught.value.error["line"] in (4, 5)
    assert code == -9


async def test_a_primed_worker_compiles_only_the_files_changed_since_and_counts_nothing_twice(tmp_path: Path) -> None:
    root = tmp_path / "good"
    shutil.copytree(PROJECTS / "good", root)
    modules = [m.to_dict() for m in discover(root).modules]
    first, answer = await load(root)
    await first.close()
    assert answer["ok"], answer
    counted = answer["result"]["counted"]
    assert counted["texts"], "a load reports the texts it counted, to prime the next worker"
    worker = await SpawnedWorker.start(root)
    try:
        files = [m["path"] for m in modules]
        primed = await worker.call("prime", {"root": str(root), "modules": [], "files": files, **counted}, 10)
        assert primed["ok"] and primed["result"]["files"] == len(files), primed
        edited = root / "prompts.py"
        edited.write_text(edited.read_text() + "\nADDED_AFTER_PRIMING = 1\n")
        again = await worker.call("load", {"root": str(root), "modules": modules}, 10)
    finally:
        await worker.close()
    assert again["ok"], again
    # Same report as a fresh worker's: the edit is seen, nothing stale is reused.
    assert [p["id"] for p in again["result"]["prompts"]] == [p["id"] for p in answer["result"]["prompts"]]
    assert again["result"]["prompts"][0]["examples"] == answer["result"]["prompts"][0]["examples"]


def test_compiled_sources_are_reused_only_for_identical_bytes(tmp_path: Path) -> None:
    from crux_devtools.inspector.worker.imports import assignment_lines, compile_source

    path = str(tmp_path / "m.py")
    one = compile_source(path, b"a = 1\n")
    assert compile_source(path, b"a = 1\n") is one
    two = compile_source(path, b"\nb = 2\n")
    assert two is not one and assignment_lines(two.tree) == {"b": 2}
    broken = compile_source(path, b"def (:\n")
    assert broken.tree is None and broken.code is None
