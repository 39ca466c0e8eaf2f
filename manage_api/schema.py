"""OpenAPI pieces of the management API: the error shape and what each status means."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import serializers

ERROR = inline_serializer(
    name="ManageError",
    fields={
        "error": inline_serializer(
            name="ManageErrorBody",
            fields={
                "code": serializers.CharField(help_text="Stable and machine-readable, e.g. four_eyes."),
                "message": serializers.CharField(help_text="For a person: what happened and what to do."),
                "param": serializers.CharField(allow_null=True, help_text="The offending field or parameter."),
            },
        )
    },
)

MEANINGS = {
    400: "A field or parameter is invalid (`invalid_parameter`, `param` names it), the body has a field it does "
    "not take (`unknown_field`, `param` names the first; the message lists the accepted ones), or the body is "
    "not JSON (`invalid_json`).",
    401: "No credentials (`not_authenticated`) or a token that opens nothing (`invalid_token`, `token_expired`, "
    "`token_revoked`).",
    403: "A role is missing (`forbidden`), the token's scope is too narrow (`token_scope`), the reviewer wrote "
    "the version (`four_eyes`), or the session's CSRF token is missing (`csrf_failed`).",
    404: "No such object, or a namespace you hold no role in (`not_found`).",
    409: "The version's state does not allow this (`invalid_transition`) or the category's IDs are used up "
    "(`block_full`).",
    410: "The release's files were pruned by the retention policy (`release_expired`, `param` names `release`).",
    412: "If-Match names an older save of the draft (`stale_version`).",
    422: "A rule refuses the request (`invalid`, or the service's own code such as `synonyms.too_few`): e.g. a "
    "retired entry, an ID already used, a reason missing.",
    428: "If-Match is required (`if_match_required`).",
    429: "Over the rate limit (`rate_limited`); see Retry-After.",
}


def errors(*statuses: int) -> dict[int, OpenApiResponse]:
    return {code: OpenApiResponse(ERROR, description=MEANINGS[code]) for code in statuses}
