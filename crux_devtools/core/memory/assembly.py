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
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from .query import fts_phrase, or_phrases, query_terms
from .results import ContextAssembly, SectionSummary
from .sections import SECTION_ORDER, SECTION_RANK, SECTION_TITLES, check_entry_types, check_sections, section_for

if TYPE_CHECKING:
    from .store import MemoryStore

MODES = ("full", "summary", "sections")
RECENCY_FALLBACK_LIMIT = 20
PREVIEW_CHARS = 80


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
    terms = query_terms(query)
    with store._snapshot("get_context") as conn:
        match = or_phrases(_live_terms(conn, terms))
        rows = _ranked_rows(conn, session_id, match, allowed, lane, include_working_memory, budget) if match else []
        fallback = not rows
        if fallback:
            where, params = _filters(session_id, lane, allowed)
            rows = [
                Row(rowid, section, 0.0, tokens, 0, 0, 0, content)
                for rowid, section, tokens, content in conn.execute(
                    "SELECT id, section, tokens, content FROM entries WHERE 1" + where + " ORDER BY id DESC LIMIT ?",
                    [*params, RECENCY_FALLBACK_LIMIT],
                )
            ]
            rows.sort(key=lambda r: (SECTION_RANK[r.section], -r.rowid))
            _fill_stats(rows)
    if not rows:
        return _empty("no_evidence", budget)
    taken = [] if mode == "summary" else _fill(store, rows, budget)
    return _finish(store, rows, taken, budget, mode, fallback)


def _live_terms(conn: Any, terms: list[str]) -> list[str]:
    """The terms that occur in at least one entry of the file, in query order.

    Dropping the others changes no score: bm25 sums one part per phrase, each with its own IDF, and
    the part of a phrase that is in no entry is 0 for every entry. It does save work, since bm25 walks
    every phrase of the query for every match (about a third of its cost for a query with three
    absent names). An existence probe costs a few microseconds per term.
    """
    probe = "SELECT 1 FROM entries_fts WHERE entries_fts MATCH ? LIMIT 1"
    return [t for t in terms if conn.execute(probe, [fts_phrase(t)]).fetchone()]


@dataclass(slots=True)
class Row:
    """A candidate as read back: the taken prefix, plus each section's top item for its summary.
    ``section_count``/``section_tokens`` describe the whole section; ``total`` all candidates."""

    rowid: int
    section: str
    score: float
    tokens: int
    section_count: int
    section_tokens: int
    total: int
    content: str
    takeable: bool = True  # False for a section's top row read back only for its summary


def _fill_stats(rows: list[Row]) -> None:
    counts: dict[str, list[int]] = {}
    for r in rows:
        entry = counts.setdefault(r.section, [0, 0])
        entry[0] += 1
        entry[1] += r.tokens
    for r in rows:
        r.section_count, r.section_tokens = counts[r.section]
        r.total = len(rows)


_SCORE_THEN_NEWEST = itemgetter(2, 0)
_TOKENS = itemgetter(3)


