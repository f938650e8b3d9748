"""Check API responses against the generated OpenAPI schema (OpenAPI 3.0 → JSON Schema)."""

from __future__ import annotations

from functools import cache

import jsonschema
from drf_spectacular.generators import SchemaGenerator


def _to_json_schema(node):
    """OpenAPI 3.0's ``nullable: true`` becomes a JSON Schema type list with "null"."""
    if isinstance(node, list):
        return [_to_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: _to_json_schema(value) for key, value in node.items()}
    for bound in ("Minimum", "Maximum"):
        # OpenAPI 3.0's boolean ``exclusiveMinimum`` is JSON Schema's number.
        if node.get(f"exclusive{bound}") is True:
            node[f"exclusive{bound}"] = node.pop(bound.lower())
        elif node.get(f"exclusive{bound}") is False:
            del node[f"exclusive{bound}"]
    if node.pop("nullable", False):
        if "type" in node:
            node["type"] = [node["type"], "null"]
        else:
            node = {"anyOf": [node, {"type": "null"}]}
    return node


@cache
def openapi_schema() -> dict:
    return _to_json_schema(SchemaGenerator().get_schema(request=None, public=True))


def assert_matches_schema(response, path: str, method: str) -> None:
    """The response body validates against the schema documented for its status code."""
    schema = openapi_schema()
    operation = schema["paths"][path][method.lower()]
    documented = operation["responses"].get(str(response.status_code))
    assert documented, f"{method} {path} does not document status {response.status_code}"
    content = documented.get("content", {})
    if "application/json" in content:
        body_schema = content["application/json"]["schema"]
        root = {"components": schema["components"], **body_schema}
        jsonschema.validate(response.json(), root)
    elif content:
        assert response["Content-Type"].split(";")[0] in content
