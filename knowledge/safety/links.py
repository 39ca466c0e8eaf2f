"""Links to hosts outside the namespace's allow-list, and links shaped to mislead or leak data."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from knowledge.safety.context import ScanContext
from knowledge.safety.findings import Kind, Severity

URL = re.compile(
    r"(?i)\b(?:https?|ftp|wss?)://[^\s<>\"'`\]\[|\\^，。、；：！？（）「」『』【】《》]+|\bwww\.[a-z0-9-]+\.[a-z0-9.-]+[^\s<>\"'`)\]，。]*"
)
_TRAILING = ".,;:!?)'\"*_~"
# RFC 2606 / 6761 names: documentation examples and loopback can belong to no outside party.
_RESERVED_SUFFIXES = (".example", ".test", ".invalid", ".localhost", ".local", ".internal")
_RESERVED = re.compile(r"^(?:(?:[\w-]+\.)*example\.(?:com|net|org|edu)|localhost)$")
_SHORTENERS = frozenset(
    [
        "bit.ly",
        "tinyurl.com",
        "t.co",
        "goo.gl",
        "is.gd",
        "ow.ly",
        "buff.ly",
        "rebrand.ly",
        "cutt.ly",
        "t.cn",
        "dwz.cn",
        "suo.im",
        "url.cn",
        "tiny.cc",
        "shorturl.at",
        "rb.gy",
        "v.gd",
        "s.id",
    ]
)
_COLLECTORS = re.compile(
    r"(?:^|\.)(?:ngrok(?:-free)?\.(?:io|app|dev)|webhook\.site|requestbin\.(?:net|com)|pipedream\.net|"
    r"burpcollaborator\.net|oast\.(?:fun|live|me|online|pro|site)|interact\.sh|trycloudflare\.com|"
    r"transfer\.sh|pastebin\.com|hookbin\.com|beeceptor\.com|canarytokens\.com|dnslog\.cn|ceye\.io)$"
)
_LONG_VALUE = re.compile(r"[?&][^=&#]{1,40}=[A-Za-z0-9+/_%-]{40,}")
_PLACEHOLDER = re.compile(r"(?:\{|\}|\$|%7[bd]|<|>|%3[ce])", re.IGNORECASE)
_MARKDOWN_LINK = re.compile(r"\[([^\]\n]{3,200})\]\(\s*<?((?:https?:)?//[^)\s>]+)>?\)?")
_HOSTLIKE = re.compile(r"(?i)^(?:https?://)?((?:[a-z0-9-]+\.)+[a-z]{2,})(?:[/:?#]|$)")

MESSAGES = {
    "link.external": "Links to a host outside the namespace's allowed hosts.",
    "link.suspicious": "Link shaped to mislead or to carry data out: {why}.",
    "link.misleading": "The link text shows one host but the link goes to another.",
}


def host_of(url: str) -> str | None:
    """The lower-case ASCII host of a URL, or None when it has none or cannot be parsed."""
    candidate = url if "://" in url else "http://" + url
    try:
        host = urlsplit(candidate).hostname
    except ValueError:
        return None
    if not host or not re.fullmatch(r"[\w.:\-\u00a1-\uffff]+", host):
        return None
    return host.rstrip(".")


def is_reserved(host: str) -> bool:
    if _RESERVED.match(host) or host.endswith(_RESERVED_SUFFIXES):
        return True
    address = _ip(host)
    return address is not None and (address.is_loopback or address.is_unspecified)


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def url_host_is_external(context: ScanContext, url: str) -> bool:
    host = host_of(url)
    return host is not None and not is_reserved(host) and not context.host_allowed(_ascii(host))


def _ascii(host: str) -> str:
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def find_links(context: ScanContext) -> None:
    text = context.text
    if "://" not in text and "www." not in text.lower():
        return
    for match in URL.finditer(text):
        url = match[0].rstrip(_TRAILING)
        host = host_of(url)
        if host is None or is_reserved(host):
            continue
        start, end = match.start(), match.start() + len(url)
        why = _suspicious(url, host, allowed=context.host_allowed(_ascii(host)))
        if why:
            context.add(
                start, end, Kind.LINK, Severity.MEDIUM, "link.suspicious", MESSAGES["link.suspicious"].format(why=why)
            )
        elif not context.host_allowed(_ascii(host)):
            context.add(start, end, Kind.LINK, Severity.LOW, "link.external", MESSAGES["link.external"])
    for match in _MARKDOWN_LINK.finditer(text):
        shown = _HOSTLIKE.match(match[1].strip())
        target = host_of(match[2])
        if shown and target and not _same_site(shown[1].lower(), target):
            context.add(*match.span(), Kind.LINK, Severity.MEDIUM, "link.misleading", MESSAGES["link.misleading"])


def _same_site(shown: str, target: str) -> bool:
    return shown == target or target.endswith("." + shown) or shown.endswith("." + target)


def _suspicious(url: str, host: str, *, allowed: bool) -> str | None:
    """Why a link is shaped to mislead or to carry data out, or None."""
    authority = url.split("://", 1)[-1].split("/", 1)[0]
    if "@" in authority:
        return "a user name before the host hides where it goes"
    if allowed:
        return None
    address = _ip(host)
    query = url.split("?", 1)[1] if "?" in url else ""
    reasons = (
        (not host.isascii() or "xn--" in host, "an internationalised host name can imitate another"),
        (address is not None and address.is_private, "a bare IP address on a private network"),
        (address is not None, "a bare IP address"),
        (host in _SHORTENERS, "a URL shortener hides the destination"),
        (bool(_COLLECTORS.search(host)), "a request-collecting or tunnelling service"),
        (
            bool(query and _PLACEHOLDER.search(query)),
            "a template placeholder in the query asks the reader to fill in data",
        ),
        (bool(_LONG_VALUE.search(url)), "a long encoded query value"),
    )
    return next((reason for found, reason in reasons if found), None)
