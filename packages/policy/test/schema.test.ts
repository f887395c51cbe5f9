import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { EVENT_TABLE, EVENT_TYPES, toJsonSchemaBundle } from "@ahp/core";
import { DEFAULT_POLICY, POLICY_DECISION_TAGS, POLICY_SCHEMA_TYPES } from "@ahp/policy";
import { parse } from "yaml";

const bundle = JSON.parse(readFileSync(new URL("../../../schemas/policy.schema.json", import.meta.url), "utf8")) as {
  $id: string;
  $defs: Record<string, unknown>;
};

describe("policy schema", () => {
  it("knows every decision tag of every event type", () => {
    const tags = new Set<string>();
    for (const type of EVENT_TYPES) {
      const schema = EVENT_TABLE[type].decisionSchema as unknown as { options?: { shape: { decision: { value: string } } }[] } | undefined;
      for (const option of schema?.options ?? []) tags.add(option.shape.decision.value);
    }
    expect(new Set(POLICY_DECISION_TAGS)).toEqual(tags);
  });

  it("exports the required named types and the checked-in bundle is current", () => {
    for (const name of ["PolicyFile", "PolicyRule", "PolicyMatch", "PolicyAction"]) expect(POLICY_SCHEMA_TYPES).toHaveProperty(name);
    const fresh = toJsonSchemaBundle(POLICY_SCHEMA_TYPES, { id: bundle.$id });
    expect(fresh.$defs).toEqual(bundle.$defs);
  });

  it("the JSON Schema accepts the default policy and the YAML file, and rejects what zod rejects", () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema(bundle);
    const validate = ajv.getSchema(`${bundle.$id}#/$defs/PolicyFile`)!;
    expect(validate(DEFAULT_POLICY)).toBe(true);
    expect(validate(parse(readFileSync(new URL("../policies/default.yaml", import.meta.url), "utf8")))).toBe(true);
    expect(validate({ version: 1, rules: [{ id: "x", events: "pre_action", matchh: {}, action: { decision: "allow" } }] })).toBe(false);
    expect(validate({ version: 1, rules: [{ id: "x", events: "nope", action: { decision: "allow" } }] })).toBe(false);
    expect(validate({ version: 2, rules: [] })).toBe(false);
    expect(
      validate({
        version: 1,
        rules: [
          {
            id: "x",
            events: "pre_action",
            match: { any: [{ not: { fields: { "payload.a": { not: { equals: 1 } } } } }] },
            action: { decision: "allow" },
          },
        ],
      }),
    ).toBe(true);
  });
});
