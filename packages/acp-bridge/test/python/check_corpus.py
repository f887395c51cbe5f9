#!/usr/bin/env python3
"""Judges the acp-bridge example corpus with Python's `jsonschema` (Draft 2020-12), the third
implementation next to zod and ajv.

    python3 check_corpus.py BUNDLE.json EXAMPLES_DIR

Every EXAMPLES_DIR/<Type>/valid/*.json must validate against BUNDLE#/$defs/<Type>, every
.../invalid/*.json must not. Prints one line per disagreement and "N passed, N failed".
"""

import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("jsonschema is not installed", file=sys.stderr)
    sys.exit(2)

Validator = getattr(jsonschema, "Draft202012Validator", None)
if Validator is None:
    print("jsonschema >= 4.0 is needed (Draft202012Validator)", file=sys.stderr)
    sys.exit(2)


def main(bundle_path, examples_dir):
    with open(bundle_path, encoding="utf-8") as f:
        bundle = json.load(f)
    Validator.check_schema(bundle)
    passed = failed = 0
    for type_name in sorted(os.listdir(examples_dir)):
        if type_name not in bundle.get("$defs", {}):
            print(f"FAIL {type_name}: no such type in $defs", file=sys.stderr)
            failed += 1
            continue
        validator = Validator(dict(bundle, **{"$ref": "#/$defs/" + type_name}), format_checker=Validator.FORMAT_CHECKER)
        for expected in ("valid", "invalid"):
            kind_dir = os.path.join(examples_dir, type_name, expected)
            if not os.path.isdir(kind_dir):
                continue
            for name in sorted(os.listdir(kind_dir)):
                with open(os.path.join(kind_dir, name), encoding="utf-8") as f:
                    instance = json.load(f)
                errors = list(validator.iter_errors(instance))
                got = "invalid" if errors else "valid"
                if got == expected:
                    passed += 1
                else:
                    failed += 1
                    detail = "; ".join(e.message for e in errors[:3]) if errors else "no error"
                    print(f"FAIL {type_name}/{expected}/{name}: expected {expected}, got {got} ({detail})", file=sys.stderr)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(64)
    sys.exit(main(sys.argv[1], sys.argv[2]))
