"""The inspector's report carries the request as sent, one status, the plan's model and prepared summaries.

Real worker processes (``ProjectSession``) over small projects written to a temporary folder.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from crux_devtools.inspector.session.discovery import read_model_config
from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.inspector.transport.inprocess import in_process

LADDERS = '''
from pydantic import BaseModel
from crux_devtools import ScriptedModel, InputBudget, agent, context, droppable, offloadable, prefer, prompt, summarizable, tool

class Sku(BaseModel):
    sku: str

lookup = tool("lookup_sku", description="Look up one product.", parameters=Sku, execute=lambda a: {"sku": a.sku})
LOG = "\\n\\n".join(f"Day {d}: the sync stalled at 03:{d:02d} after a token expired. It resumed. Nothing was lost." for d in range(120))

catalog = droppable(prefer(context("catalog", priority=70, tools=[lookup], system="## Catalog\\n" + "Pro 2 TB keeps 30 days of versions. " * 200),
                           context("catalog-index", system="## Catalog index\\nFree, Pro, Business.")))
log = offloadable(summarizable(context("sync-log", priority=50, system=LOG)), above_tokens=100)
notes = context("notes", priority=5, tools=[tool("note_tool", description="Takes a note.", parameters=Sku, execute=lambda a: "ok")],
                system="## Notes\\n" + "A low-priority note. " * 40)

ladders = prompt("ladders", system="You answer.", use=[catalog, log, notes], prompt="Why did it stop?", token_budget=5200,
                 examples={"one": {}})
named = prompt("named", system="You answer.", prompt="Hi", model="gpt-test", examples={"one": {}})
plain = prompt("plain", system="You answer.", prompt="Hi", examples={"one": {}})
bot = agent("bot", prompt=plain, model=ScriptedModel(["hi"], name="bot-model"), input_budget=InputBudget(max=3000))
'''

PYPROJECT = '''
[tool.crux-devtools]
default_model = "house-model"

[tool.crux-devtools.models.house-model]
context_window = 16384
default_output_reserve = 1024
counting_confidence = "exact"

[tool.crux-devtools.models.gpt-test]
context_window = 32000
'''


def write_project(root: Path, pyproject: str | None = PYPROJECT) -> Path:
    (root / "prompts.py").write_text(textwrap.dedent(LADDERS), encoding="utf-8")
    if pyproject is not None:
        (root / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    return root


def by_id(report: dict) -> dict:
    return {p["id"]: p for p in report["prompts"]}


async def test_each_example_carries_the_sent_request_planned_under_the_inspections_token_budget(tmp_path: Path) -> None:
    async with ProjectSession(write_project(tmp_path), transport=in_process, watch=False, history=False, prewarm=False) as session:
        report = session.report
    assert report is not None and report["errors"] == []
    [example] = by_id(report)["ladders"]["examples"]
    inspection, planned = example["inspection"], example["preview"]
    # One budget story: the context the inspection drops is the one the plan does not send, nor its tool.
    assert [d["id"] for d in inspection["dropped_contexts"]] == ["notes"] == [d["id"] for d in planned["dropped"]]
    sent = planned["sent"]
    assert "A low-priority note." not in sent["system"]
    assert "note_tool" not in [t["name"] for t in sent["tools"]] and "note_tool" not in planned["tool_tokens"]
    # Every tool is there with its schema and cost; every system part has its span in the sent text.
    lookup = next(t for t in sent["tools"] if t["name"] == "lookup_sku")
    assert lookup["parameters"]["properties"]["sku"]["type"] == "string" and planned["tool_tokens"]["lookup_sku"] > 0
    spans = [c["span"] for c in planned["contributions"] if c["span"]]
    assert spans[0][0] == 0 and spans[-1][1] == len(sent["system"])
    assert sent["messages"] == [{"role": "user", "content": "Why did it stop?"}]
    # The list's figure is the planned input (system + messages + tool schemas), not system + prompt.
    assert by_id(report)["ladders"]["total_tokens"] == planned["input_tokens"] > inspection["total_tokens"]  # + tool schemas
    # The full log fits, so generate would not prepare its summary, and neither does the inspector.
    assert example["summaries"] == [{"contributor": "sync-log", "strategy": "extractive:0.3", "needs_model": False, "model": None, "prepared": False,
                                     "state": "not-prepared", "note": None}]


async def test_the_plan_model_says_where_each_targets_model_and_profile_come_from(tmp_path: Path) -> None:
    text = write_project(tmp_path).joinpath("pyproject.toml").read_text().splitlines()
    house = next(i for i, line in enumerate(text, 1) if line == "[tool.crux-devtools.models.house-model]")
    async with ProjectSession(tmp_path, transport=in_process, watch=False, history=False, prewarm=False) as session:
        prompts = by_id(session.report)
    plain = prompts["plain"]
    assert plain["plan_model"]["source"] == "project" and plain["plan_model"]["name"] == "house-model"
    assert plain["plan_model"]["profile"] == f"pyproject.toml:{house}"
    first = plain["examples"][0]["preview"]
    assert (first["context_window"], first["output_reserve"], first["safety_margin"], first["capacity_source"]) == (16384, 1024, 0, "resolver")
    assert prompts["named"]["plan_model"]["source"] == "prompt" and prompts["named"]["examples"][0]["preview"]["context_window"] == 32000
    bot = prompts["bot"]
    assert (bot["plan_model"]["source"], bot["plan_model"]["name"]) == ("agent", "bot-model")
    assert bot["examples"][0]["preview"]["max_input_tokens"] == 3000  # the agent's input budget, shown as its limit
    assert bot["plan_model"]["hint"] and "bot-model" in bot["plan_model"]["hint"]  # known by name, no profile


async def test_with_no_model_named_anywhere_the_plan_says_so_and_how_to_name_one(tmp_path: Path) -> None:
    async with ProjectSession(write_project(tmp_path, pyproject=None), transport=in_process, watch=False, history=False, prewarm=False) as session:
        plain = by_id(session.report)["plain"]
    assert plain["plan_model"]["source"] == "none" and plain["plan_model"]["name"] is None
    assert "default_model" in plain["plan_model"]["hint"] and 'model="NAME"' in plain["plan_model"]["hint"]
    assert plain["examples"][0]["preview"]["capacity_source"] == "conservative"


def test_bad_model_settings_are_load_errors_at_their_line_in_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.crux-devtools]\ndefault_model = 7\n\n[tool.crux-devtools.models.small]\ncontext_window = "8k"\n\n'
        '[tool.crux-devtools.models.odd]\ncontext_window = 4096\ncounting_confidence = "roughly"\n\n'
        '[tool.crux-devtools.models.tight]\ncontext_window = 1000\ndefault_output_reserve = 1000\n\n'
        '[tool.crux-devtools.models.typo]\ncontext_windw = 1000\n',
        encoding="utf-8",
    )
    config, errors = read_model_config(tmp_path)
    assert config["models"] == {} and config["default_model"] is None
    found = [(e["file"], e["line"], e["message"].split(" must ")[0].split(" needs ")[0].split(" has ")[0]) for e in errors]
    assert found == [
        ("pyproject.toml", 2, "[tool.crux-devtools] default_model"),
        ("pyproject.toml", 5, "[tool.crux-devtools.models.small] context_window"),
        ("pyproject.toml", 9, "[tool.crux-devtools.models.odd] counting_confidence"),
        ("pyproject.toml", 13, "[tool.crux-devtools.models.tight] default_output_reserve (1000)"),
        ("pyproject.toml", 16, "[tool.crux-devtools.models.typo]"),
    ]
    assert "got '8k'" in errors[1]["message"] and "exact, estimated, conservative" in errors[2]["message"]
    assert "allowed: context_window, default_output_reserve, counting_confidence" in errors[4]["message"]


async def test_a_bad_model_setting_reaches_the_report_as_a_load_error(tmp_path: Path) -> None:
    write_project(tmp_path, '[tool.crux-devtools]\n\n[tool.crux-devtools.models.x]\ncontext_window = -1\n')
    async with ProjectSession(tmp_path, transport=in_process, watch=False, history=False, prewarm=False) as session:
        errors = session.report["errors"]
    assert [(e["file"], e["line"], e["type"]) for e in errors] == [("pyproject.toml", 4, "ConfigError")]


async def test_preparing_a_summary_stores_it_in_the_project_and_the_next_report_sends_it(tmp_path: Path) -> None:
    root = write_project(tmp_path)
    async with ProjectSession(root, transport=in_process, watch=False, history=False, prewarm=False) as session:
        assert not (root / ".crux").exists()  # reading the store never creates it
        result = await session.prepare_summaries("ladders", example="one", contributor="sync-log")
        report = session.report
    assert result["error"] is None and [p["contributor"] for p in result["prepared"]] == ["sync-log"]
    assert (root / ".crux" / "summaries.sqlite3").is_file()
    example = by_id(report)["ladders"]["examples"][0]
    assert report["version"] == 2  # prepared, then reloaded
    assert example["summaries"][0]["prepared"] is True
    summary = next(c for c in example["preview"]["candidates"] if c["representation"] == "summary")
    assert summary["available"] and summary["tokens"] is not None and summary["input_tokens"] is not None
    # A new session (the next serve) reads the same store.
    async with ProjectSession(root, transport=in_process, watch=False, history=False, prewarm=False) as again:
        assert by_id(again.report)["ladders"]["examples"][0]["summaries"][0]["prepared"] is True


async def test_an_over_limit_plan_makes_the_example_and_the_prompt_over_and_sends_nothing(tmp_path: Path) -> None:
    write_project(tmp_path)
    async with ProjectSession(tmp_path, transport=in_process, watch=False, history=False, prewarm=False) as session:
        example = await session.evaluate("ladders", example="one", input_budget=40)
        fits = await session.evaluate("ladders", example="one")
    assert example["status"] == "over-limit" and example["preview"]["status"] == "over-limit" and example["preview"]["sent"] is None
    assert example["preview"]["diagnostics"]
    assert fits["status"] == "fits"


async def test_a_system_text_over_its_token_budget_even_after_drops_is_over_in_every_headline(tmp_path: Path) -> None:
    (tmp_path / "p.py").write_text(
        "from crux_devtools import prompt\nbig = prompt('big', system='word ' * 400, prompt='Hi', token_budget=50, examples={'one': {}})\n",
        encoding="utf-8",
    )
    async with ProjectSession(tmp_path, transport=in_process, watch=False, history=False, prewarm=False) as session:
        big = by_id(session.report)["big"]
    example = big["examples"][0]
    assert example["preview"]["status"] == "fits"  # the model could take it ...
    assert example["status"] == big["status"] == "over-budget"  # ... but it is over the prompt's own budget: one status says so


async def test_an_over_long_sent_text_is_cut_in_the_report_with_exact_token_counts(tmp_path: Path) -> None:
    (tmp_path / "p.py").write_text(
        "from crux_devtools import context, prompt, ModelCapacityProfile\n"
        "huge = prompt('huge', system='You read.', use=[context('doc', system='lorem ipsum ' * 30000)], prompt='Hi',\n"
        "              model=ModelCapacityProfile(400000, 1000, 'exact'), examples={'one': {}})\n",
        encoding="utf-8",
    )
    async with ProjectSession(tmp_path, transport=in_process, watch=False, history=False, prewarm=False) as session:
        example = by_id(session.report)["huge"]["examples"][0]
    sent = example["preview"]["sent"]
    assert example["truncated"] is True
    assert "[truncated by crux-devtools:" in sent["system"] and len(sent["system"]) < 200_200
    assert example["preview"]["input_tokens"] > 60_000  # counted on the full text
