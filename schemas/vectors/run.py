#!/usr/bin/env python3
"""Replays the AHP wire vectors against a harness that speaks stdio.

Standard library only (Python 3.8 or newer). Every vector in harness/*.jsonl starts the
harness once, writes the vector's lines to its stdin, ends its input, and compares what the
harness wrote to stdout with the vector: ids and error codes exactly, messages by the
specification's prefixes (README.md, "Matching"). The harness must be configured as
harness/profile.json says.

    python3 run.py harness [--filter TEXT]... [--verbose] [--jobs N] [--timeout-ms N]
                           [--vectors DIR] [--list] [--progress] -- COMMAND [ARG...]

Prints a FAIL line per failing vector (with --verbose: the exchange and the differences;
with --progress, a line on stderr as each vector ends),
counts per area, and ends with "N passed, N failed". Exit code 0 when every vector passed,
1 when one failed, 2 on a usage error.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

STDERR_TAIL = 4096
UUID_V4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
MISSING = object()


# ---------------------------------------------------------------- vectors


def load_cases(vectors_dir):
    folder = os.path.join(vectors_dir, "harness")
    cases = []
    for name in sorted(f for f in os.listdir(folder) if f.endswith(".jsonl")):
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                case = json.loads(line)
                if not isinstance(case, dict) or "id" not in case or not case.get("steps"):
                    raise ValueError("%s:%d: not a vector" % (name, number))
                cases.append(case)
    return cases


def is_object(v):
    return isinstance(v, dict)


def is_matcher(v):
    return is_object(v) and len(v) > 0 and all(k.startswith("$") for k in v) and list(v) != ["$extra"]


def expand(value):
    """Expands {"$repeat": [text, n]} and {"$literal": v} in a value to send."""
    if isinstance(value, list):
        return [expand(v) for v in value]
    if not is_object(value):
        return value
    if is_matcher(value):
        if "$repeat" in value:
            text, count = value["$repeat"]
            return text * count
        if "$literal" in value:
            return value["$literal"]
    return {k: expand(v) for k, v in value.items()}


def line_text(line):
    if "json" in line:
        return json.dumps(expand(line["json"]), ensure_ascii=False, separators=(",", ":"))
    return line["text"]


def line_bytes(line):
    eol = line.get("eol", "\n") if "text" in line else "\n"
    return (line_text(line) + eol).encode("utf-8")


# ---------------------------------------------------------------- matching


def type_of(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def equal(a, b):
    """JSON equality: 1 and 1.0 are equal numbers, true is not 1."""
    if type_of(a) in ("integer", "number") and type_of(b) in ("integer", "number"):
        return a == b
    if type_of(a) != type_of(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return set(a) == set(b) and all(equal(a[k], b[k]) for k in a)
    return a == b


def clip(text, limit):
    return text if len(text) <= limit else "%s… (%d characters)" % (text[:limit], len(text))


def short(v, limit=160):
    if v is MISSING:
        return "(absent)"
    return clip(json.dumps(v, ensure_ascii=False, separators=(",", ":")), limit)


def match(pattern, actual, path="$", captures=None):
    """Differences between a value and a pattern; [] when it matches. MISSING = absent member."""
    if captures is None:
        captures = {}
    if is_matcher(pattern):
        return match_matcher(pattern, actual, path, captures)
    if actual is MISSING:
        return ["%s: missing, expected %s" % (path, short(pattern))]
    if isinstance(pattern, list):
        if not isinstance(actual, list):
            return ["%s: expected an array, got %s" % (path, short(actual))]
        if len(actual) != len(pattern):
            return ["%s: expected %d elements, got %d: %s" % (path, len(pattern), len(actual), short(actual))]
        problems = []
        for i, (p, a) in enumerate(zip(pattern, actual)):
            problems += match(p, a, "%s[%d]" % (path, i), captures)
        return problems
    if is_object(pattern):
        if not is_object(actual):
            return ["%s: expected an object, got %s" % (path, short(actual))]
        problems = []
        for k, p in pattern.items():
            if k != "$extra":
                problems += match(p, actual.get(k, MISSING), "%s.%s" % (path, k), captures)
        if pattern.get("$extra") is not True:
            for k in actual:
                if k not in pattern:
                    problems.append("%s.%s: unexpected member %s" % (path, k, short(actual[k])))
        return problems
    if type_of(pattern) == "integer" and type_of(actual) == "number":
        # An integer written with a fraction (1500.0): the reference rejects it (spec §3.9).
        return ["%s: expected the integer %s, got %s" % (path, pattern, json.dumps(actual))]
    if equal(pattern, actual):
        return []
    return ["%s: expected %s, got %s" % (path, short(pattern), short(actual))]


def match_matcher(m, actual, path, captures):
    if actual is MISSING:
        if m.get("$nullish") is True or "$optional" in m:
            return []
        return ["%s: missing, expected %s" % (path, short(m))]
    problems = []

    def fail(what):
        problems.append("%s: expected %s, got %s" % (path, what, short(actual)))

    if "$literal" in m and not equal(m["$literal"], actual):
        fail(short(m["$literal"]))
    if m.get("$nullish") is True and actual is not None:
        fail("null or nothing")
    if "$optional" in m:
        problems += match(m["$optional"], actual, path, captures)
    if "$type" in m:
        types = m["$type"] if isinstance(m["$type"], list) else [m["$type"]]
        t = type_of(actual)
        if t not in types and not (t == "integer" and "number" in types):
            fail("a value of type %s" % " or ".join(types))
    if "$prefix" in m and not (isinstance(actual, str) and actual.startswith(m["$prefix"])):
        fail("a string starting with %s" % short(m["$prefix"]))
    if "$contains" in m:
        parts = m["$contains"] if isinstance(m["$contains"], list) else [m["$contains"]]
        for part in parts:
            if not (isinstance(actual, str) and part in actual):
                fail("a string containing %s" % short(part))
    if "$format" in m:
        pattern = UUID_V4 if m["$format"] == "uuid-v4" else RFC3339
        if not (isinstance(actual, str) and pattern.match(actual)):
            fail("a %s string" % m["$format"])
    if "$approx" in m:
        tolerance = m.get("$tolerance", 1e-6)
        if not (type_of(actual) in ("integer", "number") and abs(actual - m["$approx"]) <= tolerance):
            fail("%s within %s" % (m["$approx"], tolerance))
    if "$repeat" in m:
        text, count = m["$repeat"]
        if actual != text * count:
            fail("%s repeated %d times" % (short(text), count))
    if "$same" in m:
        name = m["$same"]
        if name not in captures:
            problems.append("%s: nothing captured as %s" % (path, name))
        elif not equal(captures[name], actual):
            fail("the value captured as %s (%s)" % (name, short(captures[name])))
    if "$capture" in m and not problems:
        captures[m["$capture"]] = actual
    return problems


# ---------------------------------------------------------------- responses


def reject_constant(name):
    raise ValueError("%s is not JSON" % name)


def parse_written(text):
    """(value or MISSING, problems) for one line of the harness's stdout."""
    try:
        value = json.loads(text, parse_constant=reject_constant)
    except ValueError:
        return MISSING, ["stdout line is not JSON: %s" % clip(text, 120)]
    problems = []
    if not is_object(value):
        return value, ["stdout line is not a JSON-RPC response: %s" % clip(text, 120)]
    rid = value.get("id", MISSING)
    if value.get("jsonrpc") != "2.0":
        problems.append('response %s: jsonrpc is %s, not "2.0"' % (short(rid), short(value.get("jsonrpc", MISSING))))
    if type_of(rid) not in ("string", "integer", "null") or rid is MISSING:
        problems.append("response without a string, integer or null id: %s" % short(value))
    has_result = "result" in value
    has_error = "error" in value
    if has_result == has_error:
        problems.append("response %s must carry exactly one of result and error: %s" % (short(rid), short(value)))
    if has_result and value["result"] is None:
        problems.append('response %s has "result": null' % short(rid))
    if has_error:
        error = value["error"]
        if not (is_object(error) and type_of(error.get("code")) == "integer" and isinstance(error.get("message"), str)):
            problems.append("response %s: error needs an integer code and a string message: %s" % (short(rid), short(error)))
    return value, problems


