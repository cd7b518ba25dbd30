"""Skills: Markdown instruction sets (``SKILL.md``) that a prompt offers to the model on demand.

In ``use`` a skill contributes only its name and description (cheap), plus the ``load_skill`` tool
that returns the full body when the model decides it needs it (progressive disclosure).

Design: every skill shares ONE ``load_skill(name)`` tool object. The resolver rejects two different
tools with the same name in one prompt, so a tool per skill could not coexist; one shared tool,
looking the name up in a process-wide registry of loaded skills, lets any number of skills sit in
one prompt. Loading a skill again (e.g. after its file changed) replaces the registered body.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from .contexts import Context, check_priority
from ..tools import Tool, tool

SKILL_FILE = "SKILL.md"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class LoadSkill(BaseModel):
    name: str = Field(description="The name of the skill to load, as listed under Skills")


class SkillRegistry:
    """Skills loaded in this process, by name: what the shared ``load_skill`` tool reads."""

    def __init__(self) -> None:
        self._skills: dict[str, Skill] = {}
        self._lock = threading.Lock()

    def add(self, skill: Skill) -> None:
        with self._lock:
            self._skills[skill.name] = skill

    def get(self, name: str) -> Skill | None:
        return self._skills.get(name)

    def names(self) -> list[str]:
        return sorted(self._skills)

    def load(self, args: LoadSkill) -> str:
        found = self.get(args.name)
        if found is None:
            known = ", ".join(self.names()) or "none"
            return f"error: no skill named {args.name!r}; available skills: {known}"
        return found.body


registry = SkillRegistry()

load_skill_tool: Tool = tool(
    "load_skill",
    description="Load the full instructions of a skill listed under Skills. Call it before acting on that skill.",
    parameters=LoadSkill,
    execute=registry.load,
)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Skill(Context):
    """A skill in ``use``: its name and description in the system text, its body behind ``load_skill``."""

    kind: ClassVar[str] = "skill"

    name: str = ""
    description: str = ""
    body: str = ""
    path: str | None = None

    def render(self, input: Any = None) -> str:
        return (
            f"## Skill: {self.name}\n{self.description}\n"
            f'Call load_skill(name="{self.name}") to read its full instructions before you act on it.'
        )


def parse_skill(text: str, source: str) -> tuple[dict[str, str], str]:
    """Split a SKILL.md into its front matter (simple ``key: value`` lines) and its body."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError(f"{source}: a SKILL.md must start with front matter between '---' lines (name, description)")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise ValueError(f"{source}: the front matter has no closing '---' line") from None
    meta: dict[str, str] = {}
    key: str | None = None
    for line in lines[1:end]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[:1].isspace() and key is not None:  # continuation of a folded value
            meta[key] = (meta[key] + " " + line.strip()).strip()
            continue
        if ":" not in line:
            raise ValueError(f"{source}: front matter line {line!r} is not 'key: value'")
        key, value = (part.strip() for part in line.split(":", 1))
        if value in (">", "|", ">-", "|-"):
            value = ""
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        meta[key] = value
    body = "\n".join(lines[end + 1 :]).strip()
    return meta, body


def make_skill(name: str, *, description: str, body: str, priority: int = 50, path: str | None = None) -> Skill:
    """Build and register a skill."""
    source = path or f"skill {name!r}"
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"{source}: skill name must be letters, digits, '-', '_' or '.', got {name!r}")
    if not isinstance(description, str) or not description.strip():
        raise ValueError(f"{source}: skill {name!r} needs a non-empty description")
    if not isinstance(body, str) or not body.strip():
        raise ValueError(f"{source}: skill {name!r} has an empty body; write its instructions below the front matter")
    check_priority(f"skill:{name}", priority)
    result = Skill(
        id=f"skill:{name}",
        priority=priority,
        tools=(load_skill_tool,),
        name=name,
        description=" ".join(description.split()),
        body=body.strip(),
        path=path,
    )
    object.__setattr__(result, "system", result.render)
    registry.add(result)
    return result


class SkillFactory:
    """``skill(name, description=..., body=...)``, ``skill.from_file(path)``, ``skill.from_folder(path)``."""

    registry: ClassVar[SkillRegistry] = registry
    load_skill: ClassVar[Tool] = load_skill_tool

    def __call__(self, name: str, *, description: str, body: str, priority: int = 50) -> Skill:
        return make_skill(name, description=description, body=body, priority=priority)

    def from_file(self, path: str | os.PathLike[str], *, priority: int = 50) -> Skill:
        """Load one SKILL.md (front matter ``name`` and ``description``, then the body)."""
        file = Path(path)
        if file.is_dir():
            file = file / SKILL_FILE
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise FileNotFoundError(f"cannot read skill file {str(file)!r}: {exc.strerror or exc}") from exc
        meta, body = parse_skill(text, str(file))
        missing = [k for k in ("name", "description") if not meta.get(k)]
        if missing:
            raise ValueError(f"{file}: front matter is missing {', '.join(missing)}")
        return make_skill(meta["name"], description=meta["description"], body=body, priority=priority, path=str(file))

    def from_folder(self, path: str | os.PathLike[str], *, priority: int = 50) -> list[Skill]:
        """Load every ``<name>/SKILL.md`` under a folder (sorted by path); use as ``use=[*skills]``."""
        folder = Path(path)
        if not folder.is_dir():
            raise NotADirectoryError(f"skills folder {str(folder)!r} does not exist or is not a folder")
        files = sorted(p for p in folder.rglob(SKILL_FILE) if p.is_file())
        skills = [self.from_file(p, priority=priority) for p in files]
        names: dict[str, str] = {}
        for s in skills:
            if s.name in names:
                raise ValueError(f"two skills are named {s.name!r}: {names[s.name]} and {s.path}; rename one")
            names[s.name] = s.path or ""
        return skills


skill = SkillFactory()
