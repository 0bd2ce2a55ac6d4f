"""POST /markdown and /markdown/raw: GitHub-flavoured markdown as HTML, through PyGithub."""

from __future__ import annotations

from typing import Any

GH = Any  # conftest.GH


def test_render_markdown__gfm_with_context_links_issues_and_people(gh: GH) -> None:
    repo = gh.client.get_repo("acme/orders")
    html = gh.client.render_markdown(
        "### Hello\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n~~old~~ see #1, @laura", repo
    )
    assert "<h3>Hello</h3>" in html and "<table>" in html and "<s>old</s>" in html
    assert f'href="{gh.url}/acme/orders/issues/1"' in html and f'href="{gh.url}/laura"' in html


def test_markdown__raw_and_errors(gh: GH) -> None:
    raw = gh.raw(
        "POST",
        "/markdown/raw",
        content=b"**bold** <script>x</script>",
        headers={"Content-Type": "text/plain"},
    )
    assert raw.status_code == 200 and raw.headers["content-type"].startswith("text/html")
    assert "<strong>bold</strong>" in raw.text and "<script>" not in raw.text
    missing = gh.raw("POST", "/markdown", json={"mode": "gfm"})
    assert missing.status_code == 422 and '"text" wasn\'t supplied.' in missing.json()["message"]
