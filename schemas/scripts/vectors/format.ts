/**
 * The vector file format, as zod schemas: the generator checks every case against them and
 * writes `schemas/vectors/vector.schema.json` from them. The semantics are in
 * `schemas/vectors/README.md`.
 */
import { z } from "zod";

/** Version of the vector format (independent of the protocol version). */
export const VECTOR_FORMAT_VERSION = 1;

/** Keys a matcher object may carry (every key of a matcher starts with `$`). */
export const MATCHER_KEYS = [
  "$any",
  "$type",
  "$prefix",
  "$contains",
  "$format",
  "$approx",
  "$tolerance",
  "$nullish",
  "$optional",
  "$repeat",
  "$literal",
  "$capture",
  "$same",
] as const;
export const JSON_TYPES = ["string", "number", "integer", "boolean", "object", "array", "null"] as const;
export const FORMATS = ["uuid-v4", "rfc3339"] as const;

/** A JSON value that may contain matchers (checked by {@link checkPattern}, not by zod). */
export const PatternSchema = z
  .unknown()
  .describe("A JSON value in which objects whose keys all start with `$` are matchers (README: Matching).");

const RepeatSchema = z.tuple([z.string().min(1), z.int().min(1)]);

/** One line the agent writes to the harness's stdin. */
export const LineSchema = z.union([
  z.strictObject({
    json: z
      .unknown()
      .describe('A JSON value written compactly on one line, followed by \\n. `{"$repeat": [text, count]}` stands for a long string.'),
  }),
  z.strictObject({
    text: z.string().describe("Exact text, written as is, followed by `eol`."),
    eol: z.string().optional().describe('Written after the text; default "\\n". "" for a last line without a line end.'),
  }),
]);

export const OutcomeSchema = z.strictObject({
  name: z.string().min(1).describe("reference, recommended, json-rpc, safe-integer, …"),
  note: z.string().min(1),
  expect: z.array(PatternSchema).describe("The responses of the last step under this outcome; [] = nothing is written."),
});

export const StepSchema = z.strictObject({
  send: z.array(LineSchema).min(1),
  expect: z
    .array(PatternSchema)
    .optional()
    .describe("Responses to wait for before the next step; for the last step, everything written until end of output."),
});

export const HarnessCaseSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9-]+\/[a-z0-9._-]+$/),
  area: z.string().regex(/^[a-z-]+$/),
  title: z.string().min(1),
  checklist: z.array(z.int().min(1).max(93)).describe("Items of the specification's conformance checklist (§17) this case checks."),
  spec: z.array(z.string().regex(/^§\d+(\.\d+)*$/)).min(1),
  steps: z.array(StepSchema).min(1),
  outcomes: z
    .array(OutcomeSchema)
    .min(2)
    .optional()
    .describe("Alternatives the specification allows for the last step (its `expect` is then absent)."),
});
export type HarnessCase = z.infer<typeof HarnessCaseSchema>;

// ---------------------------------------------------------------- client vectors

export const ClientCallSchema = z.discriminatedUnion("op", [
  z.strictObject({ op: z.literal("handshake"), capabilities: z.array(z.string()) }),
  z.strictObject({ op: z.literal("send"), event_type: z.string(), payload: z.unknown() }),
  z.strictObject({ op: z.literal("event"), event: z.record(z.string(), z.unknown()) }),
  z.strictObject({ op: z.literal("query"), query_type: z.string(), payload: z.unknown() }),
  z.strictObject({ op: z.literal("batch"), events: z.array(z.record(z.string(), z.unknown())) }),
]);
export type ClientCall = z.infer<typeof ClientCallSchema>;

const FailureSchema = z.strictObject({
  contains: z.array(z.string().min(1)).min(1).describe("Substrings of the error message."),
});

export const ClientStepSchema = z.union([
  z.strictObject({ call: ClientCallSchema, as: z.string().min(1).describe("A name for the call.") }),
  z.strictObject({ expect_sent: PatternSchema.describe("The next message the client writes (captures allowed).") }),
  z.strictObject({ expect_nothing_sent: z.literal(true) }),
  z.strictObject({ reply: PatternSchema.describe('A message the harness writes; `{"$same": name}` inserts a captured value.') }),
  z.strictObject({ reply_text: z.string().describe("A raw line the harness writes (stdio-like transports).") }),
  z.strictObject({ expect_returns: z.strictObject({ call: z.string(), value: PatternSchema }) }),
  z.strictObject({ expect_fails: z.strictObject({ call: z.string(), ...FailureSchema.shape }) }),
  z.strictObject({ expect_pending: z.string().describe("The call has not completed yet.") }),
  z.strictObject({ expect_timeout: z.string().describe("No answer comes: the call fails with a timeout once its timeout elapses.") }),
  z.strictObject({ expect_distinct: z.array(z.string()).min(2).describe("Captured values that must all differ.") }),
]);
export type ClientStep = z.infer<typeof ClientStepSchema>;

export const ClientBranchSchema = z.strictObject({
  name: z.string().min(1),
  note: z.string().min(1),
  steps: z.array(ClientStepSchema).min(1),
});

export const ClientCaseSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9-]+\/[a-z0-9._-]+$/),
  area: z.string().regex(/^[a-z-]+$/),
  title: z.string().min(1),
  checklist: z.array(z.int().min(1).max(93)),
  spec: z.array(z.string().regex(/^§\d+(\.\d+)*$/)).min(1),
  handshaken: z.boolean().describe("true: the client has completed a handshake (answered with `handshake_result`) before the steps."),
  handshake_result: PatternSchema.optional(),
  steps: z.array(ClientStepSchema).min(1),
  branches: z
    .array(ClientBranchSchema)
    .min(2)
    .optional()
    .describe("Alternatives the specification allows, run after `steps`; an implementation follows one."),
});
export type ClientCase = z.infer<typeof ClientCaseSchema>;

/** Checks the matchers inside a pattern; returns problems as `path: message`. */
export function checkPattern(value: unknown, path = "$", inReply = false): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => checkPattern(v, `${path}[${i}]`, inReply));
  if (value === null || typeof value !== "object") return [];
  const entries = Object.entries(value as Record<string, unknown>);
  const dollar = entries.filter(([k]) => k.startsWith("$"));
  if (dollar.length > 0 && dollar.length === entries.length && !(entries.length === 1 && entries[0]![0] === "$extra")) {
    const problems: string[] = [];
    for (const [k, v] of entries) {
      if (!(MATCHER_KEYS as readonly string[]).includes(k)) problems.push(`${path}: unknown matcher ${k}`);
      if (k === "$type" && ![v].flat().every((t) => (JSON_TYPES as readonly unknown[]).includes(t))) problems.push(`${path}: bad $type`);
      if (k === "$format" && !(FORMATS as readonly unknown[]).includes(v)) problems.push(`${path}: bad $format`);
      if (k === "$repeat" && !RepeatSchema.safeParse(v).success) problems.push(`${path}: bad $repeat`);
      if (k === "$optional") problems.push(...checkPattern(v, `${path}.$optional`, inReply));
      if (inReply && k !== "$same" && k !== "$repeat" && k !== "$literal")
        problems.push(`${path}: only $same, $repeat and $literal fill a reply`);
    }
    return problems;
  }
  return entries.flatMap(([k, v]) =>
    k === "$extra" ? (v === true ? [] : [`${path}: $extra must be true`]) : checkPattern(v, `${path}.${k}`, inReply),
  );
}
