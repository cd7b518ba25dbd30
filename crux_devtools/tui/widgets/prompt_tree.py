"""The left pane: every prompt and agent with a status marker, and under each its contexts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from ...inspector.report_types import ContextEntry, ExampleReport, PromptReport, Report
from ..report import find_example, part_statuses, prompt_status

STATUS_MARKS = {
    "fits": ("✓", "green"),
    "over": ("▲", "bold red"),
    "error": ("✗", "bold red"),
    "stale": ("◌", "yellow"),
}
PART_MARKS = {"active": ("●", "green"), "excluded": ("○", "dim"), "dropped": ("✂", "red")}


@dataclass(frozen=True, slots=True)
class NodeRef:
    """What a tree node stands for: a prompt, or one context of a prompt."""

    prompt_id: str
    context_id: str | None = None


def prompt_label(prompt: PromptReport, stale: bool) -> Text:
    status = prompt_status(prompt, stale)
    mark, style = STATUS_MARKS.get(status, ("?", "red"))
    label = Text.assemble((mark, style), " ", (prompt["id"], "bold"))
    if prompt["kind"] == "agent":
        label.append(" agent", "italic cyan")
    detail = f" {prompt['total_tokens']} tok" if status in ("fits", "over") else f" {status}"
    label.append(detail, "dim" if status == "fits" else style)
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

    class PromptSelected(Message):
        """The user picked a prompt (``context_id`` set when they picked one of its contexts)."""

        def __init__(self, prompt_id: str, context_id: str | None = None) -> None:
            super().__init__()
            self.prompt_id = prompt_id
            self.context_id = context_id

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("project", **kwargs)
        self.show_root = False
        self.guide_depth = 3
        self._current: NodeRef | None = None  # survives rebuilds (the cursor node is recomputed lazily)
        self._shown_shape: list[tuple[NodeRef, NodeRef | None]] = []  # (node, parent) of the tree on screen
        self._shown_nodes: list[TreeNode[NodeRef]] = []  # its nodes, in the same order

    def show_report(self, report: Report | None, current: dict[str, str | None], shown: ExampleReport | None = None) -> None:
        """Show ``report``: relabel the nodes in place when the tree's shape is unchanged (the common
        case after a save: a marker or a token count changed), else rebuild it.

        ``current`` maps prompt id -> the example whose context statuses are marked; ``shown`` is the
        example on screen (it may be re-evaluated with a budget), used for its own prompt.
        """
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
        if not report:
            return rows
        stale = report["stale"]
        for prompt in report["prompts"]:
            pid = prompt["id"]
            rows.append((NodeRef(pid), None, prompt_label(prompt, stale)))
            on_screen = shown if shown and (shown["inspection"] or {}).get("prompt_id") == pid else None
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

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[NodeRef]) -> None:
        event.stop()
        if event.node.data is not None:
            self._current = event.node.data
            self.post_message(self.PromptSelected(event.node.data.prompt_id, event.node.data.context_id))
