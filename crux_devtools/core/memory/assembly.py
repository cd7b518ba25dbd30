"""``get_context``: retrieve, rank, group and trim memory into one budgeted block.

Every entry of the session that matches the query is a candidate (no top-k cap). Candidates sort by
section (the fixed order in ``sections.py``), then by descending bm25 score, then newest first. With a
budget, items are taken in that order until the next one does not fit; the rest is dropped and
counted, so a lower section never displaces a higher one. Only the taken items' text is read back
from the database: token costs of every entry were stored when it was remembered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .query import fts_query
from .results import ContextAssembly, SectionSummary
from .sections import SECTION_ORDER, SECTION_RANK, SECTION_TITLES, check_entry_types, check_sections, section_for

if TYPE_CHECKING:
    from .store import MemoryStore

MODES = ("full", "summary", "sections")
RECENCY_FALLBACK_LIMIT = 20
PREVIEW_CHARS = 80


@dataclass(slots=True)
class Candidate:
    rowid: int
    section: str
    score: float
    tokens: int


def check_budget(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError(f"max_token_budget must be an int >= 0 (0 means no limit), got {value!r}")
    return value


def scope(
    mode: str, sections: Sequence[str] | None, entry_types: Sequence[str] | None, include_working_memory: bool
) -> tuple[str, ...]:
    """The sections a call may assemble, in the fixed order."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; valid modes: {', '.join(MODES)}")
    keys = check_sections(sections)
    types = check_entry_types(entry_types)
    if mode == "sections" and not keys:
        raise ValueError("mode='sections' needs sections=[...] naming at least one of: " + ", ".join(SECTION_ORDER))
    allowed = set(SECTION_ORDER) if types is None else {section_for(t) for t in types}
    # Working memory (the current state) rides along with any entry_types filter unless switched off.
    if include_working_memory:
        allowed.add("working_memory")
    else:
        allowed.discard("working_memory")
    if keys is not None:
        allowed &= set(keys)
    return tuple(s for s in SECTION_ORDER if s in allowed)


def _filters(session_id: str, lane: str | None, allowed: tuple[str, ...], alias: str = "") -> tuple[str, list[Any]]:
    sql = f" AND {alias}session_id = ?"
    params: list[Any] = [session_id]
    if lane is not None:
        sql += f" AND {alias}lane = ?"
        params.append(lane)
    if len(allowed) < len(SECTION_ORDER):
        sql += f" AND {alias}section IN ({', '.join('?' * len(allowed))})"
        params.extend(allowed)
    return sql, params


def assemble(
    store: MemoryStore,
    session_id: str,
    query: str | None,
    *,
    max_token_budget: int = 0,
    mode: str = "full",
    sections: Sequence[str] | None = None,
    entry_types: Sequence[str] | None = None,
    include_working_memory: bool = True,
    lane: str | None = None,
) -> ContextAssembly:
    budget = check_budget(max_token_budget)
    allowed = scope(mode, sections, entry_types, include_working_memory)
    if query is not None and not isinstance(query, str):
        raise TypeError(f"query must be a string or None, got {type(query).__name__}")
    if not allowed:
        return _empty("no_evidence", budget)
    match = fts_query(query)
    fallback = False
    with store._reading("get_context") as conn:
        found: dict[int, Candidate] = {}
        if match is not None:
            where, params = _filters(session_id, lane, allowed, "e.")
            for rowid, section, score, tokens in conn.execute(
                "SELECT e.id, e.section, -bm25(entries_fts), e.tokens FROM entries_fts JOIN entries e ON e.id = entries_fts.rowid"
                " WHERE entries_fts MATCH ?" + where,
                [match, *params],
            ):
                found[rowid] = Candidate(rowid, section, score, tokens)
        if not found:
            fallback = True
            where, params = _filters(session_id, lane, allowed)
            for rowid, section, tokens in conn.execute(
                "SELECT id, section, tokens FROM entries WHERE 1" + where + " ORDER BY id DESC LIMIT ?",
                [*params, RECENCY_FALLBACK_LIMIT],
            ):
                found[rowid] = Candidate(rowid, section, 0.0, tokens)
        if include_working_memory and "working_memory" in allowed and not fallback:
            where, params = _filters(session_id, lane, ("working_memory",))
            for rowid, section, tokens in conn.execute("SELECT id, section, tokens FROM entries WHERE 1" + where, params):
                found.setdefault(rowid, Candidate(rowid, section, 0.0, tokens))
        if not found:
            return _empty("no_evidence", budget)
        ranked = sorted(found.values(), key=lambda c: (SECTION_RANK[c.section], -c.score, -c.rowid))
        taken = [] if mode == "summary" else _fill(store, ranked, budget)
        tops = _section_tops(ranked)
        wanted = {c.rowid for c in taken} | {c.rowid for c in tops.values()}
        text = _contents(conn, wanted)
    return _finish(store, ranked, taken, tops, text, budget, mode, fallback)


