#!/usr/bin/python3
"""Validates one npucc --json document against its JSON Schema (tests/schemas/FORMAT.schema.json).

usage: validate_json.py FORMAT [FILE]   (FILE defaults to standard input)

The document must be one JSON value whose "format" is FORMAT and whose "format_version" is an
integer; the rest is checked by the schema with python3-jsonschema's Draft 2020-12 validator (a $ref to a
sibling schema file resolves to that file),
which is written by others, so a schema mistake and a code mistake cannot cancel out."""
import json
import pathlib
import sys
from urllib.parse import urljoin

import jsonschema

SCHEMAS = pathlib.Path(__file__).resolve().parent.parent / "schemas"


def validator_for(schema, schema_path):
    """A validator whose $refs to a sibling schema file ("npucc-drift.schema.json") resolve to
    that file: through `referencing` where jsonschema has it (4.18 on), else RefResolver."""
    siblings = {path: json.loads(path.read_text()) for path in SCHEMAS.glob("*.schema.json")}
    try:
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012
    except ImportError:
        # Under its file's URI and under its "$id" (a base for the refs inside it).
        store = {path.as_uri(): contents for path, contents in siblings.items()}
        store.update({urljoin(SCHEMAS.as_uri() + "/", contents["$id"]): contents
                      for contents in siblings.values() if "$id" in contents})
        resolver = jsonschema.RefResolver(schema_path.as_uri(), schema, store=store)
        return jsonschema.Draft202012Validator(schema, resolver=resolver)
    registry = Registry().with_resources(
        (path.name, Resource.from_contents(contents, default_specification=DRAFT202012))
        for path, contents in siblings.items())
    return jsonschema.Draft202012Validator(schema, registry=registry)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    name = sys.argv[1]
    text = open(sys.argv[2]).read() if len(sys.argv) == 3 else sys.stdin.read()
    schema_path = SCHEMAS / f"{name}.schema.json"
    schema = json.loads(schema_path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        sys.exit(f"{name}: not JSON: {error}")
    if not isinstance(document, dict) or document.get("format") != name:
        sys.exit(f"{name}: the document's format is {document.get('format') if isinstance(document, dict) else None!r}")
    if not isinstance(document.get("format_version"), int):
        sys.exit(f"{name}: format_version is missing or not an integer")
    errors = sorted(validator_for(schema, schema_path).iter_errors(document), key=str)
    for error in errors:
        where = "/".join(str(part) for part in error.absolute_path) or "(top)"
        print(f"{name}: {where}: {error.message}", file=sys.stderr)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
