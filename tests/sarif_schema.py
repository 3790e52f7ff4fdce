"""The official SARIF 2.1.0 JSON schema, vendored in tests/data/sarif/ (see the README there for
its source and license), as a validator."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

SCHEMA_PATH = Path(__file__).parent / "data" / "sarif" / "sarif-schema-2.1.0.json"


@cache
def sarif_schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


def validate_sarif(log: dict[str, Any]) -> None:
    """Raise jsonschema.ValidationError unless `log` is a valid SARIF 2.1.0 log (draft-04)."""
    schema = sarif_schema()
    validator = jsonschema.Draft4Validator(
        schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER
    )
    validator.validate(log)
