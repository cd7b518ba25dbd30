"""``crux-devtools inspect`` prints the request as sent: the real command, in this process with
in-process workers (``cli_in_process``), and as a process where what a process prints is read."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import cli

REPO = Path(__file__).resolve().parents[3]
PROJECTS = Path(__file__).parents[2] / "projects"
COMMAND = str(Path(sys.executable).parent / "crux-devtools")
SAMPLE = REPO / "sample_project"


def inspect(*args: str) -> subprocess.CompletedProcess[str]:
    """``crux-devtools inspect ARGS`` in this process, its worker in-process."""
    return cli("inspect", *args, cwd=REPO)


def inspect_process(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([COMMAND, "inspect", *args], capture_output=True, text=True, timeout=120, cwd=REPO)


def preview_of(project: Path, prompt_id: str, example: str, *more: str, run: Any = inspect) -> dict[str, Any]:
    done = run(str(project), "--prompt", prompt_id, "--example", example, "--json", *more)
    return json.loads(done.stdout)["prompts"][0]["examples"][0]["preview"]


def printed_parts(out: str) -> list[tuple[str, list[str]]]:
    """The boxed blocks of the sent system text: (header, body lines), in printed order."""
    lines = out.splitlines()
    start = lines.index("    system text as sent:")
    parts: list[tuple[str, list[str]]] = []
    for line in lines[start + 1 :]:
        if line == "    └─":
            break
        if line.startswith("    ┌─ "):
            parts.append((line[len("    ┌─ ") :], []))
        elif line.startswith("    ╎ "):
            continue  # a note, not sent
        else:
            assert line.startswith("    │ ") or line == "    │", line
            parts[-1][1].append(line[len("    │ ") :])
    return parts


def test_inspect_prints_the_authored_alternative_that_is_sent_and_its_parts_rebuild_the_sent_system_text() -> None:
    done = inspect_process(str(SAMPLE), "--prompt", "ladder-reply", "--example", "big-catalog")  # the bytes a process prints
    assert done.returncode == 0, done.stderr
    preview = preview_of(SAMPLE, "ladder-reply", "big-catalog")
    out = done.stdout
    assert f"  example 'big-catalog': input tokens {preview['input_tokens']} of max {preview['max_input_tokens']} (fits)" in out
    parts = printed_parts(out)
    headers = [h for h, _ in parts]
    catalog = next(c for c in preview["contributions"] if c["contributor"] == "catalog")
    assert f"catalog [ladder] authored: catalog-index, {catalog['tokens']} tokens" in headers
    assert "## Product catalog (index)" in out and "## Product catalog (complete)" not in out
    # every character of the sent system text is printed, part by part, in order
    assert "\n\n".join("\n".join(body) for _, body in parts) == preview["sent"]["system"]
    # the tool schema, with its own token cost
    assert f"    tools (1, {preview['tool_tokens']['lookup_sku']} tokens):" in out
    assert f"    ┌─ lookup_sku, {preview['tool_tokens']['lookup_sku']} tokens: Look up one product by SKU." in out
    assert '    │   "required": [' in out
    assert "    ┌─ user\n    │ Is Business Plus available in ap-south?" in out


def test_inspect_prints_the_offload_preview_its_handle_and_the_support_tool() -> None:
    done = inspect(str(SAMPLE), "--prompt", "ladder-reply", "--example", "busy-day", "--input-budget", "2000")
    assert done.returncode == 0, done.stderr
    preview = preview_of(SAMPLE, "ladder-reply", "busy-day", "--input-budget", "2000")
    sync = next(c for c in preview["contributions"] if c["contributor"] == "sync-log")
    out = done.stdout
    assert re.search(r"┌─ sync-log \[ladder\] offload preview · handle ofl_\d+, 270 tokens", out)
    assert "│ [sync-log is offloaded: lines, 16762 characters. Exact content: read_offload(handle=" in out
    assert sync["representation"] == "offload" and "2026-11-29T03:10:00Z ERROR" not in out  # the full log is not sent
    assert f"    ┌─ read_offload, {preview['tool_tokens']['read_offload']} tokens: Read the exact content" in out
    # generate prepares the extractive summary before sending (so the inspector did), but it does not fit 2,000
    summary = next(c for c in preview["candidates"] if c["contributor"] == "sync-log" and c["representation"] == "summary")
    assert f"      sync-log @ summary: {summary['input_tokens']} tokens, rejected (over-limit)" in out
    assert "    summary of sync-log (extractive:0.3): prepared here without a model, as generate prepares it before sending (not stored)" in out
    assert "None tokens" not in out


def test_resolved_shows_every_part_in_full_as_before_planning() -> None:
    done = inspect(str(SAMPLE), "--prompt", "ladder-reply", "--example", "busy-day", "--resolved")
    assert done.returncode == 0, done.stderr
    assert "    ┌─ sync-log [context, priority 50] 6922 tokens" in done.stdout
    assert "2026-11-29T03:10:00Z ERROR device=laptop-7 upload stalled" in done.stdout  # the whole log
    assert "system text as sent" not in done.stdout
    assert "      candidate sync-log @ summary: 3893 tokens, selected" in done.stdout  # prepared as generate prepares it


def test_brief_cuts_long_parts_to_a_few_lines_and_says_how_much_was_cut() -> None:
    full = inspect(str(SAMPLE), "--prompt", "ladder-reply", "--example", "busy-day")
    brief = inspect(str(SAMPLE), "--prompt", "ladder-reply", "--example", "busy-day", "--brief")
    assert brief.returncode == 0, brief.stderr
    full_parts = dict(printed_parts(full.stdout))
    brief_parts = dict(printed_parts(brief.stdout))
    assert full_parts.keys() == brief_parts.keys()
    header = next(h for h in full_parts if h.startswith("catalog "))
    lines = full_parts[header]
    assert brief_parts[header][:4] == [line[:160] + (f" … (+{len(line) - 160:,} characters, --brief)" if len(line) > 160 else "") for line in lines[:4]]
    hidden = lines[4:]
    assert brief_parts[header][4] == f"… {len(hidden)} more lines ({sum(len(x) + 1 for x in hidden):,} characters) not shown (--brief)"
    assert len(brief_parts[header]) == 5
    # short parts are left whole, and token counts stay those of the whole request
    short = next(h for h in full_parts if h.startswith("house-rules "))
    assert brief_parts[short] == full_parts[short]
    headline = r"input tokens \d+ of max \d+ \(fits\)"
    assert re.findall(headline, brief.stdout) == re.findall(headline, full.stdout) != []
    assert len(brief.stdout) < len(full.stdout) / 3


@pytest.mark.parametrize("mode", [(), ("--brief",), ("--resolved",)])
def test_inspect_never_prints_none_tokens_for_any_project(mode: tuple[str, ...]) -> None:
    for project in [SAMPLE, *(PROJECTS / name for name in ("good", "bad_example", "huge_text", "check_truths"))]:
        done = inspect(str(project), *mode)
        assert "None tokens" not in done.stdout, project
        assert "None input tokens" not in done.stdout, project


def test_inspect_exits_1_when_what_it_printed_failed() -> None:
    over = inspect(str(PROJECTS / "huge_text"))
    assert over.returncode == 1
    assert "(over limit: no plan fits the model's input limit: generate refuses it and nothing is sent)" in over.stdout
    assert "1 failure(s)" in over.stderr
    bad = inspect(str(PROJECTS / "bad_example"), "--prompt", "orders")
    assert bad.returncode == 1 and "example 'bad': invalid input" in bad.stdout
    good = inspect(str(PROJECTS / "bad_example"), "--prompt", "orders", "--example", "good")
    assert good.returncode == 0, good.stdout + good.stderr
    unmatched = inspect(str(PROJECTS / "check_truths"), "--prompt", "modes", "--example", "typo")
    assert unmatched.returncode == 1
    assert "    FAILED: match(...) in 'modes' selected 'replly', which has no case" in unmatched.stdout


def test_json_is_still_the_whole_report() -> None:
    done = inspect(str(SAMPLE), "--prompt", "support-agent", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    example = report["prompts"][0]["examples"][0]
    assert set(example["preview"]["sent"]) == {"system", "messages", "tools", "max_tokens"}
    assert example["inspection"]["parts"]


def test_a_prepared_summary_is_printed_as_the_summary_rung_that_is_sent(tmp_path: Path) -> None:
    """Not a coroutine: the session that prepares the summary runs in an event loop of its own, so the
    command can then run in this process (it runs its own)."""
    import asyncio
    import shutil

    from crux_devtools.inspector.session.service import ProjectSession
    from crux_devtools.inspector.transport.inprocess import in_process

    project = tmp_path / "sample_project"
    shutil.copytree(SAMPLE, project, ignore=shutil.ignore_patterns("__pycache__", ".crux*"))
    async def prepare() -> Any:
        async with ProjectSession(project, transport=in_process, watch=False, history=False, prewarm=False, fork=False) as session:
            return await session.prepare_summaries("ladder-reply", example="busy-day")

    result = asyncio.run(prepare())
    assert [p["contributor"] for p in result["prepared"]] == ["sync-log"], result
    done = inspect(str(project), "--prompt", "ladder-reply", "--example", "busy-day")
    assert done.returncode == 0, done.stderr
    preview = preview_of(project, "ladder-reply", "busy-day")
    summary = next(c for c in preview["contributions"] if c["contributor"] == "sync-log")
    assert summary["representation"] == "summary"
    assert f"    ┌─ sync-log [ladder] summary, {summary['tokens']} tokens" in done.stdout
    start, end = summary["span"]
    assert "\n".join(dict(printed_parts(done.stdout))[f"sync-log [ladder] summary, {summary['tokens']} tokens"]) == preview["sent"]["system"][start:end]
    assert "    summary of sync-log (extractive:0.3): prepared" in done.stdout
    assert "not prepared" not in done.stdout
