"""Content-Security-Policy on every HTML page, the public pages and the admin alike (issue 9).

Django 5.2 has no CSP support of its own. django-csp would bring nonces, but Evergreen's pages are
rendered once per release and replayed byte for byte (gateway.replay, ETags), so a per-response nonce
cannot appear in them; a fixed policy with the SHA-256 of each inline block does, and fits in this
module. The inline blocks live in their own template files, hashed here once per process; a test
checks that every inline <script> and <style> of every page is one of them.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from functools import cache
from typing import Final

from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

HEADER: Final = "Content-Security-Policy"
INLINE_SCRIPTS: Final = ("evergreen/playground.js",)
INLINE_STYLES: Final = ("evergreen/site.css", "evergreen/api_docs.css")


def inline_hash(text: str) -> str:
    """A CSP hash source for an inline block's exact text (CSP Level 3 §8.4)."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


@cache
def content_security_policy() -> str:
    """Everything from this origin only: no remote image (img-src 'self'), no inline code but the hashed blocks."""
    scripts = " ".join(inline_hash(render_to_string(name)) for name in INLINE_SCRIPTS)
    styles = " ".join(inline_hash(render_to_string(name)) for name in INLINE_STYLES)
    return "; ".join(
        (
            "default-src 'self'",
            f"script-src 'self' {scripts}",
            f"style-src 'self' {styles}",
            "img-src 'self'",
            "connect-src 'self'",
            "font-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        )
    )


class ContentSecurityPolicyMiddleware:
    """Adds the policy to every text/html response that has none (JSON, text and 304s need none)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if HEADER not in response and response.get("Content-Type", "").startswith("text/html"):
            response[HEADER] = content_security_policy()
        return response
