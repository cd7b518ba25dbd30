"""Where the templates and static files are: inside the installed wheel, else the repository."""

from __future__ import annotations

from pathlib import Path

import crux_devtools


def asset_dir(name: str) -> Path:
    """``crux_devtools/<name>`` in a wheel install, ``<repo>/<name>`` in a source checkout."""
    package = Path(crux_devtools.__file__).resolve().parent
    for candidate in (package / name, package.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"cannot find the {name!r} folder of crux_devtools (looked in {package} and {package.parent})")


def vendor_missing() -> list[str]:
    """Front-end files that set-up has not copied yet (``bash .ci/setup`` installs them)."""
    vendor = asset_dir("static") / "vendor"
    return [name for name in ("htmx.min.js", "sse.min.js") if not (vendor / name).is_file()]
