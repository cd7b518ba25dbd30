"""The session's workers: which one holds the project, which hold stale prompts, and which retire.

Every live worker of a session is exactly one of: the held worker (``held``: it imported every
healthy module and answers jobs for their prompts), the owner of one or more stale prompts
(``owners``: the worker that holds a broken module's last good version, the held one or an older one
kept alive for it), the pool's spare (``pool.py``'s), or retiring (``retiring``: closed once the job
in flight is answered). The rules:

- after each load the load's worker is held; a stale prompt stays with the worker that answered it
  before, else goes to the worker held until then (``stale_owners``);
- every worker that was held or owned a prompt before and is neither now retires (``replaced``),
  closed once its lock is free: a job in flight is answered first (``retire``);
- a worker that failed a job (it crashed or hung: ``WorkerError``) is forgotten and closed at once
  (``drop``): the next job reloads the project;
- ``close`` (the session stops) closes every one of them.

``replaced`` and ``stale_owners`` are pure (any objects stand for the workers); ``Workers`` applies them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from ..report_types import PromptReport
from ..transport.process import WorkerProcess

W = TypeVar("W")


def replaced(before: Iterable[W | None], after: Iterable[W | None]) -> list[W]:
    """The workers of ``before`` that are not in ``after`` (by identity, each once, in order): to retire."""
    keep = {id(w) for w in after if w is not None}
    distinct = {id(w): w for w in before if w is not None}
    return [w for key, w in distinct.items() if key not in keep]


def stale_owners(stale: Sequence[str], owners: Mapping[str, W], held: W | None) -> dict[str, W]:
    """Who answers each stale prompt now: the worker that answered it before, else the worker held
    until now (which loaded the module's last good version); none when neither is known."""
    found: dict[str, W] = {}
    for prompt_id in stale:
        holder = owners.get(prompt_id, held)
        if holder is not None:
            found[prompt_id] = holder
    return found


def holding_stale(known: Mapping[str, Sequence[PromptReport]], broken: frozenset[str], owners: Mapping[str, W], held: W | None) -> frozenset[str]:
    """The broken modules whose last good version (shown stale) the held worker holds: an update
    that crashed it would lose it (``reload_rules.Held.holds_stale``)."""
    if held is None:
        return frozenset()
    return frozenset(name for name, ps in known.items() if name in broken and any(owners.get(p["id"]) is held for p in ps))


class Workers:
    """The held worker, the owners of stale prompts and the retiring workers of one session.

    ``spawn`` runs a coroutine in the background (the session's task set, awaited by ``settled``
    and cancelled by ``stop``).
    """

    def __init__(self, spawn: Callable[[Awaitable[Any]], None]) -> None:
        self._spawn = spawn
        self.held: WorkerProcess | None = None
        self.owners: dict[str, WorkerProcess] = {}
        self.retiring: set[WorkerProcess] = set()

    @property
    def alive(self) -> bool:
        """Whether a live worker holds the project (else the next change is a full load)."""
        return self.held is not None and self.held.alive

    def holder(self, prompt_id: str) -> WorkerProcess | None:
        """The worker that answers a job for this prompt: its stale version's owner, else the held worker."""
        return self.owners.get(prompt_id) or self.held

    def swap(self, worker: WorkerProcess | None, stale: Sequence[str]) -> None:
        """After a load: hold its worker and the owners of its stale prompts; retire every other worker."""
        owners = stale_owners(stale, self.owners, self.held)
        before = [self.held, *self.owners.values()]
        self.held, self.owners = worker, owners
        for old in replaced(before, [worker, *owners.values()]):
            self.retire(old)

    def retire(self, worker: WorkerProcess) -> None:
        """Close a worker once its current job (if any) is answered."""
        self.retiring.add(worker)

        async def close_when_idle() -> None:
            async with worker.lock:
                pass
            await worker.close()
            self.retiring.discard(worker)

        self._spawn(close_when_idle())

    async def drop(self, worker: WorkerProcess) -> None:
        """A worker that failed a job (crashed, hung): forget it and close it now."""
        if self.held is worker:
            self.held = None
        self.owners = {k: w for k, w in self.owners.items() if w is not worker}
        await worker.close()

    async def close(self) -> None:
        """Close every worker: held, owners, then those still retiring."""
        for worker in {id(w): w for w in [self.held, *self.owners.values()] if w is not None}.values():
            await worker.close()
        self.held = None
        self.owners = {}
        for worker in list(self.retiring):
            await worker.close()
        self.retiring.clear()
