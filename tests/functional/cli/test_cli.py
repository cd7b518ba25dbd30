"""The ``inspect`` and ``check`` commands, run for real, and their docs: in this process through click's
runner with in-process workers (``cli_in_process``), as a process where exit codes and output of the
process are read, and with worker processes for a hang killed at its timeout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from cli_in_process import invoke
from click.testing import CliRunner

from crux_devtools.cli import main

PROJECTS = Path(__file__).parents[2] / "projects"
REPO = Path(__file__).resolve().parents[3]


def run(*args: str) -> tuple[int, str]:
    """Exit code and output (stdout and stderr) of ``crux-devtools ARGS``, its workers in this process."""
    result = invoke(*args, catch_exceptions=False)
    return result.exit_code, result.output


def run_with_worker_processes(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def test_inspect_resolved_prints_parts_tokens_exclusions_and_tools() -> None:
    code, out = run("inspect", str(PROJECTS / "good"), "--prompt", "support", "--resolved")
    assert code == 0
    assert "prompt support  (prompts.py:30)  status: fits" in out
    assert "┌─ <prompt> [prompt] 6 tokens" in out
    assert "│ You are a support agent." in out
    assert "┌─ style [context, priority 80]" in out
    assert "excluded: expert (when-wrapper)" in out
    assert "tools: lookup" in out
    assert "greeter" not in out


def test_inspect_says_what_a_memory_read_and_what_the_planner_adapted() -> None:
    code, out = run("inspect", str(REPO / "sample_project"), "--prompt", "support-with-memory", "--resolved")
    assert code == 0
    header = next(i for i, line in enumerate(out.splitlines()) if line.startswith("    ┌─ customer-memory [memory"))
    assert out.splitlines()[header + 1] == (
        "    │ (namespace 'user:dana': recent: the last 2 messages (at most 6); facts: 2 matching facts, all shown)"
    )
    code, out = run("inspect", str(REPO / "sample_project"), "--prompt", "ladder-reply")
    assert code == 0
    assert "    adapted sync-log -> summary: 6922 -> 2064 tokens" in out
    code, out = run("inspect", str(REPO / "sample_project"), "--prompt", "support-with-memory")
    assert code == 0
    header = next(i for i, line in enumerate(out.splitlines()) if line.startswith("    ┌─ customer-memory [memory"))
    assert out.splitlines()[header + 1] == (
        "    ╎ (namespace 'user:dana': recent: the last 2 messages (at most 6); facts: 2 matching facts, all shown)"
    )


def test_inspect_with_an_input_budget_plans_each_request_under_it() -> None:
    args = ("inspect", str(REPO / "sample_project"), "--prompt", "ladder-reply", "--example", "quiet-day")
    code, roomy = run(*args, "--json")
    assert code == 0
    code, tight = run(*args, "--input-budget", "600", "--json")
    assert code == 0
    roomy_plan = json.loads(roomy)["prompts"][0]["examples"][0]["preview"]
    tight_plan = json.loads(tight)["prompts"][0]["examples"][0]["preview"]
    assert roomy_plan["adaptations"] == [] and roomy_plan["input_tokens"] > 600
    assert tight_plan["max_input_tokens"] == 600 and tight_plan["input_tokens"] <= 600
    assert tight_plan["adaptations"], "a budget below the full request must adapt something"


def test_inspect_with_a_token_budget_shows_what_is_dropped() -> None:
    code, out = run("inspect", str(PROJECTS / "good"), "--prompt", "support", "--example", "expert", "--token-budget", "12")
    assert code == 0
    assert "    dropped before planning (token_budget 12): expert (priority 20, 8 tokens, budget)" in out
    assert "┌─ expert" not in out and "lookup" not in out  # a dropped context takes its tool with it
    code, out = run("inspect", str(PROJECTS / "good"), "--prompt", "support", "--example", "expert", "--token-budget", "12", "--resolved")
    assert code == 0
    assert "budget 12, fits" in out
    assert "dropped: expert (priority 20, 8 tokens, budget)" in out
    assert "example 'basic'" not in out


def test_inspect_json_is_the_report_for_scripts() -> None:
    code, out = run("inspect", str(PROJECTS / "good"), "--json", "--input", '{"question": "hi", "tone": "warm"}', "--prompt", "support")
    assert code == 0
    report = json.loads(out)
    [support] = report["prompts"]
    [example] = support["examples"]
    assert example["name"] == "custom" and "warm tone" in example["inspection"]["system"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--prompt", "nobody"], "no prompt or agent with id 'nobody'; known ids: support, greeter"),
        (["--prompt", "support", "--example", "nope"], "has no example 'nope'; known examples: basic, expert"),
        (["--input", "[1]"], "must be a JSON object"),
        (["--input", "{"], "not valid JSON"),
        (["--example", "basic", "--input", "{}"], "either --example or --input"),
    ],
)
def test_inspect_rejects_bad_arguments_with_a_clear_message(args: list[str], message: str) -> None:
    code, out = run("inspect", str(PROJECTS / "good"), *args)
    assert code != 0
    assert message in out


def test_check_passes_on_a_good_project() -> None:
    code, out = run("check", str(PROJECTS / "good"))
    assert code == 0
    assert "ok: 2 prompt(s), 3 example(s), no failures" in out


def test_check_fails_with_one_file_line_message_per_failure() -> None:
    code, out = run("check", str(PROJECTS / "bad_example"))
    assert code == 1
    lines = [line for line in out.splitlines() if line.startswith("prompts.py:")]
    assert lines[0] == "prompts.py:15: InputValidationError: prompt 'orders' example 'bad': field 'order_id': expected an integer, got 'seven'"
    assert lines[1] == "prompts.py:11: CallbackError: prompt 'loud' example 'empty': 'loud': system callback raised ValueError: no shouting allowed"
    assert "2 failure(s)" in out


def test_an_example_typo_is_one_readable_line_per_field_with_a_suggestion() -> None:
    code, out = run("check", str(PROJECTS / "example_typo"))
    assert code == 1
    assert out.splitlines()[0] == (
        "prompts.py:19: InputValidationError: prompt 'tickets' example 'typo': "
        "unknown field 'mesage' (did you mean 'message'?) | missing required field 'message' | "
        "field 'count': expected an integer, got 'abc'"
    )
    code, out = run("inspect", str(PROJECTS / "example_typo"), "--example", "typo")
    assert code == 1
    assert "\n".join(out.splitlines()[3:7]) == (
        "  example 'typo': invalid input\n"
        "  prompts.py:19: InputValidationError:\n"
        "    unknown field 'mesage' (did you mean 'message'?)\n"
        "    missing required field 'message'"
    )
    result = invoke("inspect", str(PROJECTS / "example_typo"), "--example", "typo", "--json", catch_exceptions=False)
    assert result.exit_code == 1 and result.stderr == "1 failure(s)\n"
    out = result.stdout
    [example] = json.loads(out)["prompts"][0]["examples"]
    assert example["error"] == {
        "file": "prompts.py",
        "line": 19,
        "type": "InputValidationError",
        "message": "unknown field 'mesage' (did you mean 'message'?)\nmissing required field 'message'\nfield 'count': expected an integer, got 'abc'",
        "traceback": "",  # bad input, not a fault in code: no library traceback repeating it
    }
    assert "errors.pydantic.dev" not in out and "validation error for" not in out


def test_a_failing_memory_callback_is_reported_as_that_callback_at_its_own_line() -> None:
    code, out = run("check", str(PROJECTS / "bad_memory_query"))
    assert code == 1
    assert out.splitlines()[:3] == [
        "prompts.py:16: CallbackError: prompt 'asks' example 'basic': 'raising-memory': query callback raised KeyError: 'no such field: topic'",
        "prompts.py:19: CallbackError: prompt 'counts' example 'basic': 'number-memory': query callback returned int, "
        "expected str or None; return the text to search the memory for (None: its newest facts)",
        "prompts.py:27: CallbackError: prompt 'nameless' example 'basic': 'nameless-memory': namespace callback returned None, "
        'expected a non-empty string; return the namespace to read and write, e.g. f"user:{i.user_id}"',
    ]
    assert "system callback" not in out


def _real_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).parent / "crux-devtools"), *args], capture_output=True, text=True, timeout=120)


def test_inspect_with_an_invalid_input_field_exits_1_and_says_which_field() -> None:
    good = str(PROJECTS / "good")
    result = _real_cli("inspect", good, "--prompt", "support", "--input", '{"question": "Where is my order?", "tonee": "warm"}')
    assert result.returncode == 1, result.stdout + result.stderr
    assert "prompt support  (prompts.py:30)  status: invalid input" in result.stdout
    assert "  prompts.py:30: InputValidationError: unknown field 'tonee' (did you mean 'tone'?)" in result.stdout
    assert "status: fits" not in result.stdout
    result = _real_cli("inspect", good, "--prompt", "support", "--input", '{"question": "Where?", "expert": "maybe"}', "--json")
    assert result.returncode == 1
    [support] = json.loads(result.stdout)["prompts"]
    assert support["status"] == "invalid-input"
    assert support["examples"][0]["error"]["message"] == "field 'expert': expected true or false, got 'maybe'"
    result = _real_cli("inspect", good, "--prompt", "support", "--input", '{"question": "Where is my order?", "tone": "warm"}')
    assert result.returncode == 0, result.stdout + result.stderr
    assert "status: fits" in result.stdout


def test_inspect_exits_1_when_an_example_it_prints_failed() -> None:
    code, out = run("inspect", str(PROJECTS / "bad_example"))
    assert code == 1
    assert "prompt orders  (prompts.py:14)  status: invalid input" in out
    code, _ = run("inspect", str(PROJECTS / "bad_example"), "--prompt", "orders", "--example", "good")
    assert code == 0


@pytest.mark.parametrize(
    ("project", "expected"),
    [
        ("syntax_error", "prompts.py:5: SyntaxError: "),
        ("sys_exit", "prompts.py:6: SystemExit: user code called sys.exit(3)"),
        ("missing_dependency", "prompts.py:2: ModuleNotFoundError: No module named 'package_that_is_not_installed'"),
    ],
)
def test_check_reports_import_faults_and_exits_1(project: str, expected: str) -> None:
    code, out = run("check", str(PROJECTS / project))
    assert code == 1
    assert expected in out


def test_check_kills_a_hang_after_the_timeout() -> None:
    code, out = run_with_worker_processes("check", str(PROJECTS / "infinite_loop"), "--timeout", "1")
    assert code == 1
    assert "TimeoutError: user code did not finish within 1 s" in out
    assert "prompts.py:4:" in out or "prompts.py:5:" in out


def test_check_on_a_folder_without_prompts_says_how_to_add_one() -> None:
    code, out = run("check", str(PROJECTS / "empty"))
    assert code == 0
    assert "No prompts found" in out


def test_a_missing_folder_is_a_clear_error() -> None:
    code, out = run("check", str(PROJECTS / "does-not-exist"))
    assert code == 1
    assert "does not exist" in out


def test_inspect_and_check_write_no_history() -> None:
    run("check", str(PROJECTS / "configured"))
    assert not (PROJECTS / "configured" / ".crux").exists()


def every_command() -> list[tuple[str, click.Command]]:
    """Every command of the command line by its full name (``runs list``), groups' subcommands included."""
    found: list[tuple[str, click.Command]] = []

    def walk(prefix: str, group: click.Group) -> None:
        ctx = click.Context(group)
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            assert command is not None, name
            found.append((f"{prefix}{name}", command))
            if isinstance(command, click.Group):
                walk(f"{prefix}{name} ", command)

    walk("", main)
    return found


