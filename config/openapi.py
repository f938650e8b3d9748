"""Schema post-processing: document the error answers every API operation can give.

DRF and our middleware answer 400/401/403/404/405/406/415/429/503 with a small JSON
object on any operation; the views declare only their own successes. Clients (and the
schemathesis tests) need the errors in the schema too.
"""

from __future__ import annotations

ERROR_SCHEMA = {
    "type": "object",
    "description": "An error: `detail` for the request as a whole, or one key per field.",
    "properties": {"detail": {"type": "string"}},
    "additionalProperties": True,
}
ERRORS = {
    "400": "Malformed request; the body names the field. Nothing was changed.",
    "401": "Missing or invalid credentials.",
    "403": "Not allowed (e.g. an invite that is missing or used).",
    "404": "No such object, or not yours.",
    "405": "Method not allowed.",
    "406": "Cannot answer in the requested format.",
    "415": "Unsupported content type.",
    "429": "Too many requests from this address; see Retry-After.",
    "503": "The database is unavailable; nothing was changed; see Retry-After.",
}
HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def document_errors(result: dict, generator, request, public) -> dict:
    """Add the common error responses (JSON bodies) wherever an operation lacks them."""
    reference = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path_item in result.get("paths", {}).values():
        for method, operation in path_item.items():
            if method not in HTTP_METHODS:
                continue
            responses = operation.setdefault("responses", {})
            for code, description in ERRORS.items():
                response = responses.setdefault(code, {"description": description})
                response.setdefault("content", reference)
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    return result