def id_of(v):
    return v.get("id", MISSING) if is_object(v) else MISSING


def same_id(a, b):
    return a is not MISSING and b is not MISSING and type_of(a) == type_of(b) and a == b


def without_error_data(v):
    if is_object(v) and is_object(v.get("error")) and "data" in v["error"]:
        v = dict(v)
        v["error"] = {k: x for k, x in v["error"].items() if k != "data"}
    return v


def compare_responses(expected, written):
    remaining = list(written)
    problems = []
    for e in expected:
        rid = id_of(e)
        index = next((i for i, w in enumerate(remaining) if same_id(id_of(w), rid)), None)
        if index is None:
            problems.append("no response with id %s; expected %s" % (short(rid), short(e, 300)))
            continue
        w = remaining.pop(index)
        problems += ["response %s: %s" % (short(rid), p) for p in match(e, without_error_data(w))]
    for w in remaining:
        problems.append("unexpected response %s" % short(w, 300))
    return problems


# ---------------------------------------------------------------- running one case


class Harness:
    """A harness process with reader threads for stdout (lines split on \\n only) and stderr."""

    def __init__(self, command):
        self.lines = []
        self.ended = False
        self.stderr = b""
        self.cond = threading.Condition()
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.threads = [threading.Thread(target=self._read_stdout, daemon=True), threading.Thread(target=self._read_stderr, daemon=True)]
        for t in self.threads:
            t.start()

    def _read_stdout(self):
        pending = b""
        while True:
            chunk = self.proc.stdout.read1(65536) if hasattr(self.proc.stdout, "read1") else self.proc.stdout.read(65536)
            if not chunk:
                break
            pending += chunk
            parts = pending.split(b"\n")
            pending = parts.pop()
            with self.cond:
                for part in parts:
                    self.lines.append(part.decode("utf-8", "replace").rstrip("\r"))
                self.cond.notify_all()
        with self.cond:
            if pending:
                self.lines.append(pending.decode("utf-8", "replace").rstrip("\r"))
            self.ended = True
            self.cond.notify_all()

    def _read_stderr(self):
        while True:
            chunk = self.proc.stderr.read(4096)
            if not chunk:
                break
            self.stderr = (self.stderr + chunk)[-STDERR_TAIL:]

    def write(self, data):
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    def end_input(self):
        try:
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    def wait_for(self, done, deadline):
        with self.cond:
            while not done():
                if self.ended:
                    return done()
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(left)
            return True

    def finish(self):
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for t in self.threads:
            t.join(timeout=2)


