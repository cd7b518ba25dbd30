"""``inspect``, ``check``, ``serve`` and ``tui`` write nothing: inside the worker, the application's
own recording (``record_runs``, ``record_call``, ``CRUX_DEVTOOLS_RECORD``) and span export
(``emit_otel``) are off, and only the inspector's own Run is recorded.

A real ``ProjectSession`` loads a project that turns all of them on at import, as an application's
entry module does; the runs file is read back with ``RunStore``, the spans from the file the
project's exporter writes.
"""

from __future__ import annotations

from pathlib import Path

from crux_devtools.core.record.runstore import RunStore
from crux_devtools.inspector.session.service import ProjectSession

APP = """
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from crux_devtools import ScriptedModel, emit_otel, generate, prompt, record_call, record_runs


class ToFile(SpanExporter):
    def export(self, spans):
        with open({spans!r}, "a") as out:
            out.write("".join(span.name + "\\n" for span in spans))
        return SpanExportResult.SUCCESS


provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(ToFile()))
emitter = emit_otel(provider)
recorder = record_runs({root!r})
app = prompt("app", system="Hi.", prompt="hi", model=ScriptedModel(["one", "two", "three"]), examples={{"one": {{}}}})
generate(app)
with record_call(app, dir={root!r}):
    pass
with open({note!r}, "w") as out:
    out.write(repr(recorder))
"""


async def test_recording_and_span_export_in_the_project_write_nothing_while_it_is_inspected(tmp_path: Path) -> None:
    root, spans, note = tmp_path / "project", tmp_path / "spans.txt", tmp_path / "recorder.txt"
    root.mkdir()
    (root / "app.py").write_text(APP.format(root=str(root), spans=str(spans), note=str(note)), encoding="utf-8")
    async with ProjectSession(root, watch=False, history=False, prewarm=False) as session:
        assert session.report is not None and not session.report["errors"], session.report["errors"] if session.report else None
        await session.evaluate("app", example="one")
        assert not (root / ".crux" / "runs.sqlite3").exists()  # the import's generate and record_call wrote nothing
        run = await session.run("app", example="one", confirm=True)
    assert run["status"] == "ok", run
    with RunStore.for_project(root, create=False) as store:
        origins = [r["origin"] for r in store.list(limit=10)]
    assert origins == ["inspector"]  # the Run, and only the Run
    assert not spans.exists()
    assert "off (recording is off inside the crux-devtools worker" in note.read_text()
