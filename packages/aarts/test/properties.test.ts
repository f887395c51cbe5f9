/**
 * Property-based tests (fast-check): the round-trip guarantees of spec §5.11 over generated
 * events, verdicts and decisions; agreement of the runtime validator with zod over mutated
 * events; merge laws; and robustness of the shell parser.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  AARTS_SCHEMA_TYPES,
  CANONICAL_TOOL_NAMES,
  fromAhpDecision,
  fromAhpEvent,
  HOOK_POINTS,
  mergeResults,
  parseInstalls,
  tokenizeShell,
  toAhpDecision,
  toAhpEvent,
  validateEvent,
  validateVerdict,
  type AartsEvent,
  type HookResult,
  type Verdict,
} from "@ahp/aarts";

const corpus = new URL("../../../schemas/examples/aarts/", import.meta.url);
const templates = HOOK_POINTS.map(
  (h) => JSON.parse(readFileSync(new URL(`${h}Event/valid/full.json`, corpus), "utf8")) as Record<string, unknown>,
);
const json = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;

const hostId = fc.stringMatching(/^[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,2}$/);
const timestamp = fc
  .date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true })
  .map((d) => d.toISOString());
const text = fc.string({ maxLength: 40 });
const jsonObject = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
const stringOrObject = fc.oneof(text, jsonObject);

/** Valid events of every hook: a corpus template with its envelope and free-form values randomised. */
const validEvent: fc.Arbitrary<AartsEvent> = fc
  .record({
    template: fc.constantFrom(...templates),
    session_id: text,
    timestamp,
    host_id: hostId,
    aarts_version: fc.constantFrom("0.1", "1", "1.2"),
    turn: text,
    locale: fc.option(fc.constantFrom("en", "cs-CZ", "ja"), { nil: undefined }),
    extra: fc.option(jsonObject, { nil: undefined }),
    content: stringOrObject,
  })
  .map(({ template, session_id, timestamp, host_id, aarts_version, turn, locale, extra, content }) => {
    const e: Record<string, unknown> = { ...structuredClone(template), session_id, timestamp, host_id, aarts_version };
    if ("turn_id" in e) e.turn_id = turn;
    if (locale !== undefined) e.locale = locale;
    else delete e.locale;
    for (const key of ["tool_result", "result", "content", "retrieved_content"]) if (key in e) e[key] = content;
    if (extra !== undefined) e.x_extension = extra;
    return e as AartsEvent;
  });

const verdictArb = (withDirectives = true): fc.Arbitrary<Verdict> =>
  fc
    .record(
      {
        decision: fc.constantFrom("allow", "deny", "ask"),
        category: text,
        severity: fc.constantFrom("info", "warning", "critical"),
        confidence: fc.double({ min: 0, max: 1, noNaN: true }),
        source: text,
        artifacts: fc.array(text, { maxLength: 3 }),
        matched_rule_id: text,
        reasons: fc.array(text, { maxLength: 3 }),
        suggested_resolutions: fc.array(fc.constantFrom("allow_always", "deny_similar", "custom"), { maxLength: 2 }),
        directives: withDirectives
          ? fc.record(
              {
                permitted_tools: fc.array(fc.constantFrom(...CANONICAL_TOOL_NAMES), { maxLength: 3 }),
                strip_hooks: fc.boolean(),
                inject_context: fc.record({ position: fc.constantFrom("prepend", "append", "system"), content: text }),
                "x-vendor": jsonObject,
              },
              { requiredKeys: [] },
            )
          : fc.constant(undefined),
      },
      { requiredKeys: ["decision", "category", "severity", "source"] },
    )
    .map((v) => {
      const out = { ...v } as Record<string, unknown>;
      if (out.directives === undefined) delete out.directives;
      return out as Verdict;
    });

