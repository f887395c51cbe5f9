import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { toJsonSchemaBundle } from "@ahp/core";
import {
  POLICY_TEST_SCHEMA_TYPES,
  PolicyError,
  formatPolicyTestFailure,
  loadPolicy,
  parsePolicyTests,
  runPolicyTestFile,
  runPolicyTests,
} from "@ahp/policy";

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/policy-tests/${name}`, import.meta.url));
const POLICY = loadPolicy({
  version: 1,
  rules: [
    { id: "no-ls", events: "pre_action", match: { shell: { program: "ls" } }, action: { decision: "block", reason: "listing" } },
    { id: "shell-rate", events: "pre_action", match: { tool: "bash" }, rate_limit: { rate: 1, interval_ms: 60000, burst: 1 } },
  ],
});

describe("policy tests", () => {
  it("runs a file's cases in order with session state carried over (rate limits, the test clock)", async () => {
    const result = await runPolicyTestFile(fixture("candidate.test.yaml"));
    expect(result.cases.map((c) => [c.name, c.ok, c.failures])).toEqual([
      ["listing is blocked", true, []],
      ["first echo passes", true, []],
      ["second echo passes", true, []],
      ["third echo is over the burst", true, []],
      ["a minute later there is a token again", true, []],
      ["a write tool is not shell", true, []],
    ]);
    expect(result).toMatchObject({ passed: 6, failed: 0, policy: "candidate.yaml" });
  });

  it("reports each failed expectation with what was decided", () => {
    const parsed = parsePolicyTests(
      `policy: default
cases:
  - name: wrong on every count
    command: ls
    expect: { decision: allow, rule: other, reason: nope }
  - name: the first echo takes the only token
    command: echo
    expect: { decision: allow }
  - name: the second echo finds the bucket empty
    command: echo
    expect: { decision: allow }
`,
      "t.yaml",
    );
    const result = runPolicyTests(parsed, POLICY, "t.yaml", "inline");
    expect(result.failed).toBe(2);
    const first = result.cases[0]!;
    expect(first.failures).toEqual([
      "expected decision allow, got block",
      "expected rule other, got rule no-ls",
      'expected a reason containing "nope", got "listing"',
    ]);
    expect(first.line).toBe(3);
    const text = formatPolicyTestFailure(result, first);
    expect(text).toContain("FAIL t.yaml:3 wrong on every count");
    expect(text).toContain('decided: {"decision":"block"');
    expect(text).toContain("(rule no-ls)");
    // ls matched no-ls before shell-rate (no token taken); the first echo took the only token.
    expect(result.cases[1]!.ok).toBe(true);
    expect(result.cases[2]!.failures).toEqual(["expected decision allow, got defer"]);
  });

  it("refuses an invalid test file with its file, line and the problem", () => {
    const bad = (text: string) => {
      try {
        parsePolicyTests(text, "bad.yaml");
      } catch (error) {
        return error as PolicyError;
      }
      throw new Error("accepted");
    };
    expect(bad("policy: default\ncases:\n  - name: x\n    command: ls\n    expect: {}\n").message).toMatch(
      /bad\.yaml:5:\d+: `expect` needs/,
    );
    expect(
      bad("policy: default\ncases:\n  - name: x\n    command: ls\n    event: { event_type: pre_action }\n    expect: { decision: allow }\n")
        .message,
    ).toMatch(/bad\.yaml:3:\d+: give one of/);
    expect(bad("policy: default\ncases:\n  - name: x\n    command: ls\n    expect: { decison: allow }\n").message).toMatch(
      /bad\.yaml:5:\d+: unknown field `decison`/,
    );
    expect(bad("policy: default\ncases:\n  - name: x\n    command: ls\n    expect: { decision: permit }\n")).toBeInstanceOf(PolicyError);
  });

  it("names the policy file when the policy under test is invalid", async () => {
    await expect(runPolicyTestFile(fixture("broken-policy.test.yaml"))).rejects.toThrow(/broken\.yaml:\d+:\d+: rule "oops"/);
  });
});

describe("policy test JSON Schema", () => {
  const bundle = JSON.parse(readFileSync(new URL("../../../schemas/policy-test.schema.json", import.meta.url), "utf8")) as {
    $id: string;
    $defs: Record<string, unknown>;
  };

  it("is generated from the zod schemas (pnpm schemas)", () => {
    expect(toJsonSchemaBundle(POLICY_TEST_SCHEMA_TYPES, { id: bundle.$id }).$defs).toEqual(bundle.$defs);
  });

  it("accepts the fixture and rejects what the runner rejects", () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema(bundle);
    const validate = ajv.getSchema(`${bundle.$id}#/$defs/PolicyTestFile`)!;
    expect(validate(parse(readFileSync(fixture("candidate.test.yaml"), "utf8")))).toBe(true);
    expect(validate({ policy: "p.yaml", cases: [{ name: "x", command: "ls", expect: { decison: "allow" } }] })).toBe(false);
    expect(validate({ policy: "p.yaml", cases: [{ name: "x", command: "ls", expect: { decision: "permit" } }] })).toBe(false);
    expect(validate({ policy: "p.yaml", cases: [] })).toBe(false);
  });
});
