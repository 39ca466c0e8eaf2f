"""Debian's Chromium driven by Playwright: never a downloaded browser (see README, "Tests")."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.db import connections

from tests.services import missing

CHROMIUM = Path(os.environ.get("EVERGREEN_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}  # an iPhone 12-15's CSS pixels


def chromium_page(viewport: dict[str, int] | None = None) -> Iterator[Any]:
    """A fresh page in a fresh browser; skips (or fails under EVERGREEN_REQUIRE_SERVICES=1) without Chromium."""
    if not CHROMIUM.exists():
        missing(f"needs Chromium at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread while the test touches the ORM.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport=viewport or DESKTOP)  # type: ignore[arg-type]  # a ViewportSize
                page.set_default_timeout(20_000)
                yield page
            finally:
                # While Playwright's loop runs, asgiref gives ORM calls made here their own connections;
                # close them in the same context, or they keep the test database busy at teardown.
                connections.close_all()
                browser.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


def sideways_overflow(page: Any) -> int:
    """How many CSS pixels the page is wider than the window (0: nothing to scroll sideways)."""
    return int(page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth"))


PASSWORD = "correct horse battery staple"  # every factory user's (tests/factories.py)


def admin_log_in(page: Any, base: str, username: str, password: str = PASSWORD) -> None:
    """Log in to the admin as `username`, from a clean cookie jar."""
    page.context.clear_cookies()
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_selector("#site-name")
