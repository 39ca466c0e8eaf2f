"""Links outside the namespace's hosts, misleading links, and executable HTML outside code samples."""

from __future__ import annotations

import pytest

from tests.safety.helpers import described


def test_outside_hosts_are_low_and_allowed_reserved_and_loopback_hosts_are_not_reported() -> None:
    text = "see https://evil.example-cdn.net/x, https://docs.evergreen.example.com/a and http://127.0.0.1:8000/"
    assert described(text) == [("link.external", "low", "https://evil.example-cdn.net/x")]
    assert described("https://pypi.org/project/httpx/", hosts=("pypi.org",)) == []


@pytest.mark.parametrize(
    "url",
    [
        "https://bit.ly/3xYzAbC",
        "http://185.199.110.153/sdk.tar.gz",
        "https://evergreen.example.com@login-verify.co/session",
        "https://xn--evrgreen-c2a.com/api",
        "https://webhook.site/5c2a1f0e",
        "https://stats.example-cdn.net/p?q={conversation}",
    ],
)
def test_links_shaped_to_hide_or_carry_data_are_medium(url: str) -> None:
    assert ("link.suspicious", "medium", url) in described(f"go to {url} now")


def test_link_text_showing_another_host_is_misleading() -> None:
    text = "[evergreen.example.com/docs](https://evergreen-docs.help/p)"
    assert ("link.misleading", "medium", text) in described(text)


@pytest.mark.parametrize(
    ("text", "code", "evidence"),
    [
        ("x <script>alert(1)</script> y", "html.script", "<script>alert(1)</script>"),
        ("<img src=x onerror=alert(1)>", "html.event_handler", "<img src=x onerror=alert(1)>"),
        ("<svg onload=alert(1)>", "html.event_handler", "<svg onload=alert(1)>"),
        ("[x](javascript:alert(1))", "html.javascript_url", "javascript:alert(1))"),
        ('<a href="jav&#x61;script:alert(1)">x</a>', "html.javascript_url", "jav&#x61;script:alert(1)"),
        (
            '<iframe src="https://evergreen.example.com/e"></iframe>',
            "html.embedded_frame",
            '<iframe src="https://evergreen.example.com/e">',
        ),
        ('<form action="/x">', "html.form", '<form action="/x">'),
        (
            '<meta http-equiv="refresh" content="0;url=/x">',
            "html.meta_refresh",
            '<meta http-equiv="refresh" content="0;url=/x">',
        ),
    ],
)
def test_executable_html_is_high(text: str, code: str, evidence: str) -> None:
    assert (code, "high", evidence) in described(text)


def test_html_in_code_samples_and_the_word_javascript_in_prose_are_not_executable() -> None:
    assert described('In pages we embed JSON-LD in a `<script type="application/ld+json">` block.') == []
    assert described("```html\n<script>alert(1)</script>\n```") == []
    assert described("JavaScript: 用 fetch 调用接口") == []
