"""Secrets: known credential formats (detect-secrets' detectors plus newer formats) and random tokens.

detect-secrets (Yelp) maintains the key formats; its regex detectors are run over the whole text
here so every finding keeps its exact span. Documentation placeholders ("AKIAIOSFODNN7EXAMPLE",
"sk_live_xxx…", "<your token>") are not secrets and are skipped.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import cache

from detect_secrets.plugins import (
    aws,
    azure_storage_key,
    basic_auth,
    discord,
    github_token,
    gitlab_token,
    jwt,
    mailchimp,
    pypi_token,
    sendgrid,
    slack,
    square_oauth,
    stripe,
    telegram_token,
    twilio,
)

from knowledge.safety.context import ScanContext
from knowledge.safety.encoded import decode_base64
from knowledge.safety.findings import Kind, Severity

_DETECTORS = (
    ("secret.aws_key", "AWS access key", aws.AWSKeyDetector),
    ("secret.azure_storage_key", "Azure storage account key", azure_storage_key.AzureStorageKeyDetector),
    ("secret.url_password", "password inside a URL", basic_auth.BasicAuthDetector),
    ("secret.discord_token", "Discord bot token", discord.DiscordBotTokenDetector),
    ("secret.github_token", "GitHub token", github_token.GitHubTokenDetector),
    ("secret.gitlab_token", "GitLab token", gitlab_token.GitLabTokenDetector),
    ("secret.mailchimp_key", "Mailchimp API key", mailchimp.MailchimpDetector),
    ("secret.pypi_token", "PyPI token", pypi_token.PypiTokenDetector),
    ("secret.sendgrid_key", "SendGrid API key", sendgrid.SendGridDetector),
    ("secret.slack_token", "Slack token or webhook", slack.SlackDetector),
    ("secret.square_secret", "Square OAuth secret", square_oauth.SquareOAuthDetector),
    ("secret.stripe_live_key", "Stripe live key", stripe.StripeDetector),
    ("secret.telegram_token", "Telegram bot token", telegram_token.TelegramBotTokenDetector),
    ("secret.twilio_key", "Twilio key", twilio.TwilioKeyDetector),
)
# Formats detect-secrets 1.5 does not know (or knows only in part). Its npm, JWT and OpenAI patterns are
# ours too: tried at every `//`, `eyJ` or `sk-` of a long run, they read to its end each time (quadratic;
# 16,000 characters of `sk-` took 0.5 s). Ours start where a run does, or at a literal.
_RUN_START = r"(?<![A-Za-z0-9_=-])"
_EXTRA = (
    ("secret.npm_token", "npm token", r"/:_authToken=\s*+(npm_[^\s\"'`]+|[A-Fa-f0-9-]{36})"),
    ("secret.jwt", "JSON Web Token", _RUN_START + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
    ("secret.jwt", "JSON Web Token", _RUN_START + r"eyJ[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+"),
    ("secret.openai_key", "OpenAI API key", _RUN_START + r"sk-[A-Za-z0-9_-]*[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}"),
    ("secret.anthropic_key", "Anthropic API key", r"sk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{32,}"),
    ("secret.openai_key", "OpenAI API key", r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{32,}"),
    ("secret.api_secret_key", "secret API key (sk- prefix)", r"sk-[A-Za-z0-9]{32,}"),
    ("secret.google_api_key", "Google API key", r"AIza[0-9A-Za-z_-]{35}"),
    ("secret.google_oauth_secret", "Google OAuth client secret", r"GOCSPX-[A-Za-z0-9_-]{28}"),
    ("secret.huggingface_token", "Hugging Face token", r"hf_[A-Za-z]{34}"),
    ("secret.github_token", "GitHub fine-grained token", r"github_pat_[A-Za-z0-9_]{60,}"),
    ("secret.stripe_live_key", "Stripe live key", r"(?:sk|rk)_live_[0-9A-Za-z]{24,}"),
    ("secret.aliyun_access_key", "Alibaba Cloud AccessKey ID", r"LTAI[A-Za-z0-9]{12,24}"),
    ("secret.tencent_secret_id", "Tencent Cloud SecretId", r"AKID[A-Za-z0-9]{32}"),
    (
        "secret.aws_secret_key",
        "AWS secret access key",
        r"(?i:aws_?secret_?access_?key)\s*[:=]\s*[\"']?([A-Za-z0-9/+]{40})",
    ),
    ("secret.slack_token", "Slack token", r"xox[abposr]-[A-Za-z0-9-]{20,}"),
)
_LOW = (("secret.stripe_test_key", "Stripe test key", r"(?:sk|rk|pk)_test_[0-9A-Za-z]{24,}"),)
_PEM = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----(?P<body>.*?)(?:-----END \1-----|\Z)|"
    r"PuTTY-User-Key-File-\d",
    re.DOTALL,
)
_PLACEHOLDER = re.compile(
    r"example|xxxx|placeholder|your|changeme|change_me|dummy|sample|redacted|fake|insert|replace|here|\.\.\.|…|\*{3}|"
    r"[<>{}$\[\]()]|0123456|123456789|abcdef(?:gh|01)|(.)\1{5}",
    re.IGNORECASE,
)
_ASSIGNMENT = re.compile(
    r"(?i:\b(?:api[_-]?key|apikey|access[_-]?key(?:[_-]?id)?|secret[_-]?key|client[_-]?secret|auth[_-]?token|"
    r"access[_-]?token|refresh[_-]?token|private[_-]?key|password|passwd|pwd|secret|token)\b|密码|密钥|口令|令牌|私钥)"
    r"[\"']?\s*(?:[:=]|=>|：|是|为)\s*[\"'`]?(?P<value>[^\s\"'`,;，。；）)]{8,})"
)
_BEARER = re.compile(r"(?i:\bbearer)\s+(?P<value>[A-Za-z0-9._~+/-]{20,}=*)")
_TOKEN = re.compile(r"(?<![A-Za-z0-9+/=_.-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/=_.-])")
_HASH_CONTEXT = re.compile(
    r"(?i)(?:sha(?:1|224|256|384|512)|md5|etag|integrity|hash|digest|commit|checksum|sri)[\s:=\"'-]{0,3}$"
)


@cache
def _patterns() -> tuple[tuple[str, str, Severity, re.Pattern[str]], ...]:
    # Our own formats first: where both know a format, ours spans the whole credential.
    found = [(code, label, Severity.HIGH, re.compile(pattern)) for code, label, pattern in _EXTRA]
    for code, label, detector in _DETECTORS:
        found.extend((code, label, Severity.HIGH, pattern) for pattern in detector.denylist)
    found.extend((code, label, Severity.LOW, re.compile(pattern)) for code, label, pattern in _LOW)
    return tuple(found)


def find_secrets(context: ScanContext) -> None:
    text = context.text
    covered: list[tuple[int, int]] = []
    for match in _PEM.finditer(text):
        body = match["body"] or ""
        if match[0].startswith("PuTTY") or len(re.findall(r"[A-Za-z0-9+/]", body)) >= 40:
            _add(context, match.start(), match.end(), Severity.HIGH, "secret.private_key", "private key")
            covered.append(match.span())
    for code, label, severity, pattern in _patterns():
        for match in pattern.finditer(text):
            start, end = _secret_span(match, code)
            if _glued(text, start, end) or _placeholder(text[start:end]) or _inside(covered, start, end):
                continue
            if code == "secret.jwt" and not jwt.JwtTokenDetector().is_formally_valid(text[start:end]):
                continue
            severity_here = Severity.MEDIUM if code in {"secret.jwt", "secret.url_password"} else severity
            _add(context, start, end, severity_here, code, label)
            covered.append((start, end))
    _assignments(context, covered)
    _random_tokens(context, covered)


def _secret_span(match: re.Match[str], code: str) -> tuple[int, int]:
    """The credential itself: a URL's password, or the longest group when it holds the value
    (AWS secret keys after their keyword); otherwise the whole match ("ghp" is only a prefix)."""
    if code == "secret.url_password":
        return match.span(1)
    groups = [match.span(g) for g in range(1, (match.re.groups or 0) + 1) if match.start(g) >= 0]
    longest = max(groups, key=lambda span: span[1] - span[0], default=None)
    return longest if longest and longest[1] - longest[0] >= 12 else match.span()


def _add(context: ScanContext, start: int, end: int, severity: Severity, code: str, label: str) -> None:
    context.add(start, end, Kind.SECRET, severity, code, f"Looks like a {label}: a credential must never be published.")


def _glued(text: str, start: int, end: int) -> bool:
    """Part of a longer word: "AKIA…" inside a longer token is not an AWS key."""
    return (start > 0 and text[start - 1].isalnum() and text[start].isalnum()) or (
        end < len(text) and text[end].isalnum() and text[end - 1].isalnum()
    )


def _placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER.search(value)) or len(set(value)) < 6


def _inside(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any((s <= start and end <= e) or (s < end and start < e) for s, e in spans)


def entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _classes(value: str) -> int:
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(c in "+/_-" for c in value),
        )
    )


def _assignments(context: ScanContext, covered: list[tuple[int, int]]) -> None:
    text = context.text
    for pattern in (_ASSIGNMENT, _BEARER):
        for match in pattern.finditer(text):
            start, end = match.span("value")
            value = match["value"]
            if _inside(covered, start, end) or _placeholder(value) or _classes(value) < 2 or entropy(value) < 2.5:
                continue
            if value.lower() in {"true", "false", "none", "null", "required", "optional"} or (
                "." in value[:-1] and "/" not in value and value.count(".") > 2
            ):
                continue
            context.add(
                start,
                end,
                Kind.SECRET,
                Severity.MEDIUM,
                "secret.assignment",
                "A value assigned to a password, key or token: a credential must never be published.",
            )
            covered.append((start, end))


def _random_tokens(context: ScanContext, covered: list[tuple[int, int]]) -> None:
    text = context.text
    for match in _TOKEN.finditer(text):
        value = match[0].rstrip("=")
        start, end = match.span()
        if len(value) < 24 or _inside(covered, start, end) or _placeholder(value):
            continue
        if re.fullmatch(r"[0-9a-fA-F-]+", value) or ("/" in value and not re.search(r"\d", value.split("/")[-1])):
            continue
        if _HASH_CONTEXT.search(text, max(0, start - 12), start) or _classes(value) < 3 or entropy(value) < 4.0:
            continue
        if _readable_base64(value) or (
            text[max(0, start - 1) : start] in {"/", "#", "?", "="} and "://" in text[max(0, start - 200) : start]
        ):
            continue
        context.add(
            start,
            end,
            Kind.SECRET,
            Severity.LOW,
            "secret.high_entropy",
            "A long random-looking token: if it is a credential it must not be published.",
        )


def _readable_base64(value: str) -> bool:
    return decode_base64(value) is not None
