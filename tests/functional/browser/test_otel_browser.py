"""A span exported by the real OpenTelemetry SDK appears on an open /runs page without a reload, with
its cost, in Debian's Chromium over the real project session."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from web_conftest_helpers import LiveServer, live_server, new_page, require_browser

from crux_devtools.core.record import otel_semconv as sc
from crux_devtools.web.app import create_app

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    require_browser()
    from crux_devtools.inspector.session.service import ProjectSession

    project = tmp_path / "sample"
    shutil.copytree(REPO / "sample_project", project, ignore=shutil.ignore_patterns("data", "__pycache__", ".crux"))
    with (project / "pyproject.toml").open("a", encoding="utf-8") as f:
        f.write("\n[tool.crux-devtools.models.gpt-4o-mini]\ncontext_window = 128000\ninput_price = 0.15\noutput_price = 0.60\n")
    with live_server(create_app(ProjectSession(project, history=False))) as srv:
        yield srv


async def test_an_exported_span_appears_live_on_the_runs_page_with_its_cost(server: LiveServer, browser: Any) -> None:
    tracer_provider = TracerProvider(resource=Resource.create({"service.name": "billing-app"}))
    tracer_provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{server.url}/v1/traces", timeout=30)))
    tracer = tracer_provider.get_tracer("test")
    async with new_page(browser) as page:
        await page.goto(server.url + "/runs")
        await page.wait_for_selector("#live-status[data-state='live']")
        with tracer.start_as_current_span("chat gpt-4o-mini") as span:
            span.set_attributes({
                sc.OPERATION_NAME: "chat", sc.REQUEST_MODEL: "gpt-4o-mini", sc.USAGE_INPUT_TOKENS: 2_000, sc.USAGE_OUTPUT_TOKENS: 500,
                sc.OUTPUT_MESSAGES: json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "<b>Paid once.</b>"}]}]),
            })
            ids = span.get_span_context()
        row = page.locator(f"tr.run-row[data-id='otel-{ids.trace_id:032x}-{ids.span_id:016x}']")
        await row.wait_for(timeout=60_000)
        assert "billing-app" in await row.inner_text() and "otel" in await row.inner_text()
        assert (await row.locator(".run-cost").inner_text()).strip() == f"${(2_000 * 0.15 + 500 * 0.60) / 1e6:.4g}"
        assert "<b>Paid once.</b>" in await row.locator(".run-preview").inner_text()  # shown as text, never as markup
    tracer_provider.shutdown()
