"""The page's look of each rung, generated from the rung vocabulary (``core/plan/rungs.py``).

``/rungs.css`` sets one ``--rung-<name>`` colour variable per rung and the class ``rung-<name>``
that picks it (``app.css`` draws every ``.rung`` chip from ``--rung``), so a new rung kind gets its
colour on every page without a stylesheet edit. The Jinja globals give a rung's tag and its
"sent in place of ..." sentence, both written by the vocabulary.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response
from markupsafe import Markup, escape

from ..core.plan import rungs

router = APIRouter()


def rung_css() -> str:
    """``:root`` colour variables and one class per rung, in the vocabulary's order."""
    terms = list(rungs.RUNG_TERMS.values())
    variables = "".join(f"  --rung-{t.name}: {t.web_colour};\n" for t in terms)
    classes = "".join(f".rung-{t.name} {{ --rung: var(--rung-{t.name}); }}\n" for t in terms)
    return f"/* generated from crux_devtools/core/plan/rungs.py */\n:root {{\n{variables}}}\n{classes}"


@router.get("/rungs.css", include_in_schema=False)
async def rungs_stylesheet() -> Response:
    return Response(rung_css(), media_type="text/css", headers={"Cache-Control": "no-cache"})


def _mono(value: str) -> str:
    return f'<span class="mono">{escape(value)}</span>'


def rung_in_place(name: str | None, *, source: str, variant: str | None = None, handle: str | None = None) -> Markup:
    """The vocabulary's sentence for a part sent at rung ``name``, its values in monospace (escaped)."""
    return Markup(rungs.in_place(name, source=source, variant=variant, handle=handle, mark=_mono))


def register(globals_: dict[str, object]) -> None:
    """The rung words every template reads (labels, descriptions, tags, sentences)."""
    globals_["rung_label"] = rungs.label
    globals_["rung_description"] = rungs.description
    globals_["rung_sent_as"] = rungs.sent_as
    globals_["rung_in_place"] = rung_in_place
