"""POST /api/verify: check an answer's [ID] citations against the release or pack it was written from."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from gateway.errors import BodyTooLargeError, GatewayError, MethodNotAllowedError
from gateway.gate import request_gate
from gateway.http import finish, json_reply, read_body
from gateway.params import query_text_check
from gateway.verify import BODY_TOO_LARGE, verify_answer, verify_body_decode, verify_request_parse
from gateway.views import gateway_error_response

POST_ONLY = 'Only POST is allowed here: send {"answer": …, "release"?: …, "pack"?: …} as JSON.'


@csrf_exempt
def verify_post(request: HttpRequest, namespace: str | None = None) -> HttpResponse:
    if request.method != "POST":
        refused = MethodNotAllowedError(POST_ONLY)
        refused.headers = {"Allow": "POST"}
        return gateway_error_response(request, refused)
    try:
        gate = request_gate(request, namespace=namespace)
    except GatewayError as error:
        return gateway_error_response(request, error)
    try:
        query_text_check(request)
        limit = settings.EVERGREEN.mcp_max_body_bytes
        body = read_body(request, limit)
        if body is None:
            raise BodyTooLargeError(BODY_TOO_LARGE.format(limit=limit))
        report = verify_answer(gate, verify_request_parse(verify_body_decode(body)), channel="rest")
    except GatewayError as error:
        return gateway_error_response(request, error, gate=gate)
    return finish(request, json_reply(report), cache=gate.cache, rate=gate.rate, extra={"Cache-Control": "no-store"})