const ctx = {
  hookPoint: "PreToolUse" as const,
  requestId: "r",
  eventType: "pre_action",
  harnessName: "h",
  hostModifiable: ["PreToolUse" as const],
};
const safeMetadata = fc.dictionary(fc.constantFrom("policy", "trace", "rules", "note"), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
const reason = fc.string({ maxLength: 30 });
const ahpDecision = fc.oneof(
  fc.record({ decision: fc.constant("allow"), metadata: safeMetadata }, { requiredKeys: ["decision"] }),
  fc.record({ decision: fc.constant("block"), reason, metadata: safeMetadata }, { requiredKeys: ["decision", "reason"] }),
  fc.record(
    { decision: fc.constant("modify"), modified_payload: fc.record({ arguments: jsonObject }), metadata: safeMetadata },
    { requiredKeys: ["decision", "modified_payload"] },
  ),
  fc.record({ decision: fc.constant("defer"), retry_after_ms: fc.nat(600_000), reason }, { requiredKeys: ["decision", "retry_after_ms"] }),
  fc.record({ decision: fc.constant("escalate"), reason, escalation_target: text }, { requiredKeys: ["decision", "reason"] }),
);

describe("§5.11 round trips", () => {
  it("E → A → E: any valid event survives the AHP event (and JSON) unchanged", () => {
    fc.assert(
      fc.property(validEvent, fc.nat(5), (generated, depth) => {
        const event = json(generated) as AartsEvent;
        expect(validateEvent(event).ok).toBe(true);
        const { params } = toAhpEvent(event, { depth });
        expect(fromAhpEvent(json(params) as never)).toEqual(event);
      }),
      { numRuns: 300 },
    );
  });

  it("V → D → V: any valid verdict without x-ahp survives the AHP decision (and JSON) unchanged", () => {
    fc.assert(
      fc.property(verdictArb(), fc.constantFrom(...HOOK_POINTS), (generated, hookPoint) => {
        const verdict = json(generated) as Verdict;
        expect(validateVerdict(verdict).ok).toBe(true);
        const decision = json(toAhpDecision(verdict));
        expect(fromAhpDecision(decision, { ...ctx, hookPoint }).verdict).toEqual(verdict);
      }),
      { numRuns: 300 },
    );
  });

  it("D → V → D: any AHP decision survives the verdict (and JSON) unchanged", () => {
    fc.assert(
      fc.property(ahpDecision, (generated) => {
        const decision = json(generated); // wire data (no -0, no undefined)
        const verdict = fromAhpDecision(decision, ctx).verdict;
        expect(validateVerdict(verdict).ok).toBe(true);
        expect(toAhpDecision(json(verdict) as Verdict)).toEqual(decision);
      }),
      { numRuns: 300 },
    );
  });
});

describe("runtime validator = zod", () => {
  const mutation = fc.record({
    template: fc.constantFrom(...templates),
    op: fc.constantFrom("delete", "set"),
    pick: fc.nat(),
    value: fc.jsonValue({ maxDepth: 2 }),
  });
  it("agrees with the zod AartsEvent schema on mutated events", () => {
    fc.assert(
      fc.property(mutation, ({ template, op, pick, value }) => {
        const event = structuredClone(template);
        const keys = Object.keys(event);
        const key = keys[pick % keys.length]!;
        if (op === "delete") delete event[key];
        else event[key] = value;
        const zod = AARTS_SCHEMA_TYPES.AartsEvent!.safeParse(event).success;
        expect(validateEvent(event).ok).toBe(zod);
      }),
      { numRuns: 1000 },
    );
  });

  it("agrees with the zod Verdict schema on mutated verdicts", () => {
    fc.assert(
      fc.property(verdictArb(), fc.string({ minLength: 1, maxLength: 20 }), fc.jsonValue({ maxDepth: 2 }), (verdict, key, value) => {
        const keys = [...Object.keys(verdict), "directives", "confidence", key];
        const target = keys[key.length % keys.length]!;
        const mutated = { ...verdict, [target]: value };
        expect(validateVerdict(mutated).ok).toBe(AARTS_SCHEMA_TYPES.Verdict!.safeParse(mutated).success);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("merge laws", () => {
  const rank = { allow: 0, ask: 1, deny: 2 } as const;
  const results = fc.array(
    fc.oneof(
      fc
        .constantFrom("allow", "ask", "deny")
        .map((d): HookResult => ({ hookId: "h", ok: true, verdict: { decision: d, category: "c", severity: "info", source: "s" } })),
      fc.constant<HookResult>({ hookId: "f", ok: false, failure: Object.assign(new Error("x"), { failureCause: "timeout" }) as never }),
    ),
    { minLength: 1, maxLength: 6 },
  );
  it("permissive ≤ majority ≤ strict on votes; any failure under fail-closed denies", () => {
    fc.assert(
      fc.property(results, (rs) => {
        const m = (mergePolicy: "permissive" | "strict" | "majority", failurePolicy: "fail-open" | "fail-closed" = "fail-open") =>
          mergeResults(rs, { mergePolicy, failurePolicy }).verdict.decision;
        const p = rank[m("permissive")];
        const s = rank[m("strict")];
        expect(p).toBeLessThanOrEqual(s);
        expect(rank[m("majority")]).toBeLessThanOrEqual(s);
        expect(rank[m("majority")]).toBeGreaterThanOrEqual(p);
        if (rs.some((r) => !r.ok)) expect(m("permissive", "fail-closed")).toBe("deny");
        expect(m("strict")).toBe(m("strict")); // deterministic
      }),
    );
  });
});

describe("shell parser", () => {
  const shellText = fc.string({ unit: fc.constantFrom(..."ab =-'\"\\$()`|&;<>\n#{}*~./@npm install pip"), maxLength: 60 });
  it("never throws and is deterministic on arbitrary input", () => {
    fc.assert(
      fc.property(shellText, (command) => {
        const a = parseInstalls(command);
        expect(parseInstalls(command)).toEqual(a);
        tokenizeShell(command);
      }),
      { numRuns: 2000 },
    );
  });

  const pkgName = fc.stringMatching(/^(@[a-z0-9]{1,6}\/)?[a-z][a-z0-9._-]{0,12}(@[0-9]{1,2}\.[0-9]{1,2}\.[0-9]{1,2})?$/);
  it("quoting does not change the extracted package word; the manager decides the registry", () => {
    fc.assert(
      fc.property(
        pkgName,
        fc.constantFrom(
          (p: string) => p,
          (p: string) => `'${p}'`,
          (p: string) => `"${p}"`,
        ),
        fc.constantFrom(
          ["npm install", "npm"],
          ["pnpm add", "npm"],
          ["yarn add", "npm"],
          ["bun add", "npm"],
          ["pip install", "pypi"],
          ["cargo install", "cargo"],
          ["gem install", "gem"],
          ["apk add", "apk"],
          ["brew install", "brew"],
        ),
        fc.constantFrom("", "sudo ", "FOO=1 ", "env -i "),
        (pkg, quote, [manager, registry], prefix) => {
          const { isInstall, artifacts } = parseInstalls(`${prefix}${manager} ${quote(pkg)} && echo done`);
          expect(isInstall).toBe(true);
          expect(artifacts).toEqual([{ type: "package", value: pkg, context: registry, source_field: "tool_input.command" }]);
        },
      ),
    );
  });
});
