"""A generated project for the scale benchmarks: N modules of prompts over shared and local contexts.

Each module ``mod_NNN.py`` defines 8 contexts (two with a ``when``), and 4 prompts that each use 6
of its own contexts plus 2 from ``common.py`` (so a change to ``common.py`` concerns every prompt),
each prompt with 2 examples. A module logs one line to ``imports.log`` when it is imported, so a
benchmark or test can count which modules' import-time code ran.

    from scale_project import make_project, touch_module
    root = make_project(tmp / "p", modules=100)
    touch_module(root, 7)            # an edit that changes one prompt's system text in mod_007.py

Used by ``bench_scale.py``; runnable alone to leave a project on disk:
``.venv/bin/python benchmarks/scale_project.py DIR --modules 100``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

PYPROJECT = """\
[project]
name = "scale-project"
version = "0"

[tool.crux-devtools]
"""

COMMON = '''\
"""Contexts every generated module uses."""

from crux_devtools import context

tone = context("tone", priority=90, system="## Tone\\nBe brief, concrete and kind. Never guess numbers.")
policy = context(
    "policy",
    priority=80,
    system="## Policy\\n" + "\\n".join(f"- Rule {i}: follow the documented procedure {i}." for i in range(12)),
)
'''

MODULE = '''\
"""Generated module {n}: 8 contexts, 4 prompts."""

from __future__ import annotations

from pathlib import Path

from common import policy, tone
from pydantic import BaseModel, Field

from crux_devtools import context, prompt

with open(Path(__file__).with_name("imports.log"), "a", encoding="utf-8") as _log:
    _log.write("mod_{n:03d}\\n")


class Ask{n}(BaseModel):
    question: str = Field(description="What the user asks")
    region: str | None = Field(default=None, description="Region, when known")


facts_{n} = [
    context(
        f"m{n}-fact-{{i}}",
        priority=10 * i,
        system=f"## Fact {{i}} of module {n}\\n" + " ".join(f"Detail {{j}} about topic {{i}}." for j in range(20)),
    )
    for i in range(6)
]
regional_{n} = context(
    "m{n}-regional",
    when=lambda i: i.region is not None,
    system=lambda i: f"## Region\\nThe user is in {{i.region}}.",
)
escalation_{n} = context(
    "m{n}-escalation",
    when=lambda i: "refund" in i.question.lower(),
    system="## Escalation\\nRefund questions go to a specialist.",
)

{prompts}
'''

PROMPT = '''\
p{n}_{k} = prompt(
    "m{n:03d}-prompt-{k}",
    system="You are assistant {k} of module {n}. {edit}",
    input=Ask{n},
    use=[tone, policy, *facts_{n}[{k}:{k} + 4], regional_{n}, escalation_{n}],
    prompt=lambda i: i.question,
    examples={{
        "plain": {{"question": "How do I reset my password?"}},
        "regional-refund": {{"question": "Can I get a refund?", "region": "EU"}},
    }},
)
'''


def module_source(n: int, edit: str = "") -> str:
    prompts = "\n".join(PROMPT.format(n=n, k=k, edit=edit) for k in range(4))
    return MODULE.format(n=n, prompts=prompts)


def make_project(root: Path, modules: int) -> Path:
    """Write a project of ``modules`` generated modules under ``root`` and return ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (root / "common.py").write_text(COMMON, encoding="utf-8")
    for n in range(modules):
        (root / f"mod_{n:03d}.py").write_text(module_source(n), encoding="utf-8")
    return root


def touch_module(root: Path, n: int, edit: str = "Edited.") -> Path:
    """Rewrite ``mod_NNN.py`` with ``edit`` appended to its prompts' system text; returns the file."""
    path = root / f"mod_{n:03d}.py"
    path.write_text(module_source(n, edit), encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--modules", type=int, default=10)
    args = parser.parse_args()
    make_project(args.dir, args.modules)
    print(f"wrote {args.modules} modules ({args.modules * 4} prompts) to {args.dir}")


if __name__ == "__main__":
    main()
