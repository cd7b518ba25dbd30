"""Discovery: which modules of a project hold prompts and agents.

Runs in the server process and never imports user code: it reads ``pyproject.toml`` and scans file
text. ``[tool.crux-devtools] modules = [...]`` (module names or relative ``.py`` paths) wins;
otherwise every ``.py`` file under the project whose text imports ``crux_devtools`` is a module.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import LoadError
from ..report_types import LoadErrorDict

# Folders never scanned or watched: tool state, virtual environments, caches, tests, dependencies.
SKIPPED_DIRS = frozenset(
    {"__pycache__", "tests", "node_modules", "venv", "env", "site-packages", "build", "dist"}
)
_IMPORTS_CRUX = re.compile(r"^\s*(from|import)\s+crux_devtools\b", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class ModuleRef:
    """One module to import in the worker: a file path and the module name to import it under.

    ``package`` is True when the name is importable the normal way (``importlib.import_module``)
    because the file sits in a package reachable from the project root. ``line`` is the line of
    ``pyproject.toml`` that lists a configured module (where a wrong name is reported).
    """

    name: str
    path: str
    package: bool = False
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "path": self.path, "package": self.package, "line": self.line}


@dataclass(frozen=True, slots=True)
class Discovery:
    """What discovery found: modules in order, how (``"config"`` or ``"scan"``), and config errors."""

    root: str
    source: str
    modules: list[ModuleRef] = field(default_factory=list)
    errors: list[LoadErrorDict] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "source": self.source,
            "modules": [m.to_dict() for m in self.modules],
            "errors": list(self.errors),
        }


def is_skipped_dir(path: Path) -> bool:
    """A folder the scan and the watcher ignore (hidden, venv, cache, tests, node_modules)."""
    name = path.name
    if name.startswith(".") or name in SKIPPED_DIRS or name.endswith(".egg-info"):
        return True
    return (path / "pyvenv.cfg").exists()


def discover(root: str | os.PathLike[str]) -> Discovery:
    """Find the project's modules without importing any of them."""
    base = Path(root).resolve()
    if not base.is_dir():
        raise NotADirectoryError(f"project folder {str(base)!r} does not exist or is not a folder")
    configured, errors = read_configured_modules(base)
    if configured is not None:
        modules: list[ModuleRef] = []
        for entry in configured:
            ref, error = _configured_ref(base, entry)
            if ref is not None:
                modules.append(ref)
            if error is not None:
                errors.append(error)
        return Discovery(str(base), "config", modules, errors)
    return Discovery(str(base), "scan", scan(base), errors)


MAX_NAMED = 8  # files named in ``imported_note``; the others are counted


def imported_note(found: Discovery) -> str | None:
    """Which files the inspector imports (it runs them on every save) and why, in one sentence for
    the web list, the TUI and ``inspect``; ``None`` when discovery found none."""
    if not found.modules:
        return None
    names = [os.path.relpath(m.path, found.root) if m.path else m.name for m in found.modules]
    shown = ", ".join(names[:MAX_NAMED]) + (f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else "")
    if found.source == "config":
        return f"imported: {shown} (the modules = [...] of [tool.crux-devtools] in pyproject.toml)"
    return (
        f"imported: {shown} (every .py file that imports crux_devtools; set modules = [...] in "
        "[tool.crux-devtools] of pyproject.toml to narrow it)"
    )


def read_configured_modules(base: Path) -> tuple[list[str] | None, list[LoadErrorDict]]:
    """``[tool.crux-devtools] modules`` of ``pyproject.toml``, or None when not configured."""
    pyproject = base / "pyproject.toml"
    if not pyproject.is_file():
        return None, []
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        line = _toml_error_line(exc)
        return None, [config_error(line, type(exc).__name__, f"pyproject.toml cannot be read: {exc}")]
    section = data.get("tool", {}).get("crux-devtools", {})
    modules = section.get("modules") if isinstance(section, dict) else None
    if modules is None:
        return None, []
    if not isinstance(modules, list) or not all(isinstance(m, str) and m.strip() for m in modules):
        message = f"[tool.crux-devtools] modules must be a list of module names or .py paths, got {modules!r}"
        return [], [config_error(_find_line(pyproject, "modules"), "ConfigError", message)]
    return [m.strip() for m in modules], []


def config_error(line: int | None, kind: str, message: str) -> LoadErrorDict:
    return LoadError.plain(kind, message, file="pyproject.toml", line=line).to_dict()


