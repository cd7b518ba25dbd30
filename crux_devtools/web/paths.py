"""Where the templates and static files are: inside the installed wheel, else the repository."""

from __future__ import annotations

from pathlib import Path

import crux_devtools

VENDOR_FILES = ("htmx.min.js", "sse.min.js")


def package_dir() -> Path:
    return Path(crux_devtools.__file__).resolve().parent


def asset_dir(name: str) -> Path:
    """``crux_devtools/<name>`` in a wheel install, ``<repo>/<name>`` in a source checkout."""
    package = package_dir()
    for candidate in (package / name, package.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"cannot find the {name!r} folder of crux_devtools (looked in {package} and {package.parent})")


def vendor_missing() -> list[str]:
    """Front-end files (htmx and its SSE extension) that this installation lacks."""
    try:
        vendor = asset_dir("static") / "vendor"
    except FileNotFoundError:
        return list(VENDOR_FILES)
    return [name for name in VENDOR_FILES if not (vendor / name).is_file()]


def is_source_checkout() -> bool:
    """True when crux_devtools runs from a clone of its repository (an editable install)."""
    root = package_dir().parent
    return (root / "pyproject.toml").is_file() and (root / ".ci" / "setup").is_file()


def vendor_missing_message(missing: list[str]) -> str:
    """What to do about missing front-end files, for a clone or for an installed package."""
    files = ", ".join(missing)
    if is_source_checkout():
        return (
            f"front-end files missing from static/vendor: {files}. Run `bash .ci/setup` in "
            f"{package_dir().parent} (it fetches them with npm ci) first."
        )
    return (
        f"this installation of crux-devtools ({package_dir()}) lacks its front-end files ({files}): "
        "the wheel was built without npm. Reinstall from a wheel built where Node.js/npm is available "
        "(`pip install <checkout>` or `python -m build` in a checkout fetches them), then run serve again."
    )
