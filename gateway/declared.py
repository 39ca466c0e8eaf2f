"""The public routes' parameters declared once (issue 15 §5): what a client may send, and how it is refused.

A declaration names a parameter, the JSON Schema of what a client may send, its description and every
400 it answers (code → message). The parsers beside each declaration (gateway.params, gateway.entries,
gateway.changes, gateway.explain, gateway.pinning, gateway.verify, api.views) refuse only through
`Parameter.refusal`, which knows no code the declaration does not list; api/openapi/paths.py builds the
parameters and the 400 codes of /api/schema/ from the same declarations. So a new rule is one line
here, and the document cannot fall behind the server (tests/api/test_parameter_drift.py asks a live
server for every declared refusal and checks each answer against the document).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gateway.errors import BadParameterError

if TYPE_CHECKING:
    from django.http import QueryDict

# A namespace's own values that a parameter takes (its categories, its prompt-pack scenarios), when known.
Enums = Mapping[str, Sequence[str] | None]

# The refusal of a parameter sent more than once, for every parameter that declares it.
REPEATED = "The parameter {param} appears more than once; send it once."


@dataclass(frozen=True, slots=True, eq=False)
class Parameter:
    """One request parameter: in the query (the default), the path or the JSON body."""

    name: str
    schema: Mapping[str, Any]
    description: str
    refusals: Mapping[str, str] = field(default_factory=dict)  # code → message (str.format fields)
    required: bool = False
    repeated: bool = False  # form style, exploded: one value per occurrence (`paths=a&paths=b`)
    enum: str | None = None  # the Enums key whose values it takes; others answer its refusal
    location: str = "query"
    allow_empty: bool = True  # `name=` means "not sent" (OpenAPI allowEmptyValue); False: it is refused

    def refusal(self, code: str, message: str | None = None, **fields: Any) -> BadParameterError:
        """The 400 for `code` (KeyError for a code this parameter does not declare: a bug, caught by the tests).

        `message`: the refuser's own wording (a selector's error names the data it looked for).
        """
        template = self.refusals[code]
        return BadParameterError(message or template.format(**fields), param=self.name, code=code)

    def openapi(self, enums: Enums | None = None) -> dict[str, Any]:
        """The OpenAPI 3.1 Parameter Object."""
        schema = dict(self.schema)
        values = (enums or {}).get(self.enum) if self.enum else None
        if values is not None:
            schema["enum"] = [*values, *([] if self.required else [""])]
        described: dict[str, Any] = {
            "name": self.name,
            "in": self.location,
            "description": self.description,
            "schema": schema,
        }
        if self.required or self.location == "path":
            described["required"] = True
        elif self.location == "query" and self.allow_empty:
            described["allowEmptyValue"] = True
        if self.repeated:
            described |= {"style": "form", "explode": True}
        return described


@dataclass(frozen=True, slots=True, eq=False)
class Operation:
    """The parameters one route reads, and the refusals of the request as a whole or of what it names."""

    parameters: tuple[Parameter, ...]
    refusals: Mapping[str, str] = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(parameter.name for parameter in self.parameters)

    def refusal(
        self, code: str, message: str | None = None, *, param: str | None = None, **fields: Any
    ) -> BadParameterError:
        """The 400 for a refusal of the request as a whole; `param` names the parameter when there is one."""
        template = self.refusals[code]
        return BadParameterError(message or template.format(param=param, **fields), param=param, code=code)

    def sent_once(self, query: QueryDict) -> dict[str, str]:
        """The single-valued query parameters sent, each by name; one sent twice is a 400 repeated_parameter.

        QueryDict.get would quietly take the last of them (README, Parameters declared once). Names the
        route does not declare are not its to judge; repeatable ones (`repeated=True`) are read with getlist.
        """
        sent: dict[str, str] = {}
        if not query:
            return sent
        for parameter in self.parameters:
            if parameter.location != "query" or parameter.repeated:
                continue
            values = query.getlist(parameter.name)
            if len(values) > 1:
                raise self.refusal("repeated_parameter", param=parameter.name)
            if values:
                sent[parameter.name] = values[0]
        return sent

    def codes(self) -> list[str]:
        """Every 400 code the route answers for its own parameters, sorted."""
        return sorted({*self.refusals, *(code for p in self.parameters for code in p.refusals)})

    def openapi(self, enums: Enums | None = None) -> list[dict[str, Any]]:
        """The OpenAPI Parameter Objects of the query and path (body fields: `body_schema`)."""
        return [p.openapi(enums) for p in self.parameters if p.location != "body"]

    def body_schema(self) -> dict[str, Any]:
        """The JSON object of the body parameters (location "body")."""
        body = [p for p in self.parameters if p.location == "body"]
        return {
            "type": "object",
            "properties": {p.name: {**p.schema, "description": p.description} for p in body},
            "required": [p.name for p in body if p.required],
        }