def _toml_error_line(exc: Exception) -> int | None:
    found = re.search(r"line (\d+)", str(exc))
    return int(found.group(1)) if found else None


def _find_line(path: Path, needle: str) -> int | None:
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if text.strip().startswith(needle):
            return number
    return None


def _configured_ref(base: Path, entry: str) -> tuple[ModuleRef | None, LoadErrorDict | None]:
    if entry.endswith(".py") or "/" in entry or os.sep in entry:
        path = (base / entry).resolve()
        if not path.is_file():
            message = f"module file {entry!r} listed in [tool.crux-devtools] modules does not exist under {base}"
            return None, config_error(_find_line(base / "pyproject.toml", "modules"), "ModuleNotFoundError", message)
        return file_ref(base, path), None
    parts = entry.split(".")
    candidates = [base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts, "__init__.py")]
    for path in candidates:
        if path.is_file():
            return ModuleRef(entry, str(path), package=True), None
    # Not a file in the project: perhaps an installed module; the worker imports it by name.
    return ModuleRef(entry, "", package=True, line=_entry_line(base / "pyproject.toml", entry)), None


def _entry_line(pyproject: Path, entry: str) -> int | None:
    """The line of ``pyproject.toml`` listing ``entry`` in ``modules = [...]`` (else the ``modules`` line)."""
    start = _find_line(pyproject, "modules")
    if start is None:
        return None
    lines = pyproject.read_text(encoding="utf-8").splitlines()
    for number in range(start, len(lines) + 1):
        text = lines[number - 1]
        if f'"{entry}"' in text or f"'{entry}'" in text:
            return number
        if "]" in text:
            break
    return start


def file_ref(base: Path, path: Path) -> ModuleRef:
    """The module name for a project file: dotted when its folders are packages, else synthetic."""
    relative = path.relative_to(base) if path.is_relative_to(base) else Path(path.name)
    parts = list(relative.with_suffix("").parts)
    packaged = all((base.joinpath(*parts[:i]) / "__init__.py").is_file() for i in range(1, len(parts)))
    valid = all(p.isidentifier() for p in parts)
    if packaged and valid and len(parts) > 1:
        return ModuleRef(".".join(parts), str(path), package=True)
    if valid and len(parts) == 1:
        return ModuleRef(parts[0], str(path), package=False)
    # File names may start with digits (01_contexts.py): import by path under a private name.
    safe = "_".join(re.sub(r"\W", "_", p) for p in parts)
    return ModuleRef(f"crux_project.{safe}", str(path), package=False)


def scan(base: Path) -> list[ModuleRef]:
    """Every ``.py`` file under ``base`` that imports crux_devtools, sorted by relative path."""
    found: list[ModuleRef] = []
    for folder, dirs, files in os.walk(base):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if not is_skipped_dir(here / d))
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = here / name
            if _imports_crux(path):
                found.append(file_ref(base, path))
    return found


# path -> (mtime_ns, size, whether it imports crux_devtools): a file unchanged since is not read again.
_scanned: dict[str, tuple[int, int, bool]] = {}


def _imports_crux(path: Path) -> bool:
    try:
        info = path.stat()
        known = _scanned.get(str(path))
        if known is not None and known[:2] == (info.st_mtime_ns, info.st_size):
            return known[2]
        # utf-8-sig: a file saved with a byte-order mark still starts with its import.
        text = path.read_text(encoding="utf-8-sig", errors="replace")
    except OSError:
        return False
    found = bool(_IMPORTS_CRUX.search(text))
    _scanned[str(path)] = (info.st_mtime_ns, info.st_size, found)
    return found


# --- model profiles: what prompts are planned against -------------------------------------------

