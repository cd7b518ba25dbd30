"""What each token figure of a contributor counts, in the words every front end puts beside it.

One contributor honestly has several sizes, and a page shows several of them at once:

- ``FULL_TEXT``: its resolved text alone, before planning (the Contributors list, a dropped part);
- ``AS_SENT``: the block the planner chose for it, as the request carries it (the sent breakdown);
- ``WITH_TOOLS``: that text with the schemas of the tools only it offers, which leave the request
  with it; the planner weighs this to choose a rung (an adaptation's "full -> sent", a rung's own size);
- ``WHOLE_REQUEST``: the request's input tokens had that rung been chosen (a candidate's figure).

They differ by design (the catalog: 5,279 full text, 5,345 with its tool, 189 as sent, a request of
7,307 with it in full): a figure without its label reads as a contradiction, so none is shown bare.
"""

from __future__ import annotations

FULL_TEXT = "full text"
AS_SENT = "as sent"
WITH_TOOLS = "text + its tools"
WHOLE_REQUEST = "whole request"

COUNT_LABELS = {"full_text": FULL_TEXT, "as_sent": AS_SENT, "with_tools": WITH_TOOLS, "whole_request": WHOLE_REQUEST}

__all__ = ["AS_SENT", "COUNT_LABELS", "FULL_TEXT", "WHOLE_REQUEST", "WITH_TOOLS"]
