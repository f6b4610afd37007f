"""Headless Chromium for the page tests: Debian's chromium driven by playwright, never a browser download."""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"


def require_chromium() -> None:
    """Skip without Debian's chromium, except under CI, where `make test` installs it and its absence is a failure."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} missing: `make test` installs Debian's chromium")
        pytest.skip(f"{CHROMIUM} not installed (apt-get install -y chromium)")


@contextmanager
def browser_page(width: int = 1600, height: int = 1000) -> Iterator:
    """A fresh page in headless chromium; the browser is closed afterwards."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()


def fill_tool_form(page, tool: str, arguments: dict) -> None:
    """On the `evalsuite play` page, call a tool as a person would: open its section, type or pick each value,
    press its button."""
    details = page.locator(f"details:has(#tool-{tool})")
    if details.get_attribute("open") is None:
        details.locator("summary").click()
    form = page.locator(f"#tool-{tool}")
    for name, value in arguments.items():
        field = form.locator(f"[name='{name}']")
        if field.evaluate("e => e.tagName") == "SELECT":
            field.select_option(str(value))
        else:
            field.fill(str(value))
    form.get_by_role("button").click()
    page.wait_for_load_state()
