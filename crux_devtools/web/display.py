"""Text from the user's project made safe to send: valid UTF-8, and file names that round-trip.

A file whose name is not valid UTF-8 reaches Python as a ``str`` holding surrogate escapes
(``caf\\udce9.py``), and user code can put lone surrogates in any string; neither can be encoded as
UTF-8, so a page or a JSON body holding one would fail with a 500. Pages and JSON show such
characters as U+FFFD; links to a file carry its exact bytes, so ``/source`` opens the right file.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any
from urllib.parse import quote, unquote_to_bytes

from fastapi.responses import JSONResponse
from jinja2.filters import do_urlencode
from markupsafe import Markup

_SURROGATES = re.compile("[\ud800-\udfff]")


def displayable(text: str) -> str:
    """``text`` with every surrogate (an undecodable file-name byte, or a lone one) as U+FFFD."""
    if text.isascii():
        return text
    return _SURROGATES.sub("\ufffd", text)


def finalize(value: Any) -> Any:
    """Jinja's ``finalize``: every ``{{ ... }}`` output goes through here before escaping."""
    if isinstance(value, str) and not value.isascii() and _SURROGATES.search(value):
        cleaned = _SURROGATES.sub("\ufffd", value)
        return Markup(cleaned) if isinstance(value, Markup) else cleaned
    return value


def path_bytes(name: str) -> bytes:
    """The file-system bytes of a path name (surrogate escapes back to their bytes)."""
    try:
        return os.fsencode(name)
    except UnicodeEncodeError:  # a lone surrogate that is not an escaped byte: no file has it
        return name.encode("utf-8", "replace")


def url_quote(value: Any) -> str:
    """Jinja's ``urlencode``, safe with surrogates: a string is percent-encoded from its file-system
    bytes (what ``raw_query_value`` reads back); anything else goes to Jinja's own filter."""
    if isinstance(value, str):
        return quote(path_bytes(value), safe="/")
    return str(do_urlencode(value))


def raw_query_value(query_string: bytes, name: str) -> str | None:
    """Parameter ``name`` of a query string, decoded as a file name (``os.fsdecode``), so bytes that
    are not UTF-8 come back as the same surrogate escapes the file system gave us."""
    for pair in query_string.split(b"&"):
        key, _, value = pair.partition(b"=")
        if unquote_to_bytes(key.replace(b"+", b" ")) == name.encode():
            return os.fsdecode(unquote_to_bytes(value.replace(b"+", b" ")))
    return None


class SafeJSONResponse(JSONResponse):
    """JSON that always encodes: surrogates in report strings become U+FFFD."""

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":"))
        return displayable(text).encode("utf-8")