COUNTING_CONFIDENCES = ("exact", "estimated", "conservative")  # the planner's (core/plan/budget.py), without importing it
# Prices in USD per million tokens (read by core/record/pricing.py, which the server does not import).
PRICE_KEYS = ("input_price", "output_price", "cache_read_price", "cache_write_price", "cache_write_1h_price")
# Prompt-cache placement (core/plan/cache_plan.py): cache = "auto", the provider's minimum prefix,
# the lifetime asked for, and whether the provider takes explicit breakpoints.
# cache_breakpoint_field: the explicit breakpoint field the model takes in a chat-completions body.
CACHE_KEYS = ("cache", "cache_min_tokens", "cache_ttl", "cache_breakpoints", "cache_breakpoint_field")
# The planner's own tables (core/plan/cache_plan.py), kept equal by tests/unit/inspector/test_cache_profile.py:
# the server reads profiles without importing the core.
BREAKPOINT_FIELDS = ("prompt_cache_breakpoint",)
CACHE_TTLS = ("5m", "1h")
_PROFILE_KEYS = ("context_window", "default_output_reserve", "counting_confidence", *PRICE_KEYS, *CACHE_KEYS)
# Every key of [tool.crux-devtools]; any other is a load error (a typo must not be silently ignored).
TOOL_KEYS = ("modules", "default_model", "models", "watch_ignore", "allow_network", "history_keep", "history_max_mb", "redact")


def unknown_keys(where: str, unknown: list[str], allowed: tuple[str, ...]) -> str:
    """``where has unknown key(s) ...`` with the nearest allowed key of each, and the allowed ones."""
    named = []
    for key in unknown:
        near = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        named.append(f"{key} (did you mean {near[0]}?)" if near else key)
    return f"{where} has unknown key(s) {', '.join(named)}; allowed: {', '.join(allowed)}"


def read_tool_keys(root: str | os.PathLike[str]) -> list[LoadErrorDict]:
    """One load error per key of ``[tool.crux-devtools]`` that the inspector does not know, at its line."""
    section = tool_section(root)
    if section is None:
        return []
    lines = _TomlLines(Path(root) / "pyproject.toml")
    return [
        config_error(lines.find("tool.crux-devtools", key), "ConfigError", unknown_keys("[tool.crux-devtools]", [key], TOOL_KEYS))
        for key in section if key not in TOOL_KEYS
    ]


def tool_section(root: str | os.PathLike[str]) -> dict[str, Any] | None:
    """``[tool.crux-devtools]`` of ``pyproject.toml``, or None when there is no such table or no
    readable file (``read_configured_modules`` reports an unreadable one; the other readers stay quiet)."""
    path = Path(root) / "pyproject.toml"
    if not path.is_file():
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError):
        return None
    section = data.get("tool", {}).get("crux-devtools")
    return section if isinstance(section, dict) else None


def read_model_config(root: str | os.PathLike[str]) -> tuple[dict[str, Any], list[LoadErrorDict]]:
    """``default_model`` and the ``[tool.crux-devtools.models.NAME]`` capacity profiles of
    ``pyproject.toml``, checked here (the server never imports the core), as plain data for the worker::

        {"default_model": str | None, "default_model_line": int | None,
         "models": {name: {"context_window", "default_output_reserve", "counting_confidence", "line",
                           and any of "input_price", "output_price", "cache_read_price", "cache_write_price",
                           "cache_write_1h_price", "cache", "cache_min_tokens", "cache_ttl", "cache_breakpoints",
                           "cache_breakpoint_field"}}}

    Each bad value is a load error at ``pyproject.toml:LINE`` and is left out; an unreadable file is
    reported by ``read_configured_modules`` already, so it gives no second error here.
    """
    config: dict[str, Any] = {"default_model": None, "default_model_line": None, "models": {}}
    section = tool_section(root)
    if section is None:
        return config, []
    errors: list[LoadErrorDict] = []
    lines = _TomlLines(Path(root) / "pyproject.toml")
    default = section.get("default_model")
    if default is not None:
        line = lines.find("tool.crux-devtools", "default_model")
        if isinstance(default, str) and default.strip():
            config["default_model"], config["default_model_line"] = default.strip(), line
        else:
            errors.append(config_error(line, "ConfigError", f'[tool.crux-devtools] default_model must be a model name such as "gpt-4o", got {default!r}'))
    models = section.get("models", {})
    if not isinstance(models, dict):
        message = "[tool.crux-devtools] models must be a table of model profiles: [tool.crux-devtools.models.NAME] with context_window = N"
        return config, errors + [config_error(lines.find("tool.crux-devtools", "models"), "ConfigError", message)]
    for name, table in models.items():
        profile, error = _model_profile(name, table, lines)
        if profile is not None:
            config["models"][name] = profile
        if error is not None:
            errors.append(error)
    default = config["default_model"]
    if default is not None and default not in models:  # a profile with a fault is reported at its own line
        known = ", ".join(sorted(models)) or "none"
        message = (
            f"[tool.crux-devtools] default_model = {default!r} names no model profile (known profiles: {known}), so every "
            f"prompt without its own model would be planned against the conservative 8k default; add "
            f"[tool.crux-devtools.models.{_toml_key(default)}] with context_window = N, or name a known profile"
        )
        errors.append(config_error(config["default_model_line"], "ConfigError", message))
    return config, errors


