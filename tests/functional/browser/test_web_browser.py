"""The web inspector in a real Chromium (Playwright, async API) over a real project session.

The sample project is copied to a temporary folder, served by uvicorn on 127.0.0.1 with the real
``ProjectSession`` (worker process, file watching), and driven like a person would.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any
from pathlib import Path

import pytest
from web_conftest_helpers import LiveServer, new_page, project_server

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]
REPO = Path(__file__).resolve().parents[3]

XSS_MODULE = '''
from crux_devtools import context, prompt

payload = context("payload", system='<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">')
xss_probe = prompt(
    "xss-probe",
    system="Show <b>this</b> literally.",
    use=[payload],
    prompt="<script>window.__xss = 3</script>",
    examples={"only": {}},
)
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("browser") / "sample"
    shutil.copytree(REPO / "sample_project", root, ignore=shutil.ignore_patterns("data", "__pycache__", ".crux"))
    (root / "zz_xss.py").write_text(XSS_MODULE)
    return root


@pytest.fixture(scope="module")
def server(project: Path) -> Iterator[LiveServer]:
    with project_server(project) as srv:
        yield srv


async def test_the_sample_project_opens_and_an_example_can_be_picked(server: LiveServer, browser: Any) -> None:
    async with new_page(browser) as page:
        await page.goto(server.url + "/")
        await page.click("a[href='/prompts/support-reply']")
        await page.wait_for_selector("#sent-system")
        assert await page.locator(".part[data-source='account']").count() == 1  # signed-in example
        await page.select_option("#example", "anonymous")
        await page.wait_for_selector("#report[data-example='anonymous']")
        assert "example=anonymous" in page.url
        assert await page.locator(".part[data-source='account']").count() == 0
        assert "account" in await page.locator("#excluded").inner_text()


async def test_moving_the_budget_shows_a_context_drop(server: LiveServer, browser: Any) -> None:
    async with new_page(browser) as page:
        await page.goto(server.url + "/prompts/support-reply?example=signed-in")
        await page.wait_for_selector("#sent-system")
        assert await page.locator("#dropped").count() == 0
        await page.locator("#budget-range").fill("60")
        await page.wait_for_selector("#report[data-budget='60']")
        dropped = await page.locator("#dropped").inner_text()
        assert "product-facts" in dropped
        assert "product-facts" in await page.locator("#not-sent").inner_text()  # dropped means not sent
        assert await page.locator("#sent-system .part[data-source='product-facts']").count() == 0
        await page.click("#tab-resolved")
        await page.wait_for_selector("#report[data-view='resolved']")
        assert await page.locator(".seg-dropped").count() >= 1
        assert await page.input_value("#budget-number") == "60"
        assert "budget=60" in page.url


async def test_saving_a_file_updates_the_page_and_keeps_example_budget_and_scroll(server: LiveServer, browser: Any, project: Path) -> None:
    async with new_page(browser, height=600) as page:
        await page.goto(server.url + "/prompts/support-reply?example=anonymous&budget=100")
        await page.wait_for_selector("#live-status[data-state='live']")
        await page.evaluate("window.scrollTo(0, 250)")
        scroll = await page.evaluate("window.scrollY")
        source = project / "01_contexts.py"
        source.write_text(source.read_text().replace("support agent for Nimbus", "support agent for Nimbus Cloud (edited)"))
        # a locator wait: the page's Content-Security-Policy forbids the string eval of wait_for_function
        await page.locator("#sent-system").get_by_text("(edited)").first.wait_for()
        assert await page.locator("#report").get_attribute("data-example") == "anonymous"
        assert await page.locator("#report").get_attribute("data-budget") == "100"
        assert await page.input_value("#example") == "anonymous"
        assert "product-facts" in await page.locator("#dropped").inner_text()
        assert abs(await page.evaluate("window.scrollY") - scroll) < 2
        assert "(edited)" in await page.locator(".dl-add").first.inner_text()


async def test_the_ladders_lesson_shows_an_authored_alternative_a_summary_and_an_offload_preview_as_sent(server: LiveServer, browser: Any) -> None:
    """README tour, step 4, as a person does it."""
    async with new_page(browser, height=1180) as page:
        await page.goto(server.url + "/prompts/ladder-reply?example=big-catalog")
        await page.wait_for_selector("#sent-system")
        authored = page.locator("#sent-system .sent-part[data-source='catalog']")
        assert await authored.get_attribute("data-rung") == "authored"
        assert "authored: catalog-index" in await authored.locator(".part-label").inner_text()
        assert "## Product catalog (index)" in await authored.locator(".part-text").inner_text()
        planning = await page.locator("#planning").inner_text()
        assert "nimbus-local" in planning and "project default from pyproject.toml" in planning
        await page.select_option("#example", "busy-day")
        await page.wait_for_selector("#report[data-example='busy-day']")
        # generate prepares the log's extractive summary before sending (no model): so does the page
        log = page.locator("#sent-system .sent-part[data-source='sync-log']")
        assert await log.get_attribute("data-rung") == "summary"
        assert (await log.locator(".part-text").inner_text()).startswith("[summary of sync-log]")
        assert "prepared here without a model" in await log.locator(".part-detail").inner_text()
        assert "read_offload" not in await page.locator("#sent-tools").inner_text()
        # under 2,000 tokens the summary does not fit: the log goes as an offload preview with its handle
        await page.goto(server.url + "/prompts/ladder-reply?example=busy-day&budget=2000&budget_for=request")
        await page.wait_for_selector("#sent-system .sent-part[data-source='sync-log'][data-rung='offload']")
        assert (await log.locator(".handle").inner_text()).startswith("ofl_")
        assert "read_offload" in await page.locator("#sent-tools").inner_text()
        if os.environ.get("CRUX_UPDATE_SCREENSHOT") == "1":
            await page.evaluate("window.scrollTo(0, 0)")
            await page.screenshot(path=str(REPO / "docs" / "screenshot-web.png"))


async def test_an_xss_payload_in_a_prompt_stays_inert_text(server: LiveServer, browser: Any) -> None:
    async with new_page(browser) as page:
        dialogs: list[str] = []
        page.on("dialog", lambda d: dialogs.append(d.message))
        for view in ("sent", "resolved"):
            await page.goto(server.url + f"/prompts/xss-probe?view={view}")
            await page.wait_for_selector(f"#report[data-view='{view}']")
            system, prompt = ("#sent-system", "#sent-messages") if view == "sent" else ("#system-text", "#user-prompt")
            text = await page.locator(system).inner_text()
            assert '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">' in text
            assert "<script>window.__xss = 3</script>" in await page.locator(prompt).inner_text()
            assert await page.evaluate("typeof window.__xss") == "undefined"
            assert await page.locator(f"{system} img, {system} script, {system} b").count() == 0
        assert dialogs == []


async def test_running_an_agent_shows_each_step_and_the_answer(server: LiveServer, browser: Any) -> None:
    async with new_page(browser) as page:
        await page.goto(server.url + "/")
        runnable = page.locator("tr.prompt-row:has(.kind-run) a").first
        await runnable.click()
        await page.wait_for_selector("#sent-system")
        await page.click("button.run")
        await page.wait_for_selector("#run-output .step")
        text = await page.inner_text("#run-output")
        assert "STEP 0" in text.upper() and "receipt" in text


async def test_reloading_after_run_shows_the_prompt_page_not_a_missing_page(server: LiveServer, browser: Any) -> None:
    async with new_page(browser) as page:
        await page.goto(server.url + "/prompts/support-agent")
        await page.wait_for_selector("#sent-system")
        await page.click("button.run")
        await page.wait_for_selector("#run-output .step")
        assert not page.url.split("?")[0].endswith("/run"), page.url
        await page.reload()
        await page.wait_for_selector("#sent-system")
        assert "Not found" not in await page.title()
        assert await page.locator("h1").first.inner_text() == "support-agent"
