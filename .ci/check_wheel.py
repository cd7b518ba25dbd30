"""CI: the package as a user installs it.

Copies the repository's files (what git tracks or would track; no .venv, node_modules or
static/vendor) to a temporary folder, builds the sdist and the wheel there with ``python -m build``,
installs the wheel into a fresh virtual environment outside the repository, starts
``crux-devtools serve`` on the copied sample project from that environment, fetches the list page
and htmx, and stops it. Exit status 0 when all of that works; otherwise a message says which step
failed. Usage: ``.venv/bin/python .ci/check_wheel.py [--keep]``.
"""

from __future__ import annotations

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


def clean_copy(dest: Path) -> None:
    """The working tree's files as a fresh clone would have them (plus files not yet committed)."""
    listed = run("git ls-files", ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"])
    for name in sorted(set(filter(None, listed.split("\0")))):
        source = REPO / name
        if source.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fetch(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=60) as response:
        return int(response.status), bytes(response.read())


def serve_and_fetch(exe: Path, project: Path, cwd: Path) -> None:
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
        print(f"check_wheel: serve from the installed wheel answered / and /static/vendor/htmx.min.js at {url}")
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=STEP_BOUND)
        except subprocess.TimeoutExpired:
            proc.kill()


def main() -> None:
    keep = "--keep" in sys.argv
    tmp = Path(tempfile.mkdtemp(prefix="crux-wheel-"))
    try:
        src, dist, env_dir = tmp / "src", tmp / "dist", tmp / "venv"
        clean_copy(src)
        if (src / "static" / "vendor").exists() or (src / "node_modules").exists():
            fail("clean copy", "the copy holds static/vendor or node_modules: they must come from the build")
        # --no-isolation: the build tools (hatchling, build) are this venv's; the hook runs npm ci.
        run("python -m build", [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(src)])
        wheels = list(dist.glob("crux_devtools-*.whl"))
        if len(wheels) != 1:
            fail("python -m build", f"expected one wheel in {dist}, found {wheels}")
        names = set(zipfile.ZipFile(wheels[0]).namelist())
        for needed in ("crux_devtools/py.typed", "crux_devtools/templates/base.html", "crux_devtools/static/app.js", *VENDORED,
                       "crux_devtools/skills/crux-devtools/SKILL.md"):  # the agent skill, beside the MCP server
            if needed not in names:
                fail("the wheel's contents", f"{wheels[0].name} lacks {needed}")
        venv.EnvBuilder(with_pip=True).create(env_dir)
        py = env_dir / "bin" / "python"
        run("pip install the wheel", [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheels[0])], cwd=tmp)
        where = run("import the installed package", [str(py), "-c", "import crux_devtools; print(crux_devtools.__file__)"], cwd=tmp)
        if not Path(where.strip()).is_relative_to(env_dir):
            fail("import the installed package", f"crux_devtools came from {where.strip()}, not from {env_dir}")
        serve_and_fetch(env_dir / "bin" / "crux-devtools", src / "sample_project", cwd=tmp)
        print(f"check_wheel: ok ({wheels[0].name})")
    finally:
        if keep:
            print(f"check_wheel: kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
