"""The README's promises: its two opening commands, and CI running exactly the test command."""

from __future__ import annotations

import re
from pathlib import Path

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
