"""The README's promises: its two opening commands, and CI running exactly the test command."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from child_signals import INTERRUPTIBLE
from waits import WAIT


REPO = Path(__file__).resolve().parents[3]


def opening_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.S)
    assert block, "README must open with a bash block holding the two commands"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_opens_with_a_setup_and_serve_command_and_a_test_command():
    setup_and_serve, test = opening_commands()
    assert setup_and_serve == "bash .ci/setup && .venv/bin/crux-devtools serve sample_project"
    assert test == ".venv/bin/python -m pytest"


def test_ci_runs_the_setup_and_exactly_the_readme_test_command():
    _, test = opening_commands()
    lines = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    assert "bash .ci/setup" in lines
    assert test in lines


def test_setup_script_installs_python_packages_npm_assets_and_chromium():
    setup = (REPO / ".ci" / "setup").read_text()
    assert "pip install" in setup and "-e '.[dev]'" in setup
    assert "npm ci" in setup and "static/vendor" in setup
    assert "apt-get install" in setup and "chromium" in setup


def test_the_readme_serve_command_serves_the_sample_project(tmp_path):
    """Run the first command's main job as written (from the repo root) and fetch the page it serves."""
    import os
    import signal
    import subprocess
    import sys
    import time

    import httpx

    exe = Path(sys.executable).with_name("crux-devtools")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [str(exe), "serve", "sample_project"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, **INTERRUPTIBLE
    )
    try:
        url = None
        deadline = time.monotonic() + WAIT
        lines = []
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            match = re.search(r"Serving at (http://\S+)", line)
            if match:
                url = match.group(1)
        assert url, "serve did not print its URL:\n" + "".join(lines)
        page = None
        while time.monotonic() < deadline:
            try:
                page = httpx.get(url, timeout=5)
                break
            except httpx.TransportError:
                time.sleep(0.2)
        assert page is not None and page.status_code == 200
        for prompt_id in ("support-reply", "responder", "budgeted-reply"):
            assert prompt_id in page.text
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_every_python_example_in_the_readme_runs_and_its_assertions_hold(tmp_path):
    import subprocess
    import sys

    blocks = re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(), re.S)
    assert blocks, "the README should show the library in use"
    for n, code in enumerate(blocks):
        script = tmp_path / f"readme_{n}.py"
        script.write_text(code)
        out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert out.returncode == 0, f"README python block {n} failed:\n{out.stderr}"


def test_the_readmes_inspect_example_runs_as_written():
    """``$ crux-devtools inspect ...`` lines in the README run from the repo root and exit 0."""
    import shlex
    import subprocess
    import sys

    lines = re.findall(r"^\$ (crux-devtools inspect .*)$", (REPO / "README.md").read_text(), re.M)
    assert lines, "the README should show an inspect command"
    exe = Path(sys.executable).with_name("crux-devtools")
    for line in lines:
        args = shlex.split(line)[1:]
        out = subprocess.run([str(exe), *args], cwd=REPO, capture_output=True, text=True, timeout=180)
        assert out.returncode == 0, f"{line}: {out.stdout}{out.stderr}"
        if "--token-budget" in args:
            assert "dropped: " in out.stdout, f"{line} drops nothing"


def test_the_readme_says_how_to_install_the_library_into_your_own_project():
    text = (REPO / "README.md").read_text()
    section = text.split("## Use it in your own project", 1)[1].split("\n## ", 1)[0]
    assert "pip install /path/to/crux_devtools" in section
    assert "python -m build" in section
    assert "[tool.crux-devtools]" in section
    assert "crux-devtools serve ." in section


def test_the_readme_says_the_first_command_keeps_the_terminal_and_how_to_stop_it():
    intro = (REPO / "README.md").read_text().split("\n## ", 1)[0]
    assert "Ctrl+C" in intro and "foreground" in intro


