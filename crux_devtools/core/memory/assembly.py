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
    with store._reading("get_context") as conn:
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


_RANK_SQL = "CASE e.section " + " ".join(f"WHEN '{name}' THEN {rank}" for name, rank in SECTION_RANK.items()) + " END"


def _ranked_rows(
    conn: Any, session_id: str, match: str, allowed: tuple[str, ...], lane: str | None, include_wm: bool, budget: int
) -> list[Row]:
    """Rank every matching entry inside SQLite and read back only what the block can use.

    Window functions give each section's size and token sum, each entry's place in its section, and
    the running token total in assembly order; only the entries within the budget (by stored line
    costs, headers excluded, so a superset of what fits) and each section's top entry come back.
    Returns ``[]`` when nothing matched the query (working memory alone is not a match).
    """
    where, params = _filters(session_id, lane, allowed, "e.")
    wm = include_wm and "working_memory" in allowed
    ride = ""
    ride_params: list[Any] = []
    if wm:
        ride_where, ride_params = _filters(session_id, lane, ("working_memory",), "e.")
        ride = (
            " UNION ALL SELECT e.id, e.section, " + _RANK_SQL + ", 0.0, e.tokens, 0 FROM entries e"
            " WHERE e.id NOT IN (SELECT id FROM m)" + ride_where
        )
    sql = (
        "WITH m AS MATERIALIZED (SELECT rowid AS id, -bm25(entries_fts) AS score FROM entries_fts WHERE entries_fts MATCH ?),"
        " c AS (SELECT e.id, e.section, " + _RANK_SQL + " AS srank, m.score, e.tokens, 1 AS matched"
        " FROM m CROSS JOIN entries e ON e.id = m.id WHERE 1" + where + ride + "),"
        " w AS (SELECT id, section, srank, score, tokens, matched,"
        "  count(*) OVER (PARTITION BY section) AS n,"
        "  sum(tokens) OVER (PARTITION BY section) AS section_tokens,"
        "  row_number() OVER (PARTITION BY section ORDER BY score DESC, id DESC) AS rn,"
        "  sum(tokens) OVER (ORDER BY srank, score DESC, id DESC ROWS UNBOUNDED PRECEDING) AS cum,"
        "  count(*) OVER () AS total, sum(matched) OVER () AS matches FROM c)"
        " SELECT w.id, w.section, w.score, w.tokens, w.n, w.section_tokens, w.total, e.content, w.matches,"
        "  (? = 0 OR w.cum <= ?) AS takeable"
        " FROM w CROSS JOIN entries e ON e.id = w.id"
        " WHERE w.rn = 1 OR ? = 0 OR w.cum <= ?"
        " ORDER BY w.srank, w.score DESC, w.id DESC"
    )
    out = conn.execute(sql, [match, *params, *ride_params, budget, budget, budget, budget]).fetchall()
    if not out or not out[0][8]:
        return []
    return [Row(*r[:8], takeable=bool(r[9])) for r in out]


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
