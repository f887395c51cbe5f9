/**
 * Runs validate.py with Python's `jsonschema` against the schemas of the installed @ahp/schemas
 * package. Debian's interpreter by default (`AHP_PYTHON` overrides it). Locally the test is
 * skipped when the module is missing; in CI (`CI=true`) it fails, naming the install command.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { AhpEventSchema, EVENT_TABLE } from "@ahp/core";
import { describe, expect, it } from "vitest";

const PYTHON = process.env.AHP_PYTHON ?? "/usr/bin/python3";
const INSTALL_HINT = "apt-get install -y python3-jsonschema";
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const probe = spawnSync(PYTHON, ["-c", "import jsonschema; jsonschema.Draft202012Validator"], { encoding: "utf8", timeout: 15_000 });
const ready = probe.status === 0;
const inCi = process.env.CI === "true";

const validate = (args: string[], input?: string) => {
  const r = spawnSync(PYTHON, ["validate.py", ...args], { cwd: ROOT, encoding: "utf8", input, timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
};

describe.skipIf(!ready && !inCi)(`python-schemas example (${PYTHON} with jsonschema)`, () => {
  it("Python can import jsonschema", () => {
    expect(probe.status, `${PYTHON} cannot import jsonschema: install it (${INSTALL_HINT})\n${probe.stderr}`).toBe(0);
  });

  it("reports each message as ok or with its errors and JSON paths, and exits 1 when one is invalid", () => {
    const r = validate([
      "messages/handshake.json",
      "messages/idle-bad-payload.json",
      "messages/post-action-as-request.json",
      "messages/pre-action.json",
    ]);
    expect(r.stdout.trim().split("\n")).toEqual([
      "messages/handshake.json: ok",
      "messages/idle-bad-payload.json: $.params.payload: 'idle_reason' is a required property",
      "messages/idle-bad-payload.json: $.params.payload.idle_duration_ms: -5 is less than the minimum of 0",
      "messages/post-action-as-request.json: $: post_action is sent as a notification, not a request",
      "messages/pre-action.json: ok",
    ]);
    expect(r.status).toBe(1);
  });

  it("exits 0 when every message is valid, reads standard input, and refuses an unknown method", () => {
    expect(validate(["messages/handshake.json", "messages/pre-action.json"]).status).toBe(0);
    const fromStdin = validate(["-"], readFileSync(`${ROOT}messages/pre-action.json`, "utf8"));
    expect(fromStdin).toMatchObject({ status: 0, stdout: "-: ok\n" });
    const unknown = validate(["-"], JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ahp/nope", params: {} }));
    expect(unknown.status).toBe(1);
    expect(unknown.stdout).toContain("unknown method 'ahp/nope'");
  });

  it("agrees with @ahp/core's own decoder on the example events", () => {
    for (const file of ["pre-action", "idle-bad-payload"]) {
      const message = JSON.parse(readFileSync(`${ROOT}messages/${file}.json`, "utf8")) as { params: unknown };
      const python = validate([`messages/${file}.json`]).status === 0;
      const event = AhpEventSchema.safeParse(message.params);
      const info = event.success ? EVENT_TABLE[event.data.event_type] : undefined;
      const payload = info?.payloadSchema === undefined ? true : info.payloadSchema.safeParse(event.data?.payload).success;
      expect(event.success && payload, file).toBe(python);
    }
  });

  it("prints usage without arguments (exit 64)", () => {
    const r = validate([]);
    expect(r.status).toBe(64);
    expect(r.stderr).toContain("usage: validate.py");
  });
});

it.skipIf(ready || inCi)(`python-schemas example: skipped, ${PYTHON} cannot import jsonschema (${INSTALL_HINT})`, () => {});