def budgeted_reply_drop_order() -> list[str]:
    """The contexts of the sample's ``budgeted-reply`` in the order they leave as the budget falls."""
    import importlib.util
    import sys

    sys.path.insert(0, str(REPO / "sample_project"))
    try:
        spec = importlib.util.spec_from_file_location("tour_03_budgets", REPO / "sample_project" / "03_budgets.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(REPO / "sample_project"))
    reply = module.budgeted_reply
    example = reply.examples["with-brand-voice"]
    order: list[str] = []
    for budget in range(reply.inspect(example, token_budget=10_000).total_tokens, 0, -1):
        for dropped in reply.inspect(example, token_budget=budget).dropped_contexts:
            if dropped.id not in order:
                order.append(dropped.id)
    return order


def test_the_tours_budget_step_names_the_drops_in_the_order_they_happen():
    order = budgeted_reply_drop_order()
    assert order[0] == "style-examples"  # the one the default budget drops
    text = (REPO / "README.md").read_text()
    step = text.split("3. **Budgets**", 1)[1].split("\n4. ", 1)[0]
    after_drag = step.split("Drag the budget slider", 1)[1]
    named = sorted((after_drag.index(f"`{cid}`"), cid) for cid in order[1:] if f"`{cid}`" in after_drag)
    assert [cid for _, cid in named] == order[1:], f"the tour says {named}, the sample drops {order}"
    assert "hatched" in step and "*Resolved view*" in step.split("hatched", 1)[0].rsplit(".", 1)[-1]


# -- the README's numbers that state a fact about the repository ------------------------------------

SAMPLE = REPO / "sample_project"
# references in the README to a file named like a sample one, in another example project
OTHER_PROJECTS = {"shared.py:12": "the diff --runs example: the project of tests/functional/cli/test_diff_cli.py"}
LINE_REF = re.compile(r"(?<![\w/.])([\w-]+\.py):(\d+)")


def _statement_at(tree: ast.Module, line: int) -> ast.stmt | None:
    return next((node for node in tree.body if node.lineno <= line <= (node.end_lineno or node.lineno)), None)


def _defined_id(statement: ast.stmt) -> str | None:
    """The id a top-level definition gives: ``prompt("support-reply", ...)`` -> ``support-reply``."""
    call = getattr(statement, "value", None)
    if isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
        return call.args[0].value
    return None


def _named(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def test_every_line_reference_into_the_sample_project_holds_what_the_text_names():
    """``support-reply (prompt, 01_contexts.py:25)``, ``defined at shared.py:35``, ``optimize_at
    2,800 -> 1,000 (05_agent.py:156)``: a reference to a definition is its first line and the text
    before it names the id it defines; a reference to a setting is the line of that keyword
    argument, named just before; ``edited at`` is a line inside the definition of the id named."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    trees = {p.name: ast.parse(p.read_text(encoding="utf-8")) for p in SAMPLE.glob("*.py")}
    checked, wrong = 0, []
    for match in LINE_REF.finditer(readme):
        name, line = match.group(1), int(match.group(2))
        if name not in trees or match.group(0) in OTHER_PROJECTS:
            continue  # a file of an example shown in the README itself, not of this repository
        where = f"README.md:{readme.count(chr(10), 0, match.start()) + 1}: {match.group(0)}"
        checked += 1
        statement = _statement_at(trees[name], line)
        before = readme[max(0, match.start() - 400):match.start()]
        defined = _defined_id(statement) if statement is not None else None
        if statement is None:
            wrong.append(f"{where}: line {line} is outside every definition of sample_project/{name}")
        elif before.endswith("edited at ") or line == statement.lineno:
            if defined is None or not _named(defined, before):
                wrong.append(f"{where}: that line {'is in' if line != statement.lineno else 'defines'} {defined!r}, which the text before it does not name")
        else:
            keywords = [k.arg for n in ast.walk(statement) if isinstance(n, ast.Call) for k in n.keywords if k.arg and k.value.lineno == line]
            if not any(_named(k, before[-80:]) for k in keywords):
                wrong.append(f"{where}: that line sets {keywords or 'nothing'} inside {defined!r}, not what the text before it names")
    assert checked >= 20, "the README's sample-project line references were not found"
    assert not wrong, "\n".join(wrong)


def collected_in(session: pytest.Session) -> int | None:
    """How many tests ``session`` collected, when it collected every test file of the suite and
    deselected nothing (the whole suite's run: each of its worker processes collects every test);
    ``None`` otherwise."""
    option = session.config.option
    if option.keyword or option.markexpr or getattr(option, "deselect", None) or getattr(option, "lf", False):
        return None
    files = set((REPO / "tests").rglob("test_*.py"))
    if not files <= {item.path for item in session.items}:
        return None
    return len(session.items)


def test_the_readme_states_the_test_count_that_collection_finds(request: pytest.FixtureRequest) -> None:
    """``about N tests``: within a tenth of what ``pytest --collect-only`` counts (the count of this
    run's own collection when it is the whole suite's)."""
    import subprocess
    import sys

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    stated = [int(n.replace(",", "")) for n in re.findall(r"about ([\d,]+) tests", readme)]
    assert stated, "the README says how many tests the suite has"
    collected = collected_in(request.session)
    if collected is None:
        done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly", "-n", "0"],
                              cwd=REPO, capture_output=True, text=True, timeout=5 * WAIT)  # collection only, but of every test file
        found = re.search(r"(\d+) tests? collected", done.stdout)
        assert found, done.stdout[-2000:] + done.stderr[-2000:]
        collected = int(found.group(1))
    for number in stated:
        assert abs(number - collected) <= collected / 10, f"the README says about {number} tests; collection finds {collected}"


def test_every_benchmark_and_test_file_the_readme_names_exists():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:benchmarks|tests|\.ci|docs)/[\w./-]+\.(?:py|md|txt|svg))`", readme))
    assert len(named) >= 10
    missing = sorted(path for path in named if not (REPO / path).exists())
    assert not missing, f"the README names files that do not exist: {missing}"
