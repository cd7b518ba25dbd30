"""Build hook: put htmx and its SSE extension into static/vendor before a wheel is built.

The web inspector never loads scripts from a CDN, and the two files are not kept in git: they come
from the npm registry at the versions package-lock.json pins. When static/vendor lacks them, this
hook copies them from node_modules/, running ``npm ci`` first if node_modules/ lacks them too. A
regular wheel without them would install a `serve` that cannot start, so without npm the build
fails with a message that says what to install. An editable install only warns: the checkout's
own set-up (``bash .ci/setup``) fetches the files.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

# file in static/vendor -> where npm puts it
VENDORED = {
    "htmx.min.js": Path("node_modules/htmx.org/dist/htmx.min.js"),
    "sse.min.js": Path("node_modules/htmx-ext-sse/dist/sse.min.js"),
}


class VendorAssetsError(RuntimeError):
    """The front-end files could not be fetched; the message says what to do."""


def missing_vendor_files(root: Path) -> list[str]:
    vendor = root / "static" / "vendor"
    return [name for name in VENDORED if not (vendor / name).is_file()]


def run_npm_ci(root: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise VendorAssetsError(
            "crux-devtools: building the wheel needs npm (Node.js) to fetch the web inspector's "
            "front-end files (htmx.min.js, sse.min.js; versions pinned in package-lock.json), and npm "
            "is not on PATH. Install Node.js/npm and build again, or install a wheel that was built "
            "where npm was available."
        )
    if not (root / "package-lock.json").is_file():
        raise VendorAssetsError(f"crux-devtools: {root / 'package-lock.json'} is missing, so the front-end files cannot be fetched")
    done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=root, capture_output=True, text=True)
    if done.returncode != 0:
        raise VendorAssetsError(
            f"crux-devtools: `npm ci` failed (exit {done.returncode}) while fetching the front-end files:\n"
            f"{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )


def vendor_assets(root: Path) -> list[str]:
    """Copy the missing files into static/vendor (npm ci when needed); returns the names copied."""
    missing = missing_vendor_files(root)
    if not missing:
        return []
    if any(not (root / VENDORED[name]).is_file() for name in missing):
        run_npm_ci(root)
    vendor = root / "static" / "vendor"
    vendor.mkdir(parents=True, exist_ok=True)
    for name in missing:
        source = root / VENDORED[name]
        if not source.is_file():
            raise VendorAssetsError(f"crux-devtools: `npm ci` ran but did not produce {VENDORED[name]}")
        shutil.copyfile(source, vendor / name)
    return missing


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        try:
            copied = vendor_assets(root)
        except VendorAssetsError as error:
            if version == "editable":
                print(f"warning: {error}\n(the editable install goes on; `bash .ci/setup` fetches the files)", file=sys.stderr)
                return
            raise
        if copied:
            print(f"crux-devtools: vendored {', '.join(copied)} into static/vendor", file=sys.stderr)