def read_watch_ignore(root: str | os.PathLike[str]) -> tuple[list[str], list[LoadErrorDict]]:
    """``[tool.crux-devtools] watch_ignore``: glob patterns of project files whose changes never reload
    (matched against the path relative to the project, with ``/``, and against the file name; a
    pattern ending in ``/`` names a folder). A bad value is a load error at ``pyproject.toml:LINE``."""
    section = tool_section(root)
    value = section.get("watch_ignore") if section is not None else None
    if value is None:
        return [], []
    if not isinstance(value, list) or not all(isinstance(p, str) and p.strip() for p in value):
        message = (
            f'[tool.crux-devtools] watch_ignore must be a list of glob patterns such as ["data/*.csv", "scratch/"], '
            f"got {value!r}"
        )
        line = _TomlLines(Path(root) / "pyproject.toml").find("tool.crux-devtools", "watch_ignore")
        return [], [config_error(line, "ConfigError", message)]
    return [p.strip() for p in value], []


def read_project(root: Path) -> tuple[Discovery, dict[str, Any], list[LoadErrorDict], list[str]]:
    """What a load reads of the project before any worker: discovery, the model profiles, the
    settings' errors (unknown keys, bad profiles, bad patterns) and ``watch_ignore``."""
    discovery = discover(root)
    models, model_errors = read_model_config(root)
    ignore, ignore_errors = read_watch_ignore(root)
    return discovery, models, read_tool_keys(root) + model_errors + ignore_errors, ignore


def read_allow_network(root: str | os.PathLike[str]) -> tuple[bool, list[LoadErrorDict]]:
    """``[tool.crux-devtools] allow_network``: whether user code may open network connections while
    the inspector imports and evaluates it (``netguard.py``; default false). A value that is not
    true or false is a load error at ``pyproject.toml:LINE`` (and the network stays refused)."""
    section = tool_section(root)
    value = section.get("allow_network") if section is not None else None
    if value is None or isinstance(value, bool):
        return bool(value), []
    line = _TomlLines(Path(root) / "pyproject.toml").find("tool.crux-devtools", "allow_network")
    return False, [config_error(line, "ConfigError", f"[tool.crux-devtools] allow_network must be true or false, got {value!r}")]


def is_ignored(relative: str, patterns: list[str]) -> bool:
    """Whether a project file (path relative to the root) matches a ``watch_ignore`` pattern."""
    posix = relative.replace(os.sep, "/")
    name = posix.rsplit("/", 1)[-1]
    for pattern in patterns:
        if pattern.endswith("/"):
            folder = pattern.rstrip("/")
            if posix.startswith(folder + "/") or fnmatch.fnmatchcase(posix, folder + "/*"):
                return True
        elif fnmatch.fnmatchcase(posix, pattern) or fnmatch.fnmatchcase(name, pattern):
            return True
    return False


