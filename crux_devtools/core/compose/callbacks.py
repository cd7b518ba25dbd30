"""Calling user callbacks that may be sync or ``async def``.

Resolution is written once, as a generator that yields ``Call`` requests; ``drive_sync`` and
``drive_async`` run it, so the sync and async forms share every rule.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeVar

from ..errors import CallbackError, CruxError

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Call:
    """A request, yielded by a resolution generator, to call ``fn(arg)`` on behalf of ``owner``."""

    owner: str
    callback: str
    fn: Callable[[Any], Any]
    arg: Any


Resolution = Generator[Call, Any, T]


def _wrap(call: Call, exc: BaseException) -> CallbackError:
    err = CallbackError(call.owner, call.callback, f"raised {type(exc).__name__}: {exc}")
    err.__cause__ = exc
    return err


def run_sync(awaitable: Awaitable[T]) -> T:
    """Run an awaitable from sync code; refuses inside a running event loop (use the ``a`` form)."""
    import asyncio  # here: a project without async callbacks does not pay asyncio's import (the worker's warm-up)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        if inspect.iscoroutine(awaitable):
            awaitable.close()
        raise RuntimeError(
            "an async callback cannot be run by the sync API inside a running event loop; "
            "use the async form (ainspect, aresolve, apreview, agenerate)"
        )

    async def _await() -> T:
        return await awaitable

    return asyncio.run(_await())


def _blame(exc: CallbackError, call: Call | None) -> None:
    """Name the function behind a callback error raised on the value it returned (wrong type)."""
    if exc.function is None and call is not None and (exc.owner, exc.callback) == (call.owner, call.callback):
        exc.function = call.fn


def drive_sync(gen: Resolution[T]) -> T:
    """Run a resolution generator, calling each callback synchronously."""
    value: Any = None
    error: BaseException | None = None
    call: Call | None = None
    while True:
        try:
            call = gen.throw(error) if error is not None else gen.send(value)
        except StopIteration as stop:
            return stop.value
        except CallbackError as exc:
            _blame(exc, call)
            raise
        value, error = None, None
        try:
            result = call.fn(call.arg)
            if inspect.isawaitable(result):
                result = run_sync(result)
            value = result
        except CruxError as exc:
            error = exc
        except Exception as exc:  # noqa: BLE001 - user code: re-raised with the owner's name
            error = _wrap(call, exc)


async def drive_async(gen: Resolution[T]) -> T:
    """Run a resolution generator, awaiting callbacks that return awaitables."""
    value: Any = None
    error: BaseException | None = None
    call: Call | None = None
    while True:
        try:
            call = gen.throw(error) if error is not None else gen.send(value)
        except StopIteration as stop:
            return stop.value
        except CallbackError as exc:
            _blame(exc, call)
            raise
        value, error = None, None
        try:
            result = call.fn(call.arg)
            if inspect.isawaitable(result):
                result = await result
            value = result
        except CruxError as exc:
            error = exc
        except Exception as exc:  # noqa: BLE001 - user code: re-raised with the owner's name
            error = _wrap(call, exc)


def expect_text(call_owner: str, callback: str, value: Any) -> str:
    """Check that a text callback returned a string (the drivers then name the callback: ``_blame``)."""
    if not isinstance(value, str):
        raise CallbackError(
            call_owner,
            callback,
            f"returned {type(value).__name__}, expected str; return a string (\"\" for no text)",
        )
    return value
