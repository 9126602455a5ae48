"""Take screenshots of the main pages in both languages with headless Chromium.

Usage: python scripts/screenshots.py BASE_URL OUT_DIR
Logs in as the demo sales engineer; writes configurator-<lang>[-<scenario>].png.
"""

import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def main(base: str, out: Path, pages: list[tuple[str, str]] | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    pages = pages or [("configurator", "/"), ("configurator-8p8d", "/?scenario=software-engineering-agent")]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        for lang in ("zh-hans", "en"):
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.goto(base + "/accounts/login/")
            page.fill("#id_username", "engineer")
            page.fill("#id_password", "demo-engineer-2026")
            page.click("button.primary")
            page.wait_for_load_state("networkidle")
            # The configurator's script first sends the configuration, then switches: wait for the switch.
            with page.expect_navigation():
                page.click(f"form.langswitch button[value='{lang}']")
            page.wait_for_load_state("networkidle")
            for name, path in pages:
                page.goto(base + path)
                page.wait_for_load_state("networkidle")
                page.screenshot(path=str(out / f"{name}-{lang}.png"), full_page=True)
            page.close()
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