def _model_profile(name: str, table: Any, lines: _TomlLines) -> tuple[dict[str, Any] | None, LoadErrorDict | None]:
    header = f"tool.crux-devtools.models.{_toml_key(name)}"
    where = f"[{header}]"
    if not isinstance(table, dict):
        return None, config_error(lines.find("tool.crux-devtools.models", name) or lines.header(header), "ConfigError", f"{where} must be a table with context_window = N, got {table!r}")
    unknown = sorted(set(table) - set(_PROFILE_KEYS))
    if unknown:
        message = unknown_keys(where, unknown, _PROFILE_KEYS)
        return None, config_error(lines.find(header, unknown[0]), "ConfigError", message)
    for key, low in (("context_window", 1), ("default_output_reserve", 0)):
        value = table.get(key)
        if value is None and key == "context_window":
            return None, config_error(lines.header(header), "ConfigError", f"{where} needs context_window = N (the model's context window in tokens)")
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not low <= value <= 2**53 - 1):
            kind = "a positive" if low else "a non-negative"
            return None, config_error(lines.find(header, key), "ConfigError", f"{where} {key} must be {kind} whole number of tokens, got {value!r}")
    confidence = table.get("counting_confidence", "estimated")
    if confidence not in COUNTING_CONFIDENCES:
        message = f"{where} counting_confidence must be one of {', '.join(COUNTING_CONFIDENCES)}, got {confidence!r}"
        return None, config_error(lines.find(header, "counting_confidence"), "ConfigError", message)
    window = table["context_window"]
    reserve = table.get("default_output_reserve", min(4096, window // 4))
    if reserve >= window:
        message = f"{where} default_output_reserve ({reserve}) must be below context_window ({window}): no room is left for the input"
        return None, config_error(lines.find(header, "default_output_reserve"), "ConfigError", message)
    prices: dict[str, float] = {}
    for key in PRICE_KEYS:
        if key in table:
            problem = price_error(key, table[key])
            if problem is not None:
                return None, config_error(lines.find(header, key), "ConfigError", f"{where} {problem}")
            prices[key] = float(table[key])
    if bool(prices.get("input_price") is None) != bool(prices.get("output_price") is None):
        missing = "output_price" if "input_price" in prices else "input_price"
        message = f"{where} prices a model with both input_price and output_price (USD per million tokens); {missing} is missing"
        return None, config_error(lines.header(header), "ConfigError", message)
    cache, bad_cache = _cache_keys(table)
    if bad_cache is not None:
        return None, config_error(lines.find(header, bad_cache[0]), "ConfigError", f"{where} {bad_cache[1]}")
    profile = {"context_window": window, "default_output_reserve": reserve, "counting_confidence": confidence, "line": lines.header(header)}
    return {**profile, **prices, **cache}, None


def _cache_keys(table: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, str] | None]:
    """The cache keys of a profile, checked: (the keys, or the first bad key and why)."""
    out = {key: table[key] for key in CACHE_KEYS if key in table}
    if "cache" in out and out["cache"] not in ("auto", "off"):
        return {}, ("cache", f'cache must be "auto" (place prompt-cache breakpoints) or "off", got {out["cache"]!r}')
    minimum = out.get("cache_min_tokens")
    if minimum is not None and (isinstance(minimum, bool) or not isinstance(minimum, int) or minimum < 1):
        return {}, ("cache_min_tokens", f"cache_min_tokens must be a positive whole number of tokens (the provider's minimum cacheable prefix, e.g. 1024), got {minimum!r}")
    if "cache_ttl" in out and out["cache_ttl"] not in CACHE_TTLS:
        return {}, ("cache_ttl", f'cache_ttl must be "5m" or "1h", got {out["cache_ttl"]!r}')
    if "cache_breakpoints" in out and not isinstance(out["cache_breakpoints"], bool):
        return {}, ("cache_breakpoints", f"cache_breakpoints must be true or false (whether the provider takes explicit breakpoints), got {out['cache_breakpoints']!r}")
    if "cache_breakpoint_field" in out and out["cache_breakpoint_field"] not in BREAKPOINT_FIELDS:
        return {}, ("cache_breakpoint_field", f"cache_breakpoint_field must be {' or '.join(repr(f) for f in BREAKPOINT_FIELDS)} "
                    f"(the explicit breakpoint field the model takes; leave it out when it takes none), got {out['cache_breakpoint_field']!r}")
    return out, None


def price_error(key: str, value: Any) -> str | None:
    """Why ``value`` is not a valid ``key`` price (a non-negative number of USD per million tokens)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
        return f"{key} must be a non-negative number of US dollars per million tokens, such as 2.5, got {value!r}"
    return None


def _toml_key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


class _TomlLines:
    """Line numbers of tables and keys in a TOML file, for error messages (a light scan, not a parser)."""

    def __init__(self, path: Path) -> None:
        self.lines = path.read_text(encoding="utf-8").splitlines()

    def header(self, table: str) -> int | None:
        wanted = table.replace(" ", "")
        for number, text in enumerate(self.lines, start=1):
            if text.strip().replace(" ", "") == f"[{wanted}]":
                return number
        return None

    def find(self, table: str, key: str) -> int | None:
        """The line of ``key = ...`` inside ``[table]``; else the table's header line."""
        start = self.header(table)
        if start is None:
            return None
        for number in range(start + 1, len(self.lines) + 1):
            text = self.lines[number - 1].strip()
            if text.startswith("["):
                break
            if re.match(rf'"?{re.escape(key)}"?\s*=', text):
                return number
        return start
