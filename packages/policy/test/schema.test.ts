import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { EVENT_TABLE, EVENT_TYPES, toJsonSchemaBundle } from "@ahp/core";
import { DEFAULT_POLICY, loadPolicy, POLICY_DECISION_TAGS, POLICY_SCHEMA_TYPES } from "@ahp/policy";
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

  describe("files that extend the default policy: the schema accepts what the loader accepts", () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema(bundle);
    const validate = ajv.getSchema(`${bundle.$id}#/$defs/PolicyFile`)!;
    const loads = (doc: unknown) => {
      try {
        loadPolicy(doc as never);
        return true;
      } catch {
        return false;
      }
    };
    const own = {
      id: "no-sudo",
      events: "pre_action",
      match: { shell: { program: "sudo" } },
      action: { decision: "escalate", reason: "sudo" },
    };
    const cases: [string, unknown, boolean][] = [
      ["a built-in rule turned off", { version: 1, extends: "default", rules: [{ id: "block-mkfs", enabled: false }] }, true],
      [
        "turned off with a description, beside an own rule and a replaced one",
        {
          version: 1,
          extends: "default",
          rules: [
            { id: "escalate-persistence", enabled: false, description: "dotfiles are managed here" },
            own,
            { id: "block-mkfs", events: "pre_action", action: { decision: "escalate", reason: "formatting needs approval" } },
          ],
        },
        true,
      ],
      ["a full rule turned off (events given)", { version: 1, extends: "default", rules: [{ ...own, enabled: false }] }, true],
      ["turning off without extends", { version: 1, rules: [{ id: "block-mkfs", enabled: false }] }, false],
      [
        "turning off a rule the default policy does not have",
        { version: 1, extends: "default", rules: [{ id: "no-such-rule", enabled: false }] },
        false,
      ],
      ["enabled: true without events", { version: 1, extends: "default", rules: [{ id: "block-mkfs", enabled: true }] }, false],
      [
        "a disable-only rule with another member",
        { version: 1, extends: "default", rules: [{ id: "block-mkfs", enabled: false, match: {} }] },
        false,
      ],
      ["an own rule without events", { version: 1, extends: "default", rules: [{ id: "mine", action: { decision: "block" } }] }, false],
      ["extends something else", { version: 1, extends: "strict", rules: [] }, false],
    ];
    it.each(cases)("%s", (_name, doc, valid) => {
      expect(loads(doc)).toBe(valid);
      expect(validate(doc)).toBe(valid);
    });
  });
});
