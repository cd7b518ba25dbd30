"""``get_context``: retrieve, rank, group and trim memory into one budgeted block.

Every entry of the session that matches the query is a candidate (no top-k cap). Candidates sort by
section (the fixed order in ``sections.py``), then by descending bm25 score, then newest first. With a
budget, items are taken in that order until the next one does not fit; the rest is dropped and
counted, so a lower section never displaces a higher one. Only the taken items' text is read back
from the database: token costs of every entry were stored when it was remembered.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import Future, wait
from contextlib import AbstractContextManager, closing
from dataclasses import dataclass
from typing import Any

from ..tokens import TokenCounter
from .checks import check_lane, check_query, check_session
from .query import fts_phrase, or_phrases, query_terms
from .results import ContextAssembly, SectionSummary
from .schema import session_slot, slot_range
from .scoring import Helper, Hit, Scope, Scored, fingerprint, ranked, score, score_in_new_transaction, top
from .sections import SECTION_ORDER, SECTION_RANK, SECTION_TITLES, check_entry_types, check_sections, render_line, section_for

MODES = ("full", "summary", "sections")


@dataclass(frozen=True, slots=True)
class Source:
    """What an assembly reads, handed over by ``MemoryStore.get_context`` (this module never sees the store).

    ``snapshot()`` opens one read transaction on the store's connection (its errors already
    translated to ``MemoryStoreError``); ``scoring_helper()`` is the second read connection that
    scores half of a large session, or ``None``; ``counter`` counts the block's tokens.
    """

    snapshot: Callable[[], AbstractContextManager[sqlite3.Connection]]
    scoring_helper: Callable[[], Helper | None]
    counter: TokenCounter

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


def assemble(
    source: Source,
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
    check_session(session_id)
    check_query(query)
    check_lane(lane)
    if not allowed:
        return _empty("no_evidence", budget)
    terms = query_terms(query)
    with source.snapshot() as conn:
        slot = session_slot(conn, session_id)
        if slot is None:
            return _empty("no_evidence", budget)
        lo, hi = slot_range(slot)
        secs = None if len(allowed) == len(SECTION_ORDER) else tuple(SECTION_RANK[s] for s in allowed)
        match = or_phrases(_live_terms(conn, terms))
        rows: list[Row] = []
        if match:
            wm = include_working_memory and "working_memory" in allowed
            rows = _ranked_rows(source, conn, Scope(match, lo, hi, secs, lane, wm), budget)
        fallback = not rows
        if fallback:
            rows = _most_recent(conn, Scope("", lo, hi, secs, lane, False))
    if not rows:
        return _empty("no_evidence", budget)
    taken = [] if mode == "summary" else _fill(source, rows, budget)
    return _finish(source, rows, taken, budget, mode, fallback)


def _live_terms(conn: Any, terms: list[str]) -> list[str]:
    """The terms that occur in at least one entry of the file, in query order.

    Dropping the others changes no score: bm25 sums one part per phrase, each with its own IDF, and
    the part of a phrase that is in no entry is 0 for every entry. It does save work, since bm25 walks
    every phrase of the query for every match. An existence probe costs a few microseconds per term.
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


def _most_recent(conn: Any, where: Scope) -> list[Row]:
    """The recency fallback: the newest entries in scope, grouped in section order."""
    filters, params = where.meta_filters()
    found = conn.execute(
        "SELECT e.id, e.section, e.tokens, e.content FROM entries e JOIN entry_meta m ON m.id = e.id"
        " WHERE e.id BETWEEN ? AND ?" + filters + " ORDER BY e.id DESC LIMIT ?",
        [where.lo, where.hi, *params, RECENCY_FALLBACK_LIMIT],
    ).fetchall()
    rows = [Row(rowid, section, 0.0, tokens, 0, 0, 0, content) for rowid, section, tokens, content in found]
    rows.sort(key=lambda r: (SECTION_RANK[r.section], -r.rowid))
    counts: dict[str, list[int]] = {}
    for r in rows:
        entry = counts.setdefault(r.section, [0, 0])
        entry[0] += 1
        entry[1] += r.tokens
    for r in rows:
        r.section_count, r.section_tokens = counts[r.section]
        r.total = len(rows)
    return rows


# Sessions whose rowid span is at least this are scored in two halves on two connections at once.
PARALLEL_MIN_ENTRIES = 20_000