def _header(store: MemoryStore, section: str, first: bool) -> int:
    return store.counter.count(("" if first else "\n") + f"## {SECTION_TITLES[section]}\n")


def _fill(store: MemoryStore, ranked: list[Candidate], budget: int) -> list[Candidate]:
    """Take candidates in order until the next does not fit (estimated from stored per-line costs)."""
    taken: list[Candidate] = []
    used = 0
    current = None
    for cand in ranked:
        cost = cand.tokens
        if cand.section != current:
            cost += _header(store, cand.section, current is None)
        if budget and used + cost > budget:
            break
        taken.append(cand)
        used += cost
        current = cand.section
    return taken


def _section_tops(ranked: list[Candidate]) -> dict[str, Candidate]:
    tops: dict[str, Candidate] = {}
    for cand in ranked:
        tops.setdefault(cand.section, cand)
    return tops


def _contents(conn: Any, rowids: set[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    ids = list(rowids)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        sql = f"SELECT id, content FROM entries WHERE id IN ({', '.join('?' * len(chunk))})"
        out.update(conn.execute(sql, chunk).fetchall())
    return out


def render(taken: list[Candidate], text: dict[int, str]) -> str:
    """The block: one ``## Title`` per section, one bullet per item, sections separated by a blank line."""
    from .store import render_line

    blocks: list[str] = []
    current = None
    lines: list[str] = []
    for cand in taken:
        if cand.section != current:
            if lines:
                blocks.append("\n".join(lines))
            lines = [f"## {SECTION_TITLES[cand.section]}"]
            current = cand.section
        lines.append(render_line(text[cand.rowid]))
    if lines:
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def preview(content: str) -> str:
    flat = " ".join(content.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[:PREVIEW_CHARS] + "…"


def _finish(
    store: MemoryStore,
    ranked: list[Candidate],
    taken: list[Candidate],
    tops: dict[str, Candidate],
    text: dict[int, str],
    budget: int,
    mode: str,
    fallback: bool,
) -> ContextAssembly:
    block = render(taken, text)
    tokens = store.counter.count(block) if block else 0
    # Stored per-line costs are an estimate of the joined text; trim until the exact count fits.
    while budget and tokens > budget and taken:
        taken = taken[:-1]
        block = render(taken, text)
        tokens = store.counter.count(block) if block else 0
    summaries: list[SectionSummary] = []
    counts: dict[str, list[int]] = {}
    for cand in ranked:
        entry = counts.setdefault(cand.section, [0, _header(store, cand.section, not counts)])
        entry[0] += 1
        entry[1] += cand.tokens
    for section in SECTION_ORDER:
        if section in counts:
            n, est = counts[section]
            summaries.append(SectionSummary(section, n, preview(text[tops[section].rowid]), est))
    if mode != "summary" and not taken:
        reason = "budget_exhausted"
    elif fallback:
        reason = "recency_fallback"
    else:
        reason = ""
    dropped = 0 if mode == "summary" else len(ranked) - len(taken)
    return ContextAssembly(
        context_block=block,
        token_estimate=tokens,
        budget_used=tokens,
        budget_remaining=max(0, budget - tokens) if budget else 0,
        evidence_candidates_considered=len(ranked),
        evidence_dropped_by_budget=dropped,
        exact_references_surfaced=sum(1 for c in taken if c.section == "archive_blocks"),
        section_summaries=summaries,
        empty_reason=reason,  # type: ignore[arg-type]
    )


def _empty(reason: str, budget: int) -> ContextAssembly:
    return ContextAssembly(
        context_block="",
        token_estimate=0,
        budget_used=0,
        budget_remaining=budget,
        evidence_candidates_considered=0,
        evidence_dropped_by_budget=0,
        exact_references_surfaced=0,
        section_summaries=[],
        empty_reason=reason,  # type: ignore[arg-type]
    )
