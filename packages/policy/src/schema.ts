/**
 * The policy file format as written: the zod schemas of ./format.ts, plus what a file with
 * `extends: default` may add (turning a built-in rule off by its id, which is the default
 * policy's data), and every named type of the JSON Schema bundle `schemas/policy.schema.json`
 * ({@link POLICY_SCHEMA_TYPES}). The schema generator loads this module from source.
 */
import { z } from "zod";
import { DEFAULT_POLICY } from "./default-policy.js";
import {
  FieldConditionSchema,
  NumberConditionSchema,
  PathMatchSchema,
  PolicyActionSchema,
  PolicyFileSchema,
  PolicyMatchSchema,
  PolicyRuleSchema,
  PolicySettingsSchema,
  RateLimitSchema,
  SecretsMatchSchema,
  SessionMatchSchema,
  ShellMatchSchema,
} from "./format.js";

export * from "./format.js";

/**
 * A rule of an `extends: default` file that only turns a built-in rule off, e.g.
 * `{ id: block-mkfs, enabled: false }`: the id of a rule of the default policy, `enabled: false`
 * and at most a `description`. The loader completes it with the built-in rule's members.
 */
export const PolicyRuleOffSchema = z
  .strictObject({
    /** Id of the built-in rule turned off. */
    id: z.enum(DEFAULT_POLICY.rules.map((r) => r.id) as [string, ...string[]]),
    description: z.string().optional(),
    enabled: z.literal(false),
  })
  .describe("In a file with `extends: default`: turns the built-in rule with this id off.");

/**
 * What a policy file may contain, as the JSON Schema `policy.schema.json` describes it: a
 * {@link PolicyFileSchema} document, where a file with `extends: default` may also turn built-in
 * rules off with {@link PolicyRuleOffSchema} entries (which carry no `events`). The loader accepts
 * exactly these documents.
 */
export const PolicyFileDocumentSchema = z
  .union([
    PolicyFileSchema.omit({ extends: true }),
    PolicyFileSchema.extend({
      extends: z.literal("default"),
      rules: z.array(z.union([PolicyRuleSchema, PolicyRuleOffSchema])),
    }),
  ])
  .describe("An AHP policy file (YAML or JSON); with `extends: default` it builds on the built-in default policy.");

/** Every named type of the policy file format, for the JSON Schema bundle `policy.schema.json`. */
export const POLICY_SCHEMA_TYPES: Readonly<Record<string, z.ZodType>> = Object.freeze({
  PolicyFile: PolicyFileDocumentSchema,
  PolicyRuleOff: PolicyRuleOffSchema,
  PolicySettings: PolicySettingsSchema,
  PolicyRule: PolicyRuleSchema,
  PolicyMatch: PolicyMatchSchema,
  PolicyAction: PolicyActionSchema,
  RateLimit: RateLimitSchema,
  FieldCondition: FieldConditionSchema,
  NumberCondition: NumberConditionSchema,
  SessionMatch: SessionMatchSchema,
  ShellMatch: ShellMatchSchema,
  PathMatch: PathMatchSchema,
  SecretsMatch: SecretsMatchSchema,
});
