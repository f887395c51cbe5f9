/**
 * The format of a policy test file (`ahp policy test FILE`): the policy under test and cases,
 * each an event (or a shorthand for one) and what the policy must decide. Cases of one file run
 * in order against one engine, so session state (rate limits, counters, budgets) carries over.
 */
import { z } from "zod";
import { POLICY_DECISION_TAGS, POLICY_EVENT_TYPES } from "./schema.js";

/** What a case expects: the decision tag, the rule id (`null`: no rule decided) and a substring of the reason. */
export const PolicyTestExpectSchema = z
  .strictObject({
    /** The decision tag (`allow`, `block`, `escalate`, `defer`, `modify`, typed tags such as `approve`), or `none`. */
    decision: z.union([z.enum(POLICY_DECISION_TAGS), z.literal("none")]).optional(),
    /** Id of the rule that must decide; `null`: no rule may decide (the default or nobody decided). */
    rule: z.string().min(1).nullable().optional(),
    /** A substring the decision's reason must contain. */
    reason: z.string().optional(),
  })
  .describe("What the policy must decide for the case; at least one member.");

/**
 * One case. Give the event whole (`event`: `event_type` and `payload`, the other members get
 * defaults), or a shorthand: `command` (a `pre_action` of the shell tool `bash`, or of `tool`),
 * or `tool` with `input` (a `pre_action` whose payload is `{ tool_name, arguments: input }`).
 */
export const PolicyTestCaseSchema = z
  .strictObject({
    name: z.string().min(1),
    /** An AHP event; `session_id`, `agent_id`, `depth` and `timestamp` default (session: the file's). */
    event: z
      .looseObject({
        event_type: z.enum(POLICY_EVENT_TYPES),
        payload: z.unknown().optional(),
      })
      .optional(),
    /** Shorthand: a shell command run by the tool `tool` (default `bash`). */
    command: z.string().optional(),
    /** Shorthand: the tool name (with `input`, or with `command`). */
    tool: z.string().min(1).optional(),
    /** Shorthand: the tool's input (the payload's `arguments`). */
    input: z.record(z.string(), z.unknown()).optional(),
    /** Session id of the event (default: the file's `session`). */
    session: z.string().min(1).optional(),
    /** Milliseconds the test clock moves forward before this case (rate limits refill, budgets age). */
    advance_ms: z.number().int().nonnegative().optional(),
    expect: PolicyTestExpectSchema,
  })
  .describe("One case: an event (or a shorthand) and what the policy must decide.");

/** A whole policy test file. */
export const PolicyTestFileSchema = z
  .strictObject({
    /** The policy under test: a path relative to this file, or `default` for the built-in policy. */
    policy: z.string().min(1),
    description: z.string().optional(),
    /** Session id of the cases that do not name one. Default `test`. */
    session: z.string().min(1).optional(),
    /** Start time of the test clock (RFC 3339). Default 2026-01-01T00:00:00Z. */
    start_time: z.iso.datetime({ offset: true }).optional(),
    /** The cases, run in order against one engine. */
    cases: z.array(PolicyTestCaseSchema).min(1),
  })
  .describe("A policy test file for `ahp policy test` (YAML or JSON).");

/** A validated policy test file (see {@link PolicyTestFileSchema}). */
export type PolicyTestFile = z.infer<typeof PolicyTestFileSchema>;
/** One validated case of a policy test file (see {@link PolicyTestCaseSchema}). */
export type PolicyTestCase = z.infer<typeof PolicyTestCaseSchema>;
/** What a case expects (see {@link PolicyTestExpectSchema}). */
export type PolicyTestExpect = z.infer<typeof PolicyTestExpectSchema>;

/** Every named type of the policy test format, for the JSON Schema bundle `policy-test.schema.json`. */
export const POLICY_TEST_SCHEMA_TYPES: Readonly<Record<string, z.ZodType>> = Object.freeze({
  PolicyTestFile: PolicyTestFileSchema,
  PolicyTestCase: PolicyTestCaseSchema,
  PolicyTestExpect: PolicyTestExpectSchema,
});
