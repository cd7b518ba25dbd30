"""Git revisions of a project: find the work tree, resolve a revision, export it into a folder.

A revision is exported whole with ``git archive`` (the tracked files, as committed), each submodule
with its own content at the commit the revision records, and the project is the same subfolder of
it as DIR is of the work tree. The files git ignores are not the revision's: the working tree's
copies are put beside it (``copy_ignored``), so a review compares code and tracked data, never a
local store against its absence. Every failure is a ``RevisionError`` with one line to print;
what an export could not do as the revision says (a symlink leaving the repository, a submodule
that is not checked out) is a ``Finding``, never a crash.

File names come from git NUL-separated (``-z``) and are decoded as the file system does
(``os.fsdecode``): any name git can store works, non-ASCII and spaced ones included.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath


class RevisionError(Exception):
    """Not a git work tree, an unknown revision, or git itself failed: one line for the user."""


@dataclass(frozen=True, slots=True)
class WorkTree:
    top: Path  # the work tree's top folder
    subdir: str  # the project folder relative to ``top`` ("" for the top itself), POSIX


@dataclass(frozen=True, slots=True)
class Finding:
    """Something of a revision an export keeps apart from the code (shown as a failure of that revision)."""

    file: str  # relative to the project folder
    type: str  # "SymlinkOutside", "SubmoduleMissing"
    message: str

    def to_error(self) -> dict[str, object]:
        """As a load error of a report (``report["errors"]``)."""
        return {"file": self.file, "line": None, "type": self.type, "message": self.message, "traceback": ""}


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False, timeout=120)
    except FileNotFoundError:
        raise RevisionError("git is not installed (needed to read the base revision)") from None
    except subprocess.TimeoutExpired:
        raise RevisionError(f"git {' '.join(args)} did not finish in 120 s") from None


def _names(output: bytes) -> list[str]:
    return [os.fsdecode(n) for n in output.split(b"\0") if n]


def work_tree(directory: Path) -> WorkTree:
    """The git work tree holding ``directory`` (a ``RevisionError`` when there is none)."""
    directory = directory.resolve()
    done = _git(directory, "rev-parse", "--show-toplevel")
    if done.returncode != 0:
        raise RevisionError(f"{directory} is not inside a git work tree (change review compares git revisions)")
    top = Path(os.fsdecode(done.stdout.rstrip(b"\n"))).resolve()
    sub = directory.relative_to(top).as_posix()
    return WorkTree(top, "" if sub == "." else sub)


def git_dirs(tree: WorkTree) -> tuple[Path, Path]:
    """The work tree's git folder (its ``HEAD``) and the common one (``refs``, ``packed-refs``):
    the same folder except in a linked work tree."""
    done = _git(tree.top, "rev-parse", "--absolute-git-dir", "--git-common-dir")
    if done.returncode != 0:
        raise RevisionError(f"{tree.top}: git rev-parse failed: {done.stderr.decode(errors='replace').strip()}")
    git_dir, common = (os.fsdecode(line) for line in done.stdout.splitlines()[:2])
    return Path(git_dir), (tree.top / common).resolve()


def check_revision(rev: str) -> None:
    """A ``RevisionError`` for a revision no git command may be given: empty, an option, or
    holding a control character (NUL, a newline...)."""
    if not rev.strip():
        raise RevisionError("the revision is empty: name a branch, a tag or a commit (e.g. HEAD)")
    if rev.startswith("-"):
        raise RevisionError(f"unknown revision {rev!r}")
    if any(ord(c) < 32 or ord(c) == 127 for c in rev):
        raise RevisionError(f"revision {rev!r} holds a control character: name a branch, a tag or a commit (e.g. HEAD)")


def resolve(tree: WorkTree, rev: str) -> str:
    """The commit sha ``rev`` names; an unknown revision (or a shallow clone without it) is a ``RevisionError``."""
    check_revision(rev)
    done = _git(tree.top, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if done.returncode != 0:
        shallow = _git(tree.top, "rev-parse", "--is-shallow-repository").stdout.decode().strip() == "true"
        hint = " (this is a shallow clone: fetch more history, e.g. git fetch --unshallow)" if shallow else ""
        raise RevisionError(f"unknown revision {rev!r}{hint}")
    return done.stdout.decode().strip()


def _in_project(tree: WorkTree, name: str) -> bool:
    return not tree.subdir or name.startswith(tree.subdir + "/")


def _relative(tree: WorkTree, name: str) -> str:
    prefix = tree.subdir + "/" if tree.subdir else ""
    return name[len(prefix):] if name.startswith(prefix) else "/" + name  # "/..." : outside the project folder


def _extract(archive: tarfile.TarFile, into: Path, tree: WorkTree, under: str, findings: list[Finding]) -> None:
    """Extract ``archive`` (of files at ``under`` in the work tree) safely: a symlink whose target
    leaves the repository is made as it is (both revisions then read the same thing) and reported."""
    top = into.resolve()
    for member in archive:
        if not member.issym():
            archive.extract(member, top / under if under else top, filter="data")
            continue
        # made by hand: the archive's filter refuses every link that leaves the folder it extracts
        # into (a submodule's link into its parent repository too); the revision has it as it is
        name = f"{under}{member.name}"
        dest = top / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.is_symlink() or dest.exists():
            dest.unlink()
        os.symlink(member.linkname, dest)
        leaves = os.path.isabs(member.linkname) or not os.path.normpath(dest.parent / member.linkname).startswith(str(top) + os.sep)
        if leaves and _in_project(tree, name):
            findings.append(Finding(_relative(tree, name), "SymlinkOutside",
                                    f"symlink {name} points outside the repository ({member.linkname}): "
                                    "both revisions read what it points to"))


def _gitlinks(repo: Path, sha: str) -> list[tuple[str, str]]:
    """(path, commit) of each submodule recorded at ``sha`` of the repository in ``repo``."""
    listed = _git(repo, "ls-tree", "-r", "-z", sha)
    links = []
    for entry in listed.stdout.split(b"\0"):
        meta, _, path = entry.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3 and parts[0] == b"160000":
            links.append((os.fsdecode(path), parts[2].decode()))
    return links


def _archive(repo: Path, sha: str, into: Path, tree: WorkTree, under: str, findings: list[Finding]) -> None:
    done = _git(repo, "archive", "--format=tar", sha)
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise RevisionError(f"git archive {sha[:12]} failed: {message[-1] if message else 'no message'}")
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
        _extract(archive, into, tree, under, findings)
    for path, commit in _gitlinks(repo, sha):
        where = f"{under}{path}"
        checkout = repo / path
        has = _git(checkout, "cat-file", "-e", f"{commit}^{{commit}}") if (checkout / ".git").exists() else None
        if has is None or has.returncode != 0:
            findings.append(Finding(_relative(tree, where), "SubmoduleMissing",
                                    f"submodule {where} at {commit[:12]} is not checked out here, so it is left empty "
                                    "(git submodule update --init)"))
            continue
        _archive(checkout, commit, into, tree, where + "/", findings)


def export(tree: WorkTree, sha: str, into: Path, findings: list[Finding] | None = None) -> Path | None:
    """Write the files of commit ``sha`` (submodules' content included) under ``into``; the
    project's folder there, or None when the project did not exist at that revision. What the
    export could not do as the revision says is appended to ``findings``."""
    _archive(tree.top, sha, into, tree, "", findings if findings is not None else [])
    project = into / tree.subdir if tree.subdir else into
    return project if project.is_dir() else None


def outside_links(tree: WorkTree) -> list[Finding]:
    """The tracked symlinks of the working tree whose target leaves the repository."""
    staged = _git(tree.top, "ls-files", "-s", "-z")
    found = []
    for entry in staged.stdout.split(b"\0"):
        meta, _, raw = entry.partition(b"\t")
        if not meta.startswith(b"120000 "):
            continue
        name = os.fsdecode(raw)
        path = tree.top / name
        if not path.is_symlink():
            continue
        target = os.readlink(path)
        resolved = os.path.normpath(path.parent / target)
        if (os.path.isabs(target) or not resolved.startswith(str(tree.top) + os.sep)) and _in_project(tree, name):
            found.append(Finding(_relative(tree, name), "SymlinkOutside",
                                 f"symlink {name} points outside the repository ({target}): both revisions read what it points to"))
    return found


# Ignored folders no project code reads as its data, left out of the copy: version control, caches,
# package build output. A virtual environment (a folder holding ``pyvenv.cfg``) is left out too.
_NOT_DATA = frozenset({".git", "__pycache__", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox",
                       ".nox", ".hypothesis", ".crux", "build", "dist"})


def _is_data(path: Path) -> bool:
    name = path.name
    if name in _NOT_DATA or name.endswith((".egg-info", ".pyc")):
        return False
    return not (path.is_dir() and (path / "pyvenv.cfg").is_file())


def ignored_files(tree: WorkTree) -> list[str]:
    """The files and folders of the project folder that git ignores and that may be the project's
    data (relative to the project folder; folders end with ``/``)."""
    where = ["--", tree.subdir] if tree.subdir else []
    listed = _git(tree.top, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", *where)
    if listed.returncode != 0:
        return []
    prefix = tree.subdir + "/" if tree.subdir else ""
    kept = []
    for name in _names(listed.stdout):
        relative = name[len(prefix):] if name.startswith(prefix) else None
        if not relative:
            continue
        parts = PurePosixPath(relative).parts
        if all(_is_data(tree.top / prefix / Path(*parts[: i + 1])) for i in range(len(parts))):
            kept.append(relative)
    return kept


def copy_ignored(tree: WorkTree, project: Path, into: Path) -> None:
    """Copy the working tree's ignored data (``ignored_files``) from ``project`` into the exported
    project folder ``into``, so both revisions read the same local data (copies: the working
    tree's own files are never written by the other revision's code)."""
    for name in ignored_files(tree):
        source, target = project / name, into / name
        if source.is_symlink() or not source.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True,
                            ignore=lambda folder, names: [n for n in names if not _is_data(Path(folder) / n)])
        else:
            shutil.copy2(source, target)