def _ranked_rows(
    conn: Any, session_id: str, match: str, allowed: tuple[str, ...], lane: str | None, include_wm: bool, budget: int
) -> list[Row]:
    """Score every matching entry (bm25) and read back the text only of what the block can use.

    One pass over ``(id, section, score, tokens)`` of all matches gives each section's size and
    token sum; only the sections the budget reaches are sorted in full, the others only yield their
    top entry (for its summary). Returns ``[]`` when nothing matched the query: working memory riding
    along is not a match.
    """
    where, params = _filters(session_id, lane, allowed, "e.")
    # ``rank`` is bm25 (FTS5's default rank function, same values as ``bm25(entries_fts)``). The join
    # goes through the primary key: measured faster than the covering index entries_meta.
    matched = conn.execute(
        "SELECT e.id, e.section, -entries_fts.rank, e.tokens"
        " FROM entries_fts CROSS JOIN entries e ON e.id = entries_fts.rowid"
        " WHERE entries_fts MATCH ?" + where,
        [match, *params],
    ).fetchall()
    if not matched:
        return []
    buckets: dict[str, list[tuple[int, str, float, int]]] = {}
    for row in matched:
        bucket = buckets.get(row[1])
        if bucket is None:
            buckets[row[1]] = [row]
        else:
            bucket.append(row)
    if include_wm and "working_memory" in allowed:
        wm_where, wm_params = _filters(session_id, lane, ("working_memory",))
        have = {r[0] for r in buckets.get("working_memory", ())}
        extra = [
            (rowid, section, 0.0, tokens)
            for rowid, section, tokens in conn.execute("SELECT id, section, tokens FROM entries WHERE 1" + wm_where, wm_params)
            if rowid not in have
        ]
        if extra:
            buckets.setdefault("working_memory", []).extend(extra)
    total = sum(len(b) for b in buckets.values())
    picked: list[tuple[tuple[int, str, float, int], int, int, bool]] = []  # (row, count, tokens, takeable)
    spent = 0
    open_budget = True
    for section in SECTION_ORDER:
        bucket = buckets.get(section)
        if not bucket:
            continue
        count, tokens = len(bucket), sum(map(_TOKENS, bucket))
        if open_budget:
            bucket.sort(key=_SCORE_THEN_NEWEST, reverse=True)
            for i, row in enumerate(bucket):
                if budget and spent + row[3] > budget:
                    open_budget = False
                    if i == 0:
                        picked.append((row, count, tokens, False))
                    break
                spent += row[3]
                picked.append((row, count, tokens, True))
        else:
            top = max(bucket, key=_SCORE_THEN_NEWEST)
            picked.append((top, count, tokens, False))
    text = _contents(conn, [p[0][0] for p in picked])
    return [Row(r[0], r[1], r[2], r[3], count, tokens, total, text[r[0]], ok) for r, count, tokens, ok in picked]


def _contents(conn: Any, rowids: list[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for start in range(0, len(rowids), 500):
        chunk = rowids[start : start + 500]
        out.update(conn.execute(f"SELECT id, content FROM entries WHERE id IN ({', '.join('?' * len(chunk))})", chunk).fetchall())
    return out


def _header(store: MemoryStore, section: str, first: bool) -> int:
    return store.counter.count(("" if first else "\n") + f"## {SECTION_TITLES[section]}\n")


def _fill(store: MemoryStore, rows: list[Row], budget: int) -> list[Row]:
    """Take rows in order until the next does not fit (estimated from stored per-line costs)."""
    taken: list[Row] = []
    used = 0
    current = None
    for row in rows:
        if not row.takeable:
            break
        cost = row.tokens
        if row.section != current:
            cost += _header(store, row.section, current is None)
        if budget and used + cost > budget:
            break
        taken.append(row)
        used += cost
        current = row.section
    return taken


def render(taken: list[Row]) -> str:
    """The block: one ``## Title`` per section, one bullet per item, sections separated by a blank line."""
    from .store import render_line

    blocks: list[str] = []
    current = None
    lines: list[str] = []
    for row in taken:
        if row.section != current:
            if lines:
                blocks.append("\n".join(lines))
            lines = [f"## {SECTION_TITLES[row.section]}"]
            current = row.section
        lines.append(render_line(row.content))
    if lines:
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def preview(content: str) -> str:
    flat = " ".join(content.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[:PREVIEW_CHARS] + "…"


def _finish(store: MemoryStore, rows: list[Row], taken: list[Row], budget: int, mode: str, fallback: bool) -> ContextAssembly:
    block = render(taken)
    tokens = store.counter.count(block) if block else 0
    # Stored per-line costs estimate the joined text; trim until the exact count fits.
    while budget and tokens > budget and taken:
        taken = taken[:-1]
        block = render(taken)
        tokens = store.counter.count(block) if block else 0
    summaries: list[SectionSummary] = []
    seen: set[str] = set()
    for row in rows:  # rows are in assembly order, so a section's first row is its top item
        if row.section in seen:
            continue
        header = _header(store, row.section, not seen)
        seen.add(row.section)
        summaries.append(SectionSummary(row.section, row.section_count, preview(row.content), header + row.section_tokens))
    if mode != "summary" and not taken:
        reason = "budget_exhausted"
    elif fallback:
        reason = "recency_fallback"
    else:
        reason = ""
    total = rows[0].total
    return ContextAssembly(
        context_block=block,
        token_estimate=tokens,
        budget_used=tokens,
        budget_remaining=max(0, budget - tokens) if budget else 0,
        evidence_candidates_considered=total,
        evidence_dropped_by_budget=0 if mode == "summary" else total - len(taken),
        exact_references_surfaced=sum(1 for r in taken if r.section == "archive_blocks"),
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