def run_case(case, command, timeout_ms):
    problems = []
    try:
        harness = Harness(command)
    except OSError as error:
        return {"id": case["id"], "area": case["area"], "passed": False, "problems": ["cannot start %s: %s" % (command[0], error)], "written": [], "stderr": ""}
    deadline = time.monotonic() + timeout_ms / 1000.0
    consumed = set()
    steps = case["steps"]

    def values():
        return [parse_written(text)[0] for text in harness.lines]

    try:
        for index, step in enumerate(steps):
            for line in step["send"]:
                harness.write(line_bytes(line))
            if index == len(steps) - 1 or "expect" not in step:
                continue
            ids = [id_of(e) for e in step["expect"]]

            def arrived():
                vs = values()
                return all(any(j not in consumed and same_id(id_of(v), rid) for j, v in enumerate(vs)) for rid in ids)

            if not harness.wait_for(arrived, deadline):
                problems.append("step %d: no answer with id %s within %d ms" % (index + 1, ", ".join(short(i) for i in ids), timeout_ms))
                break
            vs = values()
            taken = []
            for rid in ids:
                j = next(j for j, v in enumerate(vs) if j not in consumed and same_id(id_of(v), rid))
                consumed.add(j)
                taken.append(vs[j])
            problems += ["step %d: %s" % (index + 1, p) for p in compare_responses(step["expect"], taken)]
        harness.end_input()
        if not harness.wait_for(lambda: harness.ended, deadline):
            problems.append("the harness did not end its output within %d ms after end of input" % timeout_ms)
    finally:
        harness.end_input()
        harness.finish()

    written = []
    for i, text in enumerate(harness.lines):
        value, line_problems = parse_written(text)
        problems += line_problems
        if i not in consumed:
            written.append(text if value is MISSING else value)
    outcome = None
    if not problems and case.get("outcomes"):
        tries = [(o["name"], compare_responses(o["expect"], written)) for o in case["outcomes"]]
        hit = next((name for name, p in tries if not p), None)
        if hit is not None:
            outcome = hit
        else:
            name, closest = min(tries, key=lambda t: len(t[1]))
            problems.append("matches none of the allowed outcomes (%s); closest: %s" % (", ".join(n for n, _ in tries), name))
            problems += ["%s: %s" % (name, p) for p in closest]
    elif not problems:
        problems += compare_responses(steps[-1].get("expect", []), written)
    result = {
        "id": case["id"],
        "area": case["area"],
        "passed": not problems,
        "problems": problems,
        "written": list(harness.lines),
        "stderr": harness.stderr.decode("utf-8", "replace"),
    }
    if outcome is not None:
        result["outcome"] = outcome
    return result


# ---------------------------------------------------------------- report


def visible(text, limit=300):
    return clip(json.dumps(text, ensure_ascii=False)[1:-1], limit)


