"""The base of every request body: a field the body does not take is refused (400 unknown_field), not dropped;
and text and whole numbers that must arrive as JSON strings and numbers."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, ClassVar

from rest_framework import serializers

from manage_api.errors import UNKNOWN_FIELD

UNKNOWN_FIELDS = "Unknown field{plural}: {unknown}. This body takes {accepted}."
NOT_A_STRING = "Send a string (in quotes), not {kind}."
NOT_A_NUMBER = "Send a whole number (without quotes), not {kind}."


@cache
def _echoed_names(serializer_class: type[serializers.Serializer]) -> frozenset[str]:
    return frozenset(serializer_class().fields)


class RequestBody(serializers.Serializer):
    """A JSON body that names every field it takes; any other key is a 400 `unknown_field`, `param` the first.

    A typo (`titel`, `sumary`) would otherwise answer 200 with the value lost. The one exception is
    `echoes`: the answer a client reads before it writes (a version's GET before its PATCH). Its fields
    that this body does not take (`id`, `etag`, `state`, `lock_version`, `created_at` …) are accepted
    and ignored whatever their value, so a client may send back what it got with its edits: the URL
    names the object and If-Match, not the body, guards against a stale write.
    """

    echoes: ClassVar[type[serializers.Serializer] | None] = None

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            self._refuse_unknown(data)
        return super().to_internal_value(data)

    def _refuse_unknown(self, data: Mapping[str, Any]) -> None:
        accepted = [name for name, field in self.fields.items() if not field.read_only]
        tolerated = _echoed_names(self.echoes) if self.echoes is not None else frozenset()
        unknown = [str(key) for key in data if key not in accepted and key not in tolerated]
        if not unknown:
            return
        message = UNKNOWN_FIELDS.format(
            plural="s" if len(unknown) > 1 else "",
            unknown=", ".join(unknown),
            accepted=", ".join(accepted) if accepted else "no fields",
        )
        raise serializers.ValidationError({unknown[0]: [message]}, code=UNKNOWN_FIELD)


class EmptyBody(RequestBody):
    """The body of an action that takes none: `{}` or nothing."""


class StrictCharField(serializers.CharField):
    """Text that must arrive as a JSON string: DRF's CharField turns `1`, `2.5` and `true` into "1", "2.5" and
    "True", so `tags: [1, 2]` was stored as tags "1" and "2" (QA). Used for the items of every list of strings."""

    default_error_messages = {"not_a_string": NOT_A_STRING}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("not_a_string", kind=_json_kind(data))
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """A whole number that must arrive as a JSON number: DRF's IntegerField turns "2" and "2.0" into 2, so a
    golden question's grade "2" was taken (QA). 2.0 stays 2, as JSON Schema's integer and the gateway
    (mcp_bridge.jsonrpc.whole_number, gateway.params) take it; 1.5 is refused by IntegerField itself."""

    default_error_messages = {"not_a_number": NOT_A_NUMBER}

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            self.fail("not_a_number", kind=_json_kind(data))
        return int(super().to_internal_value(data))


def _json_kind(value: Any) -> str:
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if value is None:
        return "null"
    return "a list" if isinstance(value, list) else "an object"
