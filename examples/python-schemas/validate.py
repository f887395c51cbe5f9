#!/usr/bin/env python3
"""Validate AHP 2.4 JSON-RPC messages with the JSON Schema set of @ahp/schemas.

Only the standard library and `jsonschema` 4.x are needed (Debian/Ubuntu: `apt-get install
python3-jsonschema`; elsewhere `pip install jsonschema`). The schemas come from the npm package
@ahp/schemas (`npm install @ahp/schemas` puts them under node_modules/@ahp/schemas/).

    python3 validate.py [--schemas DIR] FILE...     # or - for standard input

Each message is checked in layers, as a receiver would:
  1. the JSON-RPC envelope (`JsonRpcMessage`);
  2. the params of the method (`meta.json`: methods[...].params), e.g. `AhpEvent` for ahp/event;
  3. for an event type with a typed payload (`meta.json`: event_types[...].payload), the payload.
Prints "ok" or one line per error (with its JSON path) for each file; exits 1 if any is invalid.
"""

import json
import os
import sys

try:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match
except ImportError:
    print("jsonschema is not installed (Debian/Ubuntu: apt-get install -y python3-jsonschema; or pip install jsonschema)", file=sys.stderr)
    sys.exit(2)

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCHEMAS = os.path.join(HERE, "node_modules", "@ahp", "schemas")


class Schemas:
    """The bundle and its meta data; one validator per named type."""

    def __init__(self, directory):
        with open(os.path.join(directory, "ahp.schema.json"), encoding="utf-8") as f:
            self.bundle = json.load(f)
        with open(os.path.join(directory, "meta.json"), encoding="utf-8") as f:
            self.meta = json.load(f)
        Draft202012Validator.check_schema(self.bundle)
        self._validators = {}

    def validator(self, ref):
        """A validator for `ahp.schema.json#/$defs/<Name>` (or just `<Name>`)."""
        name = ref.rsplit("/", 1)[-1]
        if name not in self._validators:
            # The bundle with a root $ref: works with every jsonschema 4.x, with or without the
            # `referencing` library (see the @ahp/schemas README for the registry form).
            self._validators[name] = Draft202012Validator({**self.bundle, "$ref": "#/$defs/" + name})
        return self._validators[name]


def path_of(error, prefix):
    parts = [prefix] + ["[%d]" % p if isinstance(p, int) else "." + str(p) for p in error.absolute_path]
    return "".join(parts)


def check(schemas, message):
    """Error lines for one message (empty when it is valid)."""
    errors = []

    def layer(ref, instance, prefix):
        found = sorted(schemas.validator(ref).iter_errors(instance), key=lambda e: list(e.absolute_path))
        for e in found:
            # "not valid under any of the given schemas" says little: name the closest branch's problem.
            if e.context:
                e = best_match(e.context)
            errors.append("%s: %s" % (path_of(e, prefix), e.message))
        return not found

    if not layer("JsonRpcMessage", message, "$"):
        return errors
    method = message.get("method")
    if method is None:
        return errors  # a response: its result type depends on the request it answers
    spec = schemas.meta["methods"].get(method)
    if spec is None:
        return ["$.method: unknown method %r (known: %s)" % (method, ", ".join(sorted(schemas.meta["methods"])))]
    if not layer(spec["params"], message.get("params"), "$.params"):
        return errors
    if method == "ahp/event":
        event_type = message["params"]["event_type"]
        info = schemas.meta["event_types"][event_type]
        form = "request" if "id" in message else "notification"
        if info["form"] != form:
            errors.append("$: %s is sent as a %s, not a %s" % (event_type, info["form"], form))
        if "payload" in info:
            layer(info["payload"], message["params"].get("payload"), "$.params.payload")
    return errors


def main(argv):
    args = argv[1:]
    directory = DEFAULT_SCHEMAS
    if len(args) >= 2 and args[0] == "--schemas":
        directory, args = args[1], args[2:]
    if not args:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: validate.py [--schemas DIR] FILE...  (- for standard input)", file=sys.stderr)
        return 64
    schemas = Schemas(directory)
    invalid = 0
    for name in args:
        try:
            message = json.load(sys.stdin) if name == "-" else json.load(open(name, encoding="utf-8"))
        except (OSError, ValueError) as e:
            print("%s: cannot read: %s" % (name, e))
            invalid += 1
            continue
        errors = check(schemas, message)
        if errors:
            invalid += 1
            for line in errors:
                print("%s: %s" % (name, line))
        else:
            print("%s: ok" % name)
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
