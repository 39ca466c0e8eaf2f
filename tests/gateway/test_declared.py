"""gateway.declared: a parameter refuses only with the codes it declares, and documents itself from the same record."""

from __future__ import annotations

import pytest

from gateway.declared import Operation, Parameter

COLOUR = Parameter(
    "colour",
    {"type": "string"},
    "A colour of the namespace.",
    {"unknown_colour": "colour {colour!r} is not one of: {known}."},
    enum="colours",
)
SHADES = Parameter("shade", {"type": "array", "items": {"type": "string"}}, "Shades; repeat it.", repeated=True)
PAINT = Operation((COLOUR, SHADES), {"repeated_parameter": "The parameter {param} appears more than once."})


def test_a_refusal_carries_the_declared_code_message_and_parameter() -> None:
    error = COLOUR.refusal("unknown_colour", colour="mauve", known="red, blue")

    assert (error.status, error.code, error.param) == (400, "unknown_colour", "colour")
    assert error.message == "colour 'mauve' is not one of: red, blue."
    assert PAINT.refusal("repeated_parameter", param="shade").body()["error"] == {
        "code": "repeated_parameter",
        "message": "The parameter shade appears more than once.",
        "param": "shade",
    }


def test_an_undeclared_code_cannot_be_answered() -> None:
    with pytest.raises(KeyError):
        COLOUR.refusal("invalid_colour")
    with pytest.raises(KeyError):
        PAINT.refusal("too_many_parameters")


def test_the_document_lists_the_namespaces_values_and_every_declared_code() -> None:
    colour, shade = PAINT.openapi({"colours": ["red", "blue"]})

    assert colour["schema"] == {"type": "string", "enum": ["red", "blue", ""]}
    assert colour["allowEmptyValue"] is True and "required" not in colour
    assert (shade["style"], shade["explode"]) == ("form", True)
    assert PAINT.openapi()[0]["schema"] == {"type": "string"}  # values unknown: any string
    assert PAINT.codes() == ["repeated_parameter", "unknown_colour"]
