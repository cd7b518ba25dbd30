"""The inspector's own runs (``crux-devtools run``, like the Run button) go through the project's
``[tool.crux-devtools] redact`` hook: the stored run and what the command prints are masked, and a
hook that cannot be loaded keeps the run out of the store. Real worker, real SQLite file."""

from __future__ import annotations

from pathlib import Path

from test_cli_runs import cli

from crux_devtools.core.record.runstore import RunStore

CARD = "4000-1234-5678-9010"
AGENTS = f'''
from pydantic import BaseModel
from crux_devtools import ModelCapacityProfile, ScriptedModel, agent, context, prompt


class Card(BaseModel):
    card: str


ask = prompt("card", system="You help with cards.", input=Card, prompt=lambda i: f"Block card {{i.card}}",
             use=[context("on-file", input=Card, system=lambda i: f"Card on file: {{i.card}}")], examples={{"first": {{"card": "{CARD}"}}}})
card_agent = agent("card-agent", prompt=ask, model=ScriptedModel(["Card {CARD} is blocked."], capacity=ModelCapacityProfile(8000, 100, "exact")))
'''


def project(root: Path, hook: str) -> Path:
    (root / "agents.py").write_text(AGENTS, encoding="utf-8")
    (root / "hooks.py").write_text(hook, encoding="utf-8")
    (root / "pyproject.toml").write_text('[tool.crux-devtools]\nredact = "hooks:redact"\n', encoding="utf-8")
    return root


def test_the_run_command_records_and_prints_through_the_projects_redact_hook(tmp_path: Path) -> None:
    root = project(tmp_path, 'from crux_devtools import redact_values\nredact = redact_values(input_fields=["card"])\n')
    done = cli("run", str(root), "--prompt", "card-agent")
    assert done.returncode == 0, done.stderr
    masked = "*" * len(CARD)
    assert done.stdout == f"Card {masked} is blocked.\n" and CARD not in done.stderr
    with RunStore.for_project(root, create=False) as store:
        (summary,) = store.list()
        run = store.get(summary["id"])
    assert run is not None and run["origin"] == "inspector" and CARD not in repr(run)
    assert run["steps"][0]["sent"]["system"].endswith(f"Card on file: {masked}")


def test_a_hook_that_cannot_be_loaded_keeps_the_run_out_of_the_store(tmp_path: Path) -> None:
    root = project(tmp_path, "raise ImportError('no such secret vault')\n")
    done = cli("run", str(root), "--prompt", "card-agent")
    assert done.returncode == 1 and CARD not in done.stdout + done.stderr
    assert "no such secret vault" in done.stderr and "RedactError" in done.stderr and "Traceback" not in done.stderr
    db = root / ".crux" / "runs.sqlite3"
    if db.exists():
        with RunStore.for_project(root, create=False) as store:
            assert store.count() == 0


def test_a_replay_sent_from_the_command_line_is_stored_and_printed_masked(tmp_path: Path) -> None:
    """The replayed request carries the recorded (masked) input, so a field redaction has nothing to
    find in it; a value the hook names itself is masked in the model's new answer."""
    root = project(tmp_path, f'from crux_devtools import redact_values\nredact = redact_values("{CARD}")\n')
    assert cli("run", str(root), "--prompt", "card-agent").returncode == 0
    with RunStore.for_project(root, create=False) as store:
        (parent,) = store.list()
    sent = cli("replay", str(root), "--run", parent["id"], "--send", "--max", "7000")
    assert sent.returncode == 0, sent.stderr
    assert CARD not in sent.stdout + sent.stderr and "sent: Card *******************" in sent.stdout
    with RunStore.for_project(root, create=False) as store:
        runs = [store.get(r["id"]) for r in store.list()]
    assert len(runs) == 2 and CARD not in repr(runs)
