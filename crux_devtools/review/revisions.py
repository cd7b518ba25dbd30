"""Git revisions of a project: find the work tree, resolve a revision, export it into a folder.

A revision is exported whole with ``git archive`` (only tracked files, as committed), and the
project is the same subfolder of it as DIR is of the work tree. Every failure is a ``RevisionError``
with one line to print.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path


class RevisionError(Exception):
    """Not a git work tree, an unknown revision, or git itself failed: one line for the user."""


@dataclass(frozen=True, slots=True)
class WorkTree:
    top: Path  # the work tree's top folder
    subdir: str  # the project folder relative to ``top`` ("" for the top itself), POSIX


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False, timeout=120)
    except FileNotFoundError:
        raise RevisionError("git is not installed (needed to read the base revision)") from None
    except subprocess.TimeoutExpired:
        raise RevisionError(f"git {' '.join(args)} did not finish in 120 s") from None


def work_tree(directory: Path) -> WorkTree:
    """The git work tree holding ``directory`` (a ``RevisionError`` when there is none)."""
    directory = directory.resolve()
    done = _git(directory, "rev-parse", "--show-toplevel")
    if done.returncode != 0:
        raise RevisionError(f"{directory} is not inside a git work tree (change review compares git revisions)")
    top = Path(done.stdout.decode().strip()).resolve()
    sub = directory.relative_to(top).as_posix()
    return WorkTree(top, "" if sub == "." else sub)


def resolve(tree: WorkTree, rev: str) -> str:
    """The commit sha ``rev`` names; an unknown revision (or a shallow clone without it) is a ``RevisionError``."""
    if rev.startswith("-"):
        raise RevisionError(f"unknown revision {rev!r}")
    done = _git(tree.top, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if done.returncode != 0:
        shallow = _git(tree.top, "rev-parse", "--is-shallow-repository").stdout.decode().strip() == "true"
        hint = " (this is a shallow clone: fetch more history, e.g. git fetch --unshallow)" if shallow else ""
        raise RevisionError(f"unknown revision {rev!r}{hint}")
    return done.stdout.decode().strip()


def export(tree: WorkTree, sha: str, into: Path) -> Path | None:
    """Write the files of commit ``sha`` under ``into``; the project's folder there, or None when
    the project did not exist at that revision."""
    done = _git(tree.top, "archive", "--format=tar", sha)
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise RevisionError(f"git archive {sha[:12]} failed: {message[-1] if message else 'no message'}")
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
        archive.extractall(into, filter="data")
    project = into / tree.subdir if tree.subdir else into
    return project if project.is_dir() else None


def changed_files(tree: WorkTree, base_sha: str, head_sha: str | None) -> list[str] | None:
    """The project's files (relative to the project folder) that differ between ``base_sha`` and
    ``head_sha`` (None: the working tree, untracked files included); None when git cannot say."""
    where = ["--", tree.subdir] if tree.subdir else []
    listed = _git(tree.top, "diff", "--name-only", "--no-renames", base_sha, *([head_sha] if head_sha else []), *where)
    if listed.returncode != 0:
        return None
    names = listed.stdout.decode().splitlines()
    if head_sha is None:
        untracked = _git(tree.top, "ls-files", "--others", "--exclude-standard", "--full-name", *where)
        if untracked.returncode != 0:
            return None
        names += untracked.stdout.decode().splitlines()
    prefix = tree.subdir + "/" if tree.subdir else ""
    return sorted({n[len(prefix):] for n in names if n.startswith(prefix)})


_NEVER_READ = ("venv/", "env/", "node_modules/", "__pycache__/", "build/", "dist/")


def has_ignored_files(tree: WorkTree) -> bool | None:
    """Whether the project folder holds files git ignores that user code might read, which an export
    lacks (hidden folders, virtual environments, caches, build output and ``*.egg-info`` aside);
    None when git cannot say."""
    where = ["--", tree.subdir] if tree.subdir else []
    listed = _git(tree.top, "ls-files", "--others", "--ignored", "--exclude-standard", "--directory", *where)
    if listed.returncode != 0:
        return None
    prefix = tree.subdir + "/" if tree.subdir else ""

    def matters(name: str) -> bool:
        relative = name[len(prefix):] if name.startswith(prefix) else name
        parts = relative.split("/")
        if any(p.startswith(".") or p == "__pycache__" or p.endswith(".egg-info") for p in parts[:-1] if p):
            return False
        return not (relative.startswith(_NEVER_READ) or relative.startswith(".") or relative.endswith((".pyc", ".egg-info/")))

    return any(matters(name) for name in listed.stdout.decode().splitlines())
