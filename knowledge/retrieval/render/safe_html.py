"""Editor Markdown as safe HTML for every page that shows it: public entry/doc pages and the admin's previews.

nh3 removes scripts, handlers and unknown tags. Images are what is left that a browser fetches on its
own, so an image on another host (or a data: URI) would let an author track every reader, or exfiltrate
what a reviewer's browser can see, the moment a page or a preview opens (issue 9). Markdown images
whose source is not a path on this site become a plain link (remote) or their alt text (data: URIs);
raw-HTML images lose such a source. The pages' Content-Security-Policy (img-src 'self') is the second
line of defence.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Final

import markdown
import nh3
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor

EXTENSIONS: Final = ("tables", "fenced_code", "sane_lists")
# A path on this site: "/x" (not "//x" nor "/\x", which browsers read as another host), "./x", "../x", or
# a relative name without a colon (so without a scheme). Whitespace and controls never pass: browsers drop
# tabs and newlines inside URLs, which would turn "/\t/evil.example" into "//evil.example".
_SITE_PATH: Final = re.compile(r"(?:/(?![/\\])|\.{1,2}/|[A-Za-z0-9_~-])[^\s\\:\x00-\x1f\x7f]*")


def is_site_path(url: str) -> bool:
    """Whether an image source stays on this site (a path), rather than naming a host or a scheme."""
    return _SITE_PATH.fullmatch(url) is not None and not url.startswith("/\\")


def _replacement(image: ET.Element) -> ET.Element:
    """An image from elsewhere as something a browser does not fetch: a link to it, or its alt text."""
    source = (image.get("src") or "").strip()
    label = image.get("alt") or image.get("title") or ""
    if source.lower().startswith(("http://", "https://")):
        link = ET.Element("a", {"href": source})
        link.text = label or source
        return link
    span = ET.Element("span")
    span.text = label
    return span


class _RemoteImagesToLinks(Treeprocessor):
    def run(self, root: ET.Element) -> None:
        for parent in root.iter():
            for index, child in enumerate(list(parent)):
                if child.tag == "img" and not is_site_path(child.get("src") or ""):
                    replacement = _replacement(child)
                    replacement.tail = child.tail
                    parent.remove(child)
                    parent.insert(index, replacement)


class _SafeImages(Extension):
    def extendMarkdown(self, md: markdown.Markdown) -> None:  # noqa: N802 - Python-Markdown's API
        # After the inline processor (priority 20) has turned ![alt](src) into <img> elements.
        md.treeprocessors.register(_RemoteImagesToLinks(md), "evergreen_remote_images", 5)


def _attribute_filter(element: str, attribute: str, value: str) -> str | None:
    """Raw-HTML images (which bypass the Markdown tree) keep a source only when it is a path on this site."""
    if element == "img" and attribute == "src" and not is_site_path(value):
        return None
    return value


def markdown_to_safe_html(text: str) -> str:
    """Markdown (tables, fenced code) as sanitised HTML that loads nothing from another host."""
    html = markdown.markdown(text, extensions=[*EXTENSIONS, _SafeImages()])
    return nh3.clean(html, attribute_filter=_attribute_filter)
