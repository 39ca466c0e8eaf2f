"""The one Markdown renderer of pages and previews: sanitised, and nothing in it loads from another host."""

from __future__ import annotations

import pytest

from knowledge.retrieval.render.safe_html import is_site_path, markdown_to_safe_html

REMOTE = "https://tracker.example/p.png?reader=1"


def test_a_remote_markdown_image_becomes_a_plain_link() -> None:
    html = markdown_to_safe_html(f"Before ![the chart]({REMOTE}) after")

    assert "<img" not in html
    assert '<a href="https://tracker.example/p.png?reader=1" rel="noopener noreferrer">the chart</a>' in html
    assert "Before" in html and "after" in html


def test_a_remote_image_without_alt_text_links_its_address() -> None:
    assert f">{REMOTE.replace('&', '&amp;')}</a>" in markdown_to_safe_html(f"![]({REMOTE})")


@pytest.mark.parametrize(
    "source",
    [
        "data:image/png;base64,iVBORw0KGgo=",
        "//tracker.example/p.png",
        "/\\tracker.example/p.png",
        "javascript:alert(1)",
        "ftp://tracker.example/p.png",
        "%09//tracker.example/p.png",
    ],
)
def test_other_image_sources_keep_only_their_alt_text(source: str) -> None:
    html = markdown_to_safe_html(f"![alt text]({source})")

    assert "<img" not in html
    assert "tracker.example" not in html or "<a " not in html
    assert "alt text" in html


@pytest.mark.parametrize(
    "raw",
    [
        f'<img src="{REMOTE}" alt="x">',
        '<img src="//tracker.example/p.png">',
        '<img src=" https://tracker.example/p.png">',
        '<img src="/ok.png" srcset="https://tracker.example/p.png 2x">',
        '<video poster="https://tracker.example/p.png"></video>',
        '<p style="background: url(https://tracker.example/p.png)">x</p>',
        '<link rel="stylesheet" href="https://tracker.example/s.css">',
        '<iframe src="https://tracker.example/"></iframe>',
    ],
)
def test_raw_html_loads_nothing_from_another_host(raw: str) -> None:
    html = markdown_to_safe_html(f"Text\n\n{raw}\n")

    assert "tracker.example" not in html


def test_images_on_this_site_stay() -> None:
    html = markdown_to_safe_html('![logo](/static/logo.png "Logo") and ![diagram](../media/d.svg)')

    assert '<img alt="logo" src="/static/logo.png" title="Logo">' in html
    assert '<img alt="diagram" src="../media/d.svg">' in html


def test_scripts_and_handlers_are_still_removed() -> None:
    html = markdown_to_safe_html('<script>alert(1)</script><a href="#" onclick="x()">a</a>\n\n| a |\n|---|\n| b |')

    assert "script" not in html and "onclick" not in html
    assert "<table>" in html


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("/static/x.png", True),
        ("img/x.png", True),
        ("./x.png", True),
        ("../x.png", True),
        ("//evil.example/x.png", False),
        ("/\\evil.example/x.png", False),
        ("\\\\evil.example/x.png", False),
        ("https://evil.example/x.png", False),
        ("HTTP://evil.example/x.png", False),
        ("data:image/png;base64,AA", False),
        ("/\t/evil.example/x.png", False),
        ("", False),
        (" /x.png", False),
    ],
)
def test_what_counts_as_a_path_on_this_site(url: str, local: bool) -> None:
    assert is_site_path(url) is local
