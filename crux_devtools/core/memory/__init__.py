"""Memory: remembered entries in SQLite, budgeted context assembly, and ``memory(...)`` for ``use``."""

from __future__ import annotations

from .blocks import Facts, RecentMessages, facts, recent_messages
from .context import Memory, memory
from .results import ContextAssembly, Evidence, SectionSummary
from .sections import ENTRY_TYPE_SECTIONS, SECTION_ORDER
from .store import MemoryStore, MemoryStoreError

__all__ = [
    "ENTRY_TYPE_SECTIONS",
    "SECTION_ORDER",
    "ContextAssembly",
    "Evidence",
    "Facts",
    "Memory",
    "MemoryStore",
    "MemoryStoreError",
    "RecentMessages",
    "SectionSummary",
    "facts",
    "memory",
    "recent_messages",
]
