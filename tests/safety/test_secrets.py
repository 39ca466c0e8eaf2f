"""Secrets: known key formats with exact spans, documentation placeholders skipped, random tokens."""

from __future__ import annotations

import pytest

from tests.safety.helpers import described

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1x3m8Qp4v7Z2w9y0XkT5bH6nJ8rL1sD3fG5hJ7kL9zX1cV3bN5mQ7wE9rT1y\n"
    "-----END RSA PRIVATE KEY-----"
)


@pytest.mark.parametrize(
    ("secret", "code", "severity"),
    [
        ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "secret.stripe_live_key", "high"),
        ("AKIA2E0A8F3B244C9986", "secret.aws_key", "high"),
        ("ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5", "secret.github_token", "high"),
        ("xoxb-740418052311-918273645501-q8w7e6r5t4y3u2i1o9p8a7s6", "secret.slack_token", "high"),
        ("AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "secret.google_api_key", "high"),
        ("sk-ant-api03-" + "aZ3x" * 20, "secret.anthropic_key", "high"),
        ("sk-proj-" + "Qw9e" * 12, "secret.openai_key", "high"),
        (JWT, "secret.jwt", "medium"),
        (PEM, "secret.private_key", "high"),
    ],
)
def test_known_formats_are_found_with_their_exact_span(secret: str, code: str, severity: str) -> None:
    assert described(f"config: {secret} (do not share)") == [(code, severity, secret)]


def test_a_password_in_an_assignment_is_medium_and_spans_only_the_value() -> None:
    assert described("db password: Xk9#mQ2vLp") == [("secret.assignment", "medium", "Xk9#mQ2vLp")]
    assert described("数据库密码：Qz7!rT4wKx") == [("secret.assignment", "medium", "Qz7!rT4wKx")]


def test_a_long_random_token_is_a_low_warning() -> None:
    assert described("signing secret 9fQ2xL7vK3mN8pR4tW6yZ1aB5cD0eG2h end") == [
        ("secret.high_entropy", "low", "9fQ2xL7vK3mN8pR4tW6yZ1aB5cD0eG2h")
    ]


@pytest.mark.parametrize(
    "text",
    [
        "AWS documents the example key AKIAIOSFODNN7EXAMPLE.",
        "Set STRIPE_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx in production.",
        "Set OPENAI_API_KEY=sk-... before running.",
        'password = "${DB_PASSWORD}"',
        "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
        "content hash sha256:9b74c9897bac770ffc029102a200c5de",
        "commit 4f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a3f fixed it",
        "An API key is sent in the Authorization header as `Bearer <key>`.",
        "integrity sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC",
    ],
)
def test_placeholders_hashes_and_mentions_are_not_secrets(text: str) -> None:
    assert described(text) == []
