#!/usr/bin/env python3
"""Validates the example corpus against the JSON Schema bundle with Python's `jsonschema`.

Every file in examples/<Type>/valid/*.json must be valid against ahp.schema.json#/$defs/<Type>,
every file in examples/<Type>/invalid/*.json must be invalid. The TypeScript tests check the
same corpus with zod and ajv; this is the third, independent implementation.

Needs only the standard library and `jsonschema` >= 4.0 (Draft 2020-12), e.g. Debian's
`python3-jsonschema`. Usage:

    python3 schemas/scripts/check_examples.py [SCHEMAS_DIR]

Prints one line per failure and ends with "N passed, N failed"; exits 1 when anything failed
or the corpus is empty, 2 when jsonschema is missing or too old.
"""

import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("jsonschema is not installed (Debian/Ubuntu: apt-get install -y python3-jsonschema)", file=sys.stderr)
    sys.exit(2)

Validator = getattr(jsonschema, "Draft202012Validator", None)
if Validator is None:
    print("this jsonschema has no Draft202012Validator; version 4.0 or newer is needed", file=sys.stderr)
    sys.exit(2)


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def validator_for(bundle, type_name):
    # The bundle itself, with a root `$ref` into its `$defs`: `#/$defs/...` references inside the
    # definitions resolve against the bundle's `$id`. Works with every jsonschema >= 4.0, with or
    # without the `referencing` library.
    schema = dict(bundle)
    schema["$ref"] = "#/$defs/" + type_name
    return Validator(schema)


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    schemas_dir = argv[1] if len(argv) > 1 else os.path.dirname(here)
    bundle = load_json(os.path.join(schemas_dir, "ahp.schema.json"))
    Validator.check_schema(bundle)
    defs = bundle.get("$defs", {})
    examples_dir = os.path.join(schemas_dir, "examples")

    passed = 0
    failed = 0
    for type_name in sorted(os.listdir(examples_dir)):
        type_dir = os.path.join(examples_dir, type_name)
        if not os.path.isdir(type_dir):
            continue
        if type_name[:1].islower():
            # examples/<bundle>/<Type>/...: the corpus of another bundle (e.g. aarts.schema.json), checked by its package
            continue
        if type_name not in defs:
            print(f"FAIL {type_name}: no such type in $defs", file=sys.stderr)
            failed += 1
            continue
        validator = validator_for(bundle, type_name)
        for expected in ("valid", "invalid"):
            kind_dir = os.path.join(type_dir, expected)
            if not os.path.isdir(kind_dir):
                continue
            for file_name in sorted(os.listdir(kind_dir)):
                rel = f"{type_name}/{expected}/{file_name}"
                if not file_name.endswith(".json"):
                    print(f"FAIL {rel}: not a .json file", file=sys.stderr)
                    failed += 1
                    continue
                instance = load_json(os.path.join(kind_dir, file_name))
                errors = list(validator.iter_errors(instance))
                got = "invalid" if errors else "valid"
                if got == expected:
                    passed += 1
                else:
                    failed += 1
                    detail = "; ".join(e.message for e in errors[:3]) if errors else "no error reported"
                    print(f"FAIL {rel}: expected {expected}, got {got} ({detail})", file=sys.stderr)

    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
