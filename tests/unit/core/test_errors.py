"""One error module with a true tree: the drawing in ``core/errors.py`` is the real class hierarchy,
every error lives there (but the pydantic one), is exported, and survives pickling."""

from __future__ import annotations

import importlib
import pickle
import pkgutil
import re
from pathlib import Path

import pytest
from pydantic import BaseModel

import crux_devtools
import crux_devtools.core
from crux_devtools.core import errors
from crux_devtools.core.errors import (
    COMPOSITION_CODES,
    MODEL_ERROR_KINDS,
    CallbackError,
    CruxError,
    DamagedRunError,
    Diagnostic,
    ErrorInfo,
    MemoryStoreError,
    ModelError,
    OffloadError,
    RequestCompositionError,
    ReplayError,
    RunError,
    RunStoreError,
    SummaryError,
)
from crux_devtools.core.compose.validation import InputValidationError, validate_model

REPO = Path(__file__).resolve().parents[3]


def real_tree() -> dict[str, set[str]]:
    """Every ``CruxError`` subclass defined in the core, as parent name -> child names, after
    importing every core module (a class nobody imported yet would otherwise be missed)."""
    for info in pkgutil.walk_packages(crux_devtools.core.__path__, "crux_devtools.core."):
        importlib.import_module(info.name)
    tree: dict[str, set[str]] = {}

    def walk(cls: type) -> None:
        for sub in cls.__subclasses__():
            if sub.__module__.startswith("crux_devtools.core"):
                tree.setdefault(cls.__name__, set()).add(sub.__name__)
                walk(sub)

    walk(CruxError)
    return tree


def drawn_lines() -> list[tuple[int, str, str]]:
    """The docstring's tree as ``(depth, class name, annotation)``, one per drawn line."""
    doc = errors.__doc__ or ""
    block = doc.split("::\n\n", 1)[1].split("\n\n", 1)[0]
    out = []
    for line in block.splitlines():
        match = re.search(r"[A-Za-z_]\w*", line)
        assert match, f"a tree line without a class name: {line!r}"
        out.append(((match.start() - 4) // 4, match.group(), line[match.end() :].strip()))
    return out


def drawn_tree() -> dict[str, set[str]]:
    tree: dict[str, set[str]] = {}
    stack: list[str] = []
    for depth, name, _ in drawn_lines():
        del stack[depth:]
        if stack:
            tree.setdefault(stack[-1], set()).add(name)
        stack.append(name)
    return tree


def all_error_classes() -> list[type[CruxError]]:
    found: list[type[CruxError]] = []
    for children in real_tree().values():
        for name in children:
            cls = next(c for c in _subclasses(CruxError) if c.__name__ == name)
            found.append(cls)
    return found


def _subclasses(cls: type) -> list[type]:
    return [s for sub in cls.__subclasses__() for s in (sub, *_subclasses(sub))]


def test_the_tree_drawn_in_the_errors_docstring_is_the_real_class_hierarchy() -> None:
    lines = drawn_lines()
    assert lines[0][:2] == (0, "CruxError")
    names = [name for _, name, _ in lines]
    assert len(names) == len(set(names)), "each class is drawn once"
    assert drawn_tree() == real_tree()


def test_the_tree_names_every_model_error_kind_and_composition_code() -> None:
    notes = {name: note for _, name, note in drawn_lines()}
    assert notes["ModelError"] == "kind: " + " | ".join(MODEL_ERROR_KINDS)
    assert set(notes["RequestCompositionError"].removeprefix("code: ").split(" | ")) == set(COMPOSITION_CODES)


def test_every_error_is_defined_in_the_errors_module_except_the_pydantic_one() -> None:
    classes = all_error_classes()
    assert {c.__name__ for c in classes} >= {"ModelError", "SummaryError", "OffloadError", "MemoryStoreError", "RunStoreError", "InputValidationError"}
    for cls in classes:
        expected = "crux_devtools.core.compose.validation" if cls is InputValidationError else "crux_devtools.core.errors"
        assert cls.__module__ == expected, f"{cls.__name__} is defined in {cls.__module__}"


def test_the_old_import_paths_still_give_the_same_classes() -> None:
    from crux_devtools.core.memory import MemoryStoreError as from_memory
    from crux_devtools.core.memory.store import MemoryStoreError as from_store
    from crux_devtools.core.run.models import ModelError as from_models
    from crux_devtools.core.plan.offload_store import OffloadError as from_offload
    from crux_devtools.core.record.runstore import RunStoreError as from_runstore
    from crux_devtools.core.plan.summaries import SummaryError as from_summaries

    assert (from_memory, from_store, from_models, from_offload, from_runstore, from_summaries) == (
        MemoryStoreError, MemoryStoreError, ModelError, OffloadError, RunStoreError, SummaryError,
    )


def test_every_error_is_exported_from_the_package() -> None:
    for cls in [CruxError, *all_error_classes()]:
        assert cls.__name__ in crux_devtools.__all__, cls.__name__
        assert getattr(crux_devtools, cls.__name__) is cls


class Age(BaseModel):
    age: int


def invalid_input() -> InputValidationError:
    with pytest.raises(InputValidationError) as caught:
        validate_model(Age, {"age": "old"}, "prompt 'p'")
    return caught.value


EXAMPLES = [
    RequestCompositionError(
        "INVALID_COMPOSITION", "bad", diagnostics=[Diagnostic("d", "INVALID_COMPOSITION", "ctx", None, "bad")], request_id="r1"
    ),
    CallbackError("support", "system", "raised ValueError: no", function=len),
    ModelError("HTTP 503", kind="http", status=503, model="m"),
    SummaryError("summary model 'm' failed"),
    OffloadError("unknown handle"),
    MemoryStoreError("/tmp/memory.sqlite3", "database is locked"),
    RunStoreError("/tmp/runs.sqlite3", "file is not a database"),
    RunError(ErrorInfo("ModelError", "model 'm' failed: ModelError: connection refused")),
    ReplayError("run 'r1' has no step 4"),
    DamagedRunError("/tmp/runs.sqlite3", "run 'r1' is damaged: step 0's plan inputs refer to a stored text that is missing"),
]


def test_the_examples_cover_every_error_class() -> None:
    assert {type(e) for e in EXAMPLES} | {InputValidationError} == set(all_error_classes())


@pytest.mark.parametrize("error", EXAMPLES, ids=lambda e: type(e).__name__)
def test_every_error_pickles_with_its_message_and_attributes(error: CruxError) -> None:
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error) and str(back) == str(error) and back.args == error.args
    assert back.__dict__.keys() == error.__dict__.keys()
    for key, value in error.__dict__.items():
        assert getattr(back, key) == value, key


def test_an_input_validation_error_pickles_with_its_problems() -> None:
    error = invalid_input()
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is InputValidationError and str(back) == str(error) and back.problems == error.problems


def test_a_model_error_needs_a_kind_from_the_closed_set() -> None:
    with pytest.raises(TypeError, match="kind"):
        ModelError("no kind given")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="unknown model error kind 'boom'; expected one of transport, http, timeout, malformed, exhausted"):
        ModelError("x", kind="boom")  # type: ignore[arg-type]
    assert ModelError("x", kind="timeout").to_dict() == {"kind": "timeout", "message": "x", "status": None, "model": None}


def test_the_docs_table_of_model_error_kinds_is_the_closed_set() -> None:
    text = (REPO / "docs" / "models.md").read_text()
    table = text.split("### Errors", 1)[1].split("###", 1)[0]
    assert re.findall(r'^\| `"(\w+)"` \|', table, re.M) == list(MODEL_ERROR_KINDS)