def test_every_cli_option_is_documented_in_the_readme() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    missing = []
    for name, command in every_command():
        if f"crux-devtools {name}" not in readme:
            missing.append(f"crux-devtools {name}")
        for param in command.params:
            if isinstance(param, click.Option):
                missing.extend(f"{name} {opt}" for opt in param.opts if opt not in readme)
    assert missing == [], f"document these in README.md (section 'Command line'): {missing}"


def test_importing_the_cli_loads_no_ui_server_or_watcher() -> None:
    code = "import sys, crux_devtools.cli; print(sorted(m for m in ('textual','fastapi','uvicorn','jinja2','watchfiles') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_the_command_table_names_each_command_with_its_own_short_help() -> None:
    from crux_devtools.cli import COMMANDS

    ctx = click.Context(main)
    for name, entry in COMMANDS.items():
        command = main.get_command(ctx, name)
        assert command is not None and command.name == name, entry.target
        assert entry.short_help == command.get_short_help_str(limit=1000), f"the table's short help of {name!r} is not its docstring's first sentence"
    assert main.list_commands(ctx) == sorted(COMMANDS)


def test_every_command_a_module_of_the_cli_defines_is_in_the_command_table() -> None:
    """A ``click.command("NAME")`` in ``cli/NAME.py`` without its line in ``COMMANDS`` is no command at all."""
    import ast

    from crux_devtools.cli import COMMANDS

    defined = {}
    for path in sorted((REPO / "crux_devtools" / "cli").glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            for decorator in getattr(node, "decorator_list", []):
                if isinstance(decorator, ast.Call) and ast.unparse(decorator.func) in ("click.command", "click.group") and decorator.args:
                    defined[ast.literal_eval(decorator.args[0])] = f"{path.stem}:{node.name}"  # type: ignore[attr-defined]
    assert defined == {name: entry.target for name, entry in COMMANDS.items()}


def test_help_lists_every_command_without_importing_any_command_module() -> None:
    code = (
        "import sys\nfrom crux_devtools.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('crux_devtools.cli.') or m.startswith(('asyncio', 'crux_devtools.core.', 'crux_devtools.review'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    *help_lines, loaded = done.stdout.strip().splitlines()
    assert loaded == "[]"
    from crux_devtools.cli import COMMANDS

    listed = [line.split()[0] for line in help_lines[help_lines.index("Commands:") + 1:]]
    assert listed == sorted(COMMANDS)


def test_a_command_imports_its_own_module_only() -> None:
    code = (
        "import sys\nfrom crux_devtools.cli import main\n"
        "try:\n    main(['tui', '--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('crux_devtools.cli.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "['crux_devtools.cli.common', 'crux_devtools.cli.tui']"
