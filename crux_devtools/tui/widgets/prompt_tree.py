"""The left pane: every prompt and agent with a status marker, and under each its contexts.

A submitted search (``highlight``) marks what it matched in the prompts' ids; while the search is
typed, the matches are listed by ``SearchResults`` instead (this tree stays as it is, hidden).
``mark_changed`` puts ``CHANGED_MARK`` after the id of each prompt whose requests differ from a git
revision (the app works out which, after each report).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from ...inspector.report_types import ContextEntry, ExampleReport, PromptReport, Report
from ..report import find_example, part_statuses, prompt_status, status_style
from ..search import PromptMatch, match_prompt, terms

PART_MARKS = {"active": ("●", "green"), "excluded": ("○", "dim"), "dropped": ("✂", "red")}
MATCH_STYLE = "bold underline black on yellow"  # underlined: the cursor line paints its own background over it
CHANGED_MARK = ("Δ", "bold yellow")  # after a prompt's id: its requests differ from the base revision


@dataclass(frozen=True, slots=True)
class NodeRef:
    """What a tree node stands for: a prompt, or one context of a prompt."""

    prompt_id: str
    context_id: str | None = None


def prompt_label(prompt: PromptReport, stale: bool, detail: bool = True, changed: bool = False) -> Text:
    status = prompt_status(prompt, stale)
    mark, word, style = status_style(status)
    label = Text.assemble((mark, style), " ", (prompt["id"], "bold"))
    if changed:
        label.append_text(Text.assemble(" ", CHANGED_MARK))
    if prompt["kind"] == "agent":
        label.append(" agent", "italic cyan")
    if detail:  # the tokens when the request fits; otherwise the status's word, as everywhere else
        label.append(f" {prompt['total_tokens']} tok" if status == "fits" else f" {word}", "dim" if status == "fits" else style)
    return label


def highlighted(text: str, spans: tuple[tuple[int, int], ...], style: str = "") -> Text:
    """``text`` (literal, never markup) with the ``spans`` a search matched highlighted."""
    label = Text(text, style)
    for start, end in spans:
        label.stylize(MATCH_STYLE, start, end)
    return label


def search_label(prompt: PromptReport, stale: bool, match: PromptMatch, where: bool = True, changed: bool = False) -> Text:
    """A prompt's label with what a search matched highlighted in its id; with ``where``, when a
    term matched only the module or the file, that field instead of the tokens (the user sees why
    the prompt is listed: the pane is narrow)."""
    outside = where and match.only_outside_id()
    label = prompt_label(prompt, stale, detail=not outside, changed=changed)
    offset = 2  # the status mark and a space
    for start, end in match.spans.get("id", ()):
        label.stylize(MATCH_STYLE, offset + start, offset + end)
    if outside:
        field = "file" if match.spans.get("file") else "module"
        label.append(" · ", "dim")
        label.append_text(highlighted(prompt["file"] if field == "file" else prompt["module"], match.spans[field], "dim"))
    return label


def context_label(ctx: ContextEntry, status: str | None) -> Text:
    mark, style = PART_MARKS.get(status or "", ("·", "dim"))
    label = Text.assemble((mark, style), " ", ctx["id"])
    if ctx["conditional"]:
        label.append(" ?", "yellow")
    if ctx["priority"] is not None:
        label.append(f" p{ctx['priority']}", "dim")
    return label


class PromptTree(Tree[NodeRef]):
    """Prompts and agents of the project; selecting a node posts ``PromptSelected``."""

    @dataclass
    class PromptSelected(Message):
        """The user picked a prompt (``context_id`` set when they picked one of its contexts)."""

        prompt_id: str
        context_id: str | None = None

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("project", **kwargs)
        self.show_root = False
        self.guide_depth = 3
        self._current: NodeRef | None = None  # survives rebuilds (the cursor node is recomputed lazily)
        self._shown_shape: list[tuple[NodeRef, NodeRef | None]] = []  # (node, parent) of the tree on screen
        self._shown_nodes: list[TreeNode[NodeRef]] = []  # its nodes, in the same order
        self._report: Report | None = None  # the report shown
        self.query_text = ""  # a submitted search: what it matched is highlighted
        self.matches: list[PromptMatch] = []  # of ``query_text`` in the report shown, in tree order
        self._line_style: Style | None = None  # the widget's style, while a frame's lines are rendered
        self.changed: frozenset[str] = frozenset()  # the prompts marked as changed (``mark_changed``)

    def get_label_width(self, node: TreeNode[NodeRef]) -> int:
        """The label's width without rendering it (``Tree`` renders every label to measure it, on
        each rebuild of its lines: a focus change or a resize of a tree of thousands of lines)."""
        icon = (self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE) if node.allow_expand else ""
        return len(icon) + node._label.cell_len  # (``label`` as processed: always a ``Text``)

    def render_lines(self, crop: Region) -> list[Strip]:
        self._line_style = self.rich_style  # once per frame: ``Tree`` works it out again for every line
        try:
            return super().render_lines(crop)
        finally:
            self._line_style = None

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        style = self._line_style if self._line_style is not None else self.rich_style
        return self._render_line(y + scroll_y, scroll_x, scroll_x + self.size.width, style)

    @property
    def current(self) -> NodeRef | None:
        """The node the cursor is on (or will be, once the tree is shown)."""
        return self._current

    @property
    def report(self) -> Report | None:
        """The report the tree shows."""
        return self._report

    def highlight(self, query: str) -> None:
        """Highlight what ``query`` matches in the prompts' labels (only those labels are redrawn)."""
        self.query_text = query
        self._relabel_prompts()

    def mark_changed(self, prompt_ids: frozenset[str]) -> None:
        """Mark the prompts ``prompt_ids`` as changed, and only them (only their labels are redrawn)."""
        if prompt_ids != self.changed:
            self.changed = prompt_ids
            self._relabel_prompts()

    def _relabel_prompts(self) -> None:
        report = self._report
        by_id = {p["id"]: p for p in report["prompts"]} if report is not None else {}
        stale = report is not None and report["stale"]
        query_terms = terms(self.query_text)
        self.matches = []
        for node in self._prompt_nodes():
            prompt = by_id.get(node.data.prompt_id) if node.data else None
            if prompt is None:
                continue
            label = self._prompt_label(prompt, stale, query_terms)
            if node.label != label:
                node.set_label(label)

    def _prompt_label(self, prompt: PromptReport, stale: bool, query_terms: list[str]) -> Text:
        """A prompt's label in the tree: the search's match highlighted (and kept in ``matches``), the change marked."""
        match = match_prompt(prompt, query_terms) if query_terms else None
        changed = prompt["id"] in self.changed
        if match is None:
            return prompt_label(prompt, stale, changed=changed)
        self.matches.append(match)
        return search_label(prompt, stale, match, where=False, changed=changed)

    def match_ids(self) -> list[str]:
        return [m.prompt_id for m in self.matches]

    def prompt_ids(self) -> list[str]:
        """Every prompt id of the report shown, in the tree's order (matching or not)."""
        return [p["id"] for p in self._report["prompts"]] if self._report is not None else []

    def show_report(self, report: Report | None, current: dict[str, str | None], shown: ExampleReport | None = None) -> None:
        """Show ``report``: relabel the nodes in place when the tree's shape is unchanged (the common
        case after a save: a marker or a token count changed), else rebuild it.

        ``current`` maps prompt id -> the example whose context statuses are marked; ``shown`` is the
        example on screen (it may be re-evaluated with a budget), used for its own prompt.
        """
        self._report = report
        rows = self._rows(report, current, shown)
        shape = [(ref, parent) for ref, parent, _ in rows]
        if report and shape == self._shown_shape:
            for node, (_, _, label) in zip(self._shown_nodes, rows, strict=True):
                if node.label != label:
                    node.set_label(label)
            return
        # the user's collapsed prompts stay collapsed; every other prompt (new ones too) is expanded
        collapsed = {n.data.prompt_id for n in self._prompt_nodes() if n.data and n.allow_expand and not n.is_expanded}
        self.clear()
        self._shown_shape, self._shown_nodes = [], []
        if not report:
            return
        by_ref: dict[NodeRef, TreeNode[NodeRef]] = {}
        for ref, parent, label in rows:
            owner = self.root if parent is None else by_ref[parent]
            node = owner.add(label, ref, expand=ref.context_id is not None or ref.prompt_id not in collapsed)
            by_ref[ref] = node
            self._shown_nodes.append(node)
        for node in self._shown_nodes:
            node.allow_expand = bool(node.children)
        self._shown_shape = shape
        self._restore_cursor(self._current)

    def _rows(
        self, report: Report | None, current: dict[str, str | None], shown: ExampleReport | None
    ) -> list[tuple[NodeRef, NodeRef | None, Text]]:
        """Every node in display order: what it stands for, its parent's ref, and its label.
        Contexts nest under their owner, in declaration order."""
        rows: list[tuple[NodeRef, NodeRef | None, Text]] = []
        self.matches = []
        if not report:
            return rows
        stale = report["stale"]
        query_terms = terms(self.query_text)
        for prompt in report["prompts"]:
            pid = prompt["id"]
            rows.append((NodeRef(pid), None, self._prompt_label(prompt, stale, query_terms)))
            on_screen = shown if shown and shown["inspection"] and shown["inspection"]["prompt_id"] == pid else None
            statuses = part_statuses(on_screen or find_example(prompt, current.get(pid)))
            known: set[str] = set()
            for ctx in prompt["contexts"]:
                cid = ctx["id"]
                owner = ctx["owner"] or ""
                parent = NodeRef(pid, owner) if owner in known else NodeRef(pid)
                rows.append((NodeRef(pid, cid), parent, context_label(ctx, statuses.get(cid))))
                known.add(cid)
        return rows

    def _prompt_nodes(self) -> list[TreeNode[NodeRef]]:
        return list(self.root.children)

    def _restore_cursor(self, ref: NodeRef | None) -> None:
        if ref is None:
            return
        _ = self.last_line  # lays the lines out again after a rebuild, so every node knows its line
        for node in self._walk(self.root):
            if node.data == ref:
                self.move_cursor(node)
                return

    def _walk(self, node: TreeNode[NodeRef]) -> list[TreeNode[NodeRef]]:
        out: list[TreeNode[NodeRef]] = []
        for child in node.children:
            out.append(child)
            out.extend(self._walk(child))
        return out

    def select_prompt(self, prompt_id: str) -> None:
        """Move the cursor to a prompt's node (used on start and after a reload)."""
        self._current = NodeRef(prompt_id)
        self._restore_cursor(self._current)

    def select_node_ref(self, ref: NodeRef, center: bool = False) -> None:
        """Move the cursor to the node of ``ref`` (a prompt or one of its contexts); with ``center``,
        scroll it to the middle of the pane (after a jump, the user sees what is around it)."""
        self._current = ref
        self._restore_cursor(ref)
        if center:  # after the layout: the tree may just have been shown again (its size was 0)
            self.call_after_refresh(self._center_on, ref)

    def _center_on(self, ref: NodeRef) -> None:
        if self.cursor_node is not None and self.cursor_node.data == ref:
            self.scroll_to(y=max(0, self.cursor_line - self.scrollable_content_region.height // 2), animate=False)

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[NodeRef]) -> None:
        event.stop()
        if event.node.data is not None:
            self._current = event.node.data
            self.post_message(self.PromptSelected(event.node.data.prompt_id, event.node.data.context_id))
