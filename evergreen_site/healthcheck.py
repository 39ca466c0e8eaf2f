"""`python -m evergreen_site.healthcheck [URL]`: the container health check of a web process.

Asks /healthz with a Host header Django accepts (the first of EVERGREEN_ALLOWED_HOSTS), so the check
works against a production configuration instead of failing with DisallowedHost on 127.0.0.1.
Exit status 0 when the answer is 2xx, 1 otherwise (with the reason on stderr). Reads only the
environment: it must not import Django settings, which would need the database URL to parse.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request

DEFAULT_URL = "http://127.0.0.1:8000/healthz"
TIMEOUT_SECONDS = 5


def health_host(allowed_hosts: str) -> str:
    """A Host value that matches the first allowed host (".example.com" matches "example.com")."""
    for item in allowed_hosts.split(","):
        host = item.strip().lstrip(".")
        if host and host != "*":
            return host
    return "localhost"


def main(argv: list[str]) -> int:
    url = argv[1] if len(argv) > 1 else DEFAULT_URL
    host = health_host(os.environ.get("EVERGREEN_ALLOWED_HOSTS", ""))
    # The proxy in front terminates TLS; say so, as it does, so no HTTPS redirect answers instead.
    request = urllib.request.Request(url, headers={"Host": host, "X-Forwarded-Proto": "https"})  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:  # noqa: S310  # our own URL
            return 0 if 200 <= response.status < 300 else 1
    except (urllib.error.URLError, OSError) as error:
        sys.stderr.write(f"unhealthy: {url} as {host}: {error}\n")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
