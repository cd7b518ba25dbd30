"""CI: the package as a user installs it.

Copies the repository's files (what git tracks or would track; no .venv, node_modules or
static/vendor) to a temporary folder, builds the sdist and the wheel there with ``python -m build``,
installs the wheel into a fresh virtual environment outside the repository, starts
``crux-devtools serve`` on the copied sample project from that environment, fetches the list page
and htmx, and stops it. Exit status 0 when all of that works; otherwise a message says which step
failed. Usage: ``.venv/bin/python .ci/check_wheel.py [--keep]``.

With ``CRUX_WHEEL_RECORD=FILE`` (``.ci/run`` sets it), a check that passes writes FILE: a digest of
every copied file's name and bytes, and what the check printed. A later check with the same FILE
whose files have the same digest prints that again instead of building once more: the suite's
``test_packaging.py`` runs this script, so CI would otherwise build, install and serve the same
files twice. Any difference in the files (or no FILE) and the check runs in full.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import venv
import zipfile
from typing import NoReturn
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VENDORED = ("crux_devtools/static/vendor/htmx.min.js", "crux_devtools/static/vendor/sse.min.js")
STEP_BOUND = 600  # seconds: bounds a step that hangs, never paces one that works


def fail(step: str, detail: str) -> NoReturn:
    print(f"check_wheel: {step} failed\n{detail[-4000:]}", file=sys.stderr)
    raise SystemExit(1)


def run(step: str, args: list[str], **kwargs: object) -> str:
    done = subprocess.run(args, capture_output=True, text=True, timeout=STEP_BOUND, **kwargs)  # type: ignore[call-overload]
    if done.returncode != 0:
        fail(step, done.stdout + done.stderr)
    return str(done.stdout)


def tree_files() -> list[str]:
    """The working tree's files as a fresh clone would have them (plus files not yet committed)."""
    listed = run("git ls-files", ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"])
    return [name for name in sorted(set(filter(None, listed.split("\0")))) if (REPO / name).is_file()]


def clean_copy(names: list[str], dest: Path) -> None:
    for name in names:
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, target)


def digest(names: list[str]) -> str:
    """What the check is a verdict on: every copied file's name and bytes, and this interpreter."""
    summed = hashlib.sha256(sys.version.encode())
    for name in names:
        summed.update(b"\0" + name.encode() + b"\0" + (REPO / name).read_bytes())
    return summed.hexdigest()


def recorded(record: Path, files: str) -> list[str] | None:
    """The lines a passing check of these same files printed, if ``record`` holds them."""
    try:
        saved = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(saved, dict) or saved.get("files") != files or not isinstance(saved.get("lines"), list):
        return None
    return [str(line) for line in saved["lines"]]


def say(lines: list[str], line: str) -> None:
    lines.append(line)
    print(line)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fetch(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=60) as response:
        return int(response.status), bytes(response.read())


def serve_and_fetch(exe: Path, project: Path, cwd: Path) -> str:
    port = free_port()
    proc = subprocess.Popen(
        [str(exe), "serve", str(project), "--no-open", "--port", str(port)],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    lines: list[str] = []
    try:
        url = None
        for line in proc.stdout:  # ends when serve exits; a hang is bounded by the CI job
            lines.append(line)
            found = re.search(r"Serving at (http://\S+)", line)
            if found:
                url = found.group(1).rstrip("/")
                break
        if url is None:
            fail("serve from the installed wheel", "".join(lines))
        deadline = time.monotonic() + STEP_BOUND
        while True:
            try:
                status, page = fetch(url + "/")
                break
            except OSError as error:  # uvicorn prints the URL just before it accepts connections
                if time.monotonic() > deadline or proc.poll() is not None:
                    fail("GET / from the installed wheel", f"{error}\n{''.join(lines)}")
                time.sleep(0.1)
        if status != 200 or b"support-reply" not in page:
            fail("GET /", f"status {status}\n{page[:2000]!r}")
        for asset in ("htmx.min.js", "sse.min.js"):
            status, body = fetch(f"{url}/static/vendor/{asset}")
            if status != 200 or len(body) < 1000:
                fail(f"GET /static/vendor/{asset}", f"status {status}, {len(body)} bytes")
        return f"check_wheel: serve from the installed wheel answered / and /static/vendor/htmx.min.js at {url}"
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=STEP_BOUND)
        except subprocess.TimeoutExpired:
            proc.kill()


def main() -> None:
    keep = "--keep" in sys.argv
    record = Path(os.environ["CRUX_WHEEL_RECORD"]) if os.environ.get("CRUX_WHEEL_RECORD") else None
    names = tree_files()
    files = digest(names)
    if record is not None and not keep:
        earlier = recorded(record, files)
        if earlier is not None:
            print("\n".join(earlier))
            print(f"check_wheel: these files passed this check earlier in this run ({record})")
            return
    lines: list[str] = []
    tmp = Path(tempfile.mkdtemp(prefix="crux-wheel-"))
    try:
        src, dist, env_dir = tmp / "src", tmp / "dist", tmp / "venv"
        clean_copy(names, src)
        if (src / "static" / "vendor").exists() or (src / "node_modules").exists():
            fail("clean copy", "the copy holds static/vendor or node_modules: they must come from the build")
        # --no-isolation: the build tools (hatchling, build) are this venv's; the hook runs npm ci.
        run("python -m build", [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(src)])
        wheels = list(dist.glob("crux_devtools-*.whl"))
        if len(wheels) != 1:
            fail("python -m build", f"expected one wheel in {dist}, found {wheels}")
        inside = set(zipfile.ZipFile(wheels[0]).namelist())
        for needed in ("crux_devtools/py.typed", "crux_devtools/templates/base.html", "crux_devtools/static/app.js", *VENDORED,
                       "crux_devtools/skills/crux-devtools/SKILL.md"):  # the agent skill, beside the MCP server
            if needed not in inside:
                fail("the wheel's contents", f"{wheels[0].name} lacks {needed}")
        # The fresh environment gets no pip of its own: this venv's pip installs into it (``--python``
        # runs pip with the fresh environment's interpreter, so the wheel and its dependencies land there
        # exactly as that environment's own pip would put them), without bytecode, which a user's first
        # import writes. Seeding pip and compiling every dependency cost most of this check's CPU.
        venv.EnvBuilder(with_pip=False).create(env_dir)
        py = env_dir / "bin" / "python"
        run("pip install the wheel", [sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-compile",
                                      "--disable-pip-version-check", str(wheels[0])], cwd=tmp)
        where = run("import the installed package", [str(py), "-c", "import crux_devtools; print(crux_devtools.__file__)"], cwd=tmp)
        if not Path(where.strip()).is_relative_to(env_dir):
            fail("import the installed package", f"crux_devtools came from {where.strip()}, not from {env_dir}")
        say(lines, serve_and_fetch(env_dir / "bin" / "crux-devtools", src / "sample_project", cwd=tmp))
        say(lines, f"check_wheel: ok ({wheels[0].name})")
        if record is not None:
            record.write_text(json.dumps({"files": files, "lines": lines}), encoding="utf-8")
    finally:
        if keep:
            print(f"check_wheel: kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