def describe_failure(case, r, verbose):
    more = " (+%d more)" % (len(r["problems"]) - 1) if len(r["problems"]) > 1 else ""
    out = ["FAIL %s: %s%s" % (r["id"], r["problems"][0] if r["problems"] else "failed", more)]
    if not verbose:
        return out[0] + "\n"
    out.append("  " + case["title"])
    out.append("  checklist: %s; spec: %s" % (", ".join(str(n) for n in case["checklist"]) or "-", ", ".join(case["spec"])))
    for i, step in enumerate(case["steps"]):
        out.append("  step %d sent:" % (i + 1))
        out += ["    > " + visible(line_text(line)) for line in step["send"]]
        out += ["    expected: " + short(e, 300) for e in step.get("expect", [])]
    for o in case.get("outcomes", []):
        out.append("  outcome %s: %s" % (o["name"], o["note"]))
        out += ["    expected: " + short(e, 300) for e in o["expect"]] or ["    expected: nothing"]
    out.append("  written:")
    out += ["    < " + visible(w) for w in r["written"]] or ["    (nothing)"]
    out.append("  differences:")
    out += ["    - " + p for p in r["problems"]]
    if r["stderr"].strip():
        out.append("  stderr (tail):")
        out += ["    " + l for l in r["stderr"].rstrip().split("\n")]
    return "\n".join(out) + "\n"


def summary(results):
    areas = {}
    outcomes = {}
    for r in results:
        a = areas.setdefault(r["area"], [0, 0])
        a[0 if r["passed"] else 1] += 1
        if "outcome" in r:
            outcomes[r["outcome"]] = outcomes.get(r["outcome"], 0) + 1
    width = max([4] + [len(k) for k in areas])
    rows = ["%s  passed  failed" % "area".ljust(width)]
    rows += ["%s  %6d  %6d" % (name.ljust(width), p, f) for name, (p, f) in areas.items()]
    if outcomes:
        rows.append("outcomes where the spec allows alternatives: " + ", ".join("%s %d" % kv for kv in outcomes.items()))
    passed = sum(1 for r in results if r["passed"])
    rows.append("%d passed, %d failed" % (passed, len(results) - passed))
    return "\n".join(rows) + "\n"


def main(argv):
    own, command = (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    parser = argparse.ArgumentParser(prog="run.py", description="Replays the AHP wire vectors against a stdio harness.")
    parser.add_argument("target", choices=["harness"])
    parser.add_argument("--filter", action="append", default=[], help="only vectors whose id contains TEXT (repeatable)")
    parser.add_argument("--verbose", action="store_true", help="show the exchange and the differences of failing vectors")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="vectors run in parallel (default: the number of CPUs)")
    parser.add_argument("--timeout-ms", type=int, default=10000, help="time a vector may take (default 10000)")
    parser.add_argument("--vectors", default=os.path.dirname(os.path.abspath(__file__)), help="the vectors folder")
    parser.add_argument("--list", action="store_true", help="list the vectors and exit")
    parser.add_argument("--progress", action="store_true", help="print a line on stderr as each vector ends (ok/FAIL, done/total)")
    args = parser.parse_args(own)
    cases = load_cases(args.vectors)
    if args.filter:
        cases = [c for c in cases if any(f in c["id"] for f in args.filter)]
    if args.list:
        for c in cases:
            print("%s  %s" % (c["id"], c["title"]))
        return 0
    if not cases:
        parser.error("no vector matches %s" % ", ".join(args.filter))
    if not command:
        parser.error("give the command that starts the harness after --")
    if args.jobs < 1 or args.timeout_ms < 1:
        parser.error("--jobs and --timeout-ms must be positive")
    by_id = {c["id"]: c for c in cases}
    lock = threading.Lock()

    done = [0]

    def one(case):
        r = run_case(case, command, args.timeout_ms)
        with lock:
            if not r["passed"]:
                sys.stdout.write(describe_failure(by_id[r["id"]], r, args.verbose))
                sys.stdout.flush()
            done[0] += 1
            if args.progress:
                sys.stderr.write("%s %s (%d/%d)\n" % ("ok" if r["passed"] else "FAIL", r["id"], done[0], len(cases)))
                sys.stderr.flush()
        return r

    with ThreadPoolExecutor(max_workers=min(args.jobs, len(cases))) as pool:
        results = list(pool.map(one, cases))
    sys.stdout.write(summary(results))
    return 0 if all(r["passed"] for r in results) else 1


if __name__ == "__main__":
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(encoding="utf-8", errors="replace")
    sys.exit(main(sys.argv[1:]))