def _score_parts(source: Source, conn: Any, where: Scope) -> tuple[list[Scored], Helper | None]:
    """Score ``where`` on ``conn``, or half on ``conn`` and half on the source's helper connection.

    Returns the parts and the helper whose transaction the caller must end (``None`` if unused)."""
    (last,) = conn.execute("SELECT max(id) FROM entries WHERE id BETWEEN ? AND ?", [where.lo, where.hi]).fetchone()
    span = (last or where.lo) - where.lo
    helper = source.scoring_helper() if span >= PARALLEL_MIN_ENTRIES else None
    if helper is None:
        return [score(conn, where)], None
    first, second = where.split(where.lo + span // 2)
    pending = helper.pool.submit(score_in_new_transaction, helper.conn, second)
    try:
        mine = score(conn, first)
        theirs, their_snapshot = pending.result()
    except BaseException:
        _end(helper, pending)
        raise
    if their_snapshot == fingerprint(conn):
        return [mine, theirs], helper
    # A write landed between the two transactions' starts: score it all on one snapshot instead.
    _end(helper, pending)
    return [score(conn, where)], None


def _end(helper: Helper | None, pending: Future[Any] | None = None) -> None:
    if helper is None:
        return
    if pending is not None:
        wait([pending])
    if helper.conn.in_transaction:
        helper.conn.execute("COMMIT")


def _ranked_rows(source: Source, conn: Any, where: Scope, budget: int) -> list[Row]:
    """Score every match (bm25) and read back only what the block and the summaries use.

    Per-section counts and token sums come from SQLite; the sections the budget reaches are read best
    first until it is spent, every other section yields only its top row (for its summary); only those
    rows' text is read. Returns ``[]`` when nothing matched: working memory riding along is not a match.
    """
    parts, helper = _score_parts(source, conn, where)
    try:
        if not any(part.matched for part in parts):
            return []
        stats: dict[int, list[int]] = {}
        for part in parts:
            for sec, (count, tokens) in part.sections.items():
                entry = stats.setdefault(sec, [0, 0])
                entry[0] += count
                entry[1] += tokens
        total = sum(count for count, _ in stats.values())
        picked: list[tuple[Hit, int, bool]] = []  # (hit, section rank, takeable)
        spent = 0
        open_budget = True
        for sec in sorted(stats):
            if not open_budget:
                picked.append((top(parts, sec), sec, False))
                continue
            with closing(ranked(parts, sec)) as hits:
                for i, hit in enumerate(hits):
                    if budget and spent + hit[2] > budget:
                        open_budget = False
                        if i == 0:
                            picked.append((hit, sec, False))
                        break
                    spent += hit[2]
                    picked.append((hit, sec, True))
    finally:
        _end(helper)
    text = _contents(conn, [hit[0] for hit, _, _ in picked])
    return [
        Row(hit[0], SECTION_ORDER[sec], hit[1], hit[2], stats[sec][0], stats[sec][1], total, text[hit[0]], ok)
        for hit, sec, ok in picked
    ]


def _contents(conn: Any, rowids: list[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for start in range(0, len(rowids), 500):
        chunk = rowids[start : start + 500]
        out.update(conn.execute(f"SELECT id, content FROM entries WHERE id IN ({', '.join('?' * len(chunk))})", chunk).fetchall())
    return out


def _header(source: Source, section: str, first: bool) -> int:
    return source.counter.count(("" if first else "\n") + f"## {SECTION_TITLES[section]}\n")


def _fill(source: Source, rows: list[Row], budget: int) -> list[Row]:
    """Take rows in order until the next does not fit (estimated from stored per-line costs)."""
    taken: list[Row] = []
    used = 0
    current = None
    for row in rows:
        if not row.takeable:
            break
        cost = row.tokens
        if row.section != current:
            cost += _header(source, row.section, current is None)
        if budget and used + cost > budget:
            break
        taken.append(row)
        used += cost
        current = row.section
    return taken


def render(taken: list[Row]) -> str:
    """The block: one ``## Title`` per section, one bullet per item, sections separated by a blank line."""
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


def _finish(source: Source, rows: list[Row], taken: list[Row], budget: int, mode: str, fallback: bool) -> ContextAssembly:
    block = render(taken)
    tokens = source.counter.count(block) if block else 0
    # Stored per-line costs estimate the joined text; trim until the exact count fits.
    while budget and tokens > budget and taken:
        taken = taken[:-1]
        block = render(taken)
        tokens = source.counter.count(block) if block else 0
    summaries: list[SectionSummary] = []
    seen: set[str] = set()
    for row in rows:  # rows are in assembly order, so a section's first row is its top item
        if row.section in seen:
            continue
        header = _header(source, row.section, not seen)
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
