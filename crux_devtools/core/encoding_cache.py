"""A local cache of tiktoken encoding tables, so a new process loads one in a fraction of the time.

tiktoken builds ``cl100k_base`` from a file of about 100,000 base64 lines. Decoding them takes about
200 ms of Python in every new process: the inspector's worker, each CLI run, each script that counts
tokens. The first load writes what the encoding's constructor returned (its name, pattern, ranks and
special tokens) with ``marshal``, which holds only bytes, ints and strings, so reading it back runs
no code. Later loads read that file in a few tens of milliseconds.

Where: ``$CRUX_DEVTOOLS_CACHE_DIR``, else ``$XDG_CACHE_HOME/crux-devtools``, else
``~/.cache/crux-devtools``. The file is keyed by the encoding name, tiktoken's version and the path,
size and modification time of the module that defines the encoding, so upgrading either package
rebuilds it; the key's digest is part of the file name, so several environments (virtualenvs,
worktrees) sharing one cache folder each keep their own file instead of overwriting one another's
(each overwrite made every other environment's next process load the table the slow way). Writing a
file removes those of other keys written more than ``STALE_DAYS`` ago (an environment that still
uses one writes it again on its next load). Any failure to read or write the cache falls back to tiktoken's own loading: the cache can make a
load faster, never different.

Never different, even when the file is damaged: it starts with a SHA-256 digest of the table, checked
before tiktoken sees a byte of it. One flipped bit could otherwise change a token's bytes (and so
counts, silently) or make tiktoken's Rust core panic; its ``PanicException`` derives from
``BaseException``, not ``Exception``, so building the encoding from the cache is guarded against it
too. A file that fails any check is replaced by a freshly built one.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import logging
import marshal
import os
import pkgutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

FORMAT = 2
ENV_DIR = "CRUX_DEVTOOLS_CACHE_DIR"
MAGIC = b"crux-devtools encoding cache 2\n"
DIGEST_SIZE = hashlib.sha256().digest_size
STALE_DAYS = 30

log = logging.getLogger("crux_devtools")


def cache_dir() -> Path:
    """Where encoding tables are cached (see the module docstring)."""
    explicit = os.environ.get(ENV_DIR)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "crux-devtools"


def _constructor(name: str) -> tuple[Callable[[], dict[str, Any]], str] | None:
    """The constructor tiktoken's plugin packages (``tiktoken_ext.*``) register for ``name``, and
    the file of the module that defines it."""
    try:
        import tiktoken_ext  # type: ignore[import-untyped]
    except ImportError:
        return None
    for info in pkgutil.iter_modules(tiktoken_ext.__path__, "tiktoken_ext."):
        try:
            module = importlib.import_module(info.name)
        except Exception:  # noqa: BLE001 - a broken plugin must not stop token counting
            continue
        constructors = getattr(module, "ENCODING_CONSTRUCTORS", None)
        if isinstance(constructors, dict) and name in constructors and getattr(module, "__file__", None):
            return constructors[name], str(module.__file__)
    return None


def cache_file(name: str, key: str) -> Path:
    """The cache file of encoding ``name`` built under ``key`` (see the module docstring)."""
    return cache_dir() / f"{name}-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:16]}.marshal"


def _prune(path: Path, name: str) -> None:
    """Remove the files of ``name`` under other keys written more than ``STALE_DAYS`` ago."""
    import time

    for other in path.parent.glob(f"{name}-*.marshal"):
        with contextlib.suppress(OSError):
            if other != path and time.time() - other.stat().st_mtime > STALE_DAYS * 86400:
                other.unlink()


def _key(name: str, source: str) -> str:
    import tiktoken

    stat = os.stat(source)
    return f"{FORMAT}|{name}|tiktoken {getattr(tiktoken, '__version__', '?')}|{source}|{stat.st_size}|{stat.st_mtime_ns}"


def _read(path: Path, key: str) -> dict[str, Any] | None:
    """The cached constructor arguments, or ``None`` when the file is missing, damaged or stale."""
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    head = len(MAGIC) + DIGEST_SIZE
    if not blob.startswith(MAGIC) or hashlib.sha256(blob[head:]).digest() != blob[len(MAGIC) : head]:
        return None
    try:
        data = marshal.loads(blob[head:])
    except (ValueError, EOFError, TypeError):
        return None
    if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("kwargs"), dict):
        return None
    return data["kwargs"]


def _write(path: Path, name: str, key: str, kwargs: dict[str, Any]) -> None:
    try:
        payload = marshal.dumps({"key": key, "kwargs": kwargs})
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(MAGIC + hashlib.sha256(payload).digest() + payload)
            os.replace(tmp, path)  # atomic: a concurrent reader sees the old file or the new one
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _prune(path, name)
    except (OSError, ValueError):
        pass  # an unwritable or full cache folder only costs speed


def _from_cache(tiktoken: Any, path: Path, key: str) -> Any | None:
    """The encoding built from the cache file, or ``None`` if the file cannot give a good one."""
    kwargs = _read(path, key)
    if kwargs is None:
        return None
    try:
        return tiktoken.Encoding(**kwargs)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - tiktoken's Rust core panics with a BaseException
        log.info("token-encoding cache %s was not usable (%s: %s); rebuilding it", path, type(exc).__name__, exc)
        return None


_loaded: dict[str, Any] = {}
_loaded_lock = threading.Lock()


def load_encoding(name: str) -> Any:
    """``tiktoken.get_encoding(name)``, through the table cache when the encoding comes from a
    tiktoken plugin package. Like tiktoken's registry, each encoding is built once per process."""
    with _loaded_lock:
        encoding = _loaded.get(name)
        if encoding is None:
            encoding = _loaded[name] = _build(name)
        return encoding


def _build(name: str) -> Any:
    import tiktoken

    found = _constructor(name)
    if found is None:
        return tiktoken.get_encoding(name)
    constructor, source = found
    try:
        key = _key(name, source)
    except OSError:
        return tiktoken.get_encoding(name)
    path = cache_file(name, key)
    cached = _from_cache(tiktoken, path, key)
    if cached is not None:
        return cached
    kwargs = constructor()  # tiktoken's own load; the file is rewritten from what it returns
    _write(path, name, key, kwargs)
    return tiktoken.Encoding(**kwargs)
