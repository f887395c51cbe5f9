/**
 * Decode details: the AHP error catalogue fixes only the prefixes (`Invalid params: `, ...); the
 * detail after them is ours, worded like the reference ("missing field `x`", "unknown variant
 * `y`") so that people who know the reference's messages recognise them (spec §11.6, §16).
 */
import { describe, expect, it } from "vitest";
import {
  AhpEventSchema,
  ContextPerceptionEventSchema,
  DecisionSchema,
  decode,
  describeIssues,
  HandshakeRequestSchema,
  PerceptionTargetSchema,
  PlanningStrategySchema,
  ReasoningTypeSchema,
  TaskItemSchema,
  type DecodeResult,
} from "../src/index.js";
import type { z } from "zod";

const event = { event_type: "pre_action", session_id: "s", agent_id: "a", timestamp: "t", depth: 0, payload: null };
const handshake = {
  protocol_version: "2.4",
  agent_info: { framework: "f", version: "1", capabilities: [] },
  session_id: "s",
  agent_id: "a",
};

function detail<T>(result: DecodeResult<T>): string {
  expect(result.ok).toBe(false);
  return result.ok ? "" : result.detail;
}
const without = <T extends object>(value: T, key: keyof T) => {
  const copy = { ...value };
  delete copy[key];
  return copy;
};

describe("decode", () => {
  it("returns the parsed value, defaults applied", () => {
    const result = decode(TaskItemSchema, { id: "t", title: "x", status: "pending" });
    expect(result).toEqual({ ok: true, value: { id: "t", title: "x", status: "pending", depends_on: [], evidence: [], artifacts: [] } });
  });

  it("names a missing member as `missing field` with its path", () => {
    expect(detail(decode(HandshakeRequestSchema, { ...handshake, agent_info: { framework: "f", version: "1" } }))).toBe(
      "missing field `capabilities` at agent_info.capabilities",
    );
    expect(detail(decode(AhpEventSchema, without(event, "timestamp")))).toMatch(/^missing field `timestamp`/);
    expect(detail(decode(AhpEventSchema, without(event, "payload")))).toMatch(/^missing field `payload`/);
    expect(
      detail(decode(AhpEventSchema, { ...event, context: { session_stats: { total_actions: 1, duration_ms: 1, error_count: 0 } } })),
    ).toBe("missing field `total_tokens` at context.session_stats.total_tokens");
  });

  it("names an unknown enumeration value as `unknown variant` with the accepted ones", () => {
    const text = detail(decode(AhpEventSchema, { ...event, event_type: "pre_tool_use" }));
    expect(text).toMatch(/^unknown variant `pre_tool_use`, expected one of `handshake`, `pre_action`, /);
    expect(text).toMatch(/ at event_type$/);
    expect(detail(decode(TaskItemSchema, { id: "t", title: "x", status: "InProgress" }))).toMatch(
      /^unknown variant `InProgress`, expected one of .*`in_progress`/,
    );
    expect(detail(decode(ReasoningTypeSchema, "react"))).toMatch(/^unknown variant `react`/);
    expect(detail(decode(PlanningStrategySchema, "custom"))).toMatch(/^unknown variant `custom`/);
  });

  it("names an unknown or missing decision tag", () => {
    expect(detail(decode(DecisionSchema, { decision: "Allow" }))).toMatch(/^unknown variant `Allow`/);
    expect(detail(decode(DecisionSchema, { reason: "no tag" }))).toMatch(/^missing field `decision`/);
    expect(detail(decode(DecisionSchema, { decision: "defer" }))).toMatch(/^missing field `retry_after_ms`/);
    expect(detail(decode(DecisionSchema, { decision: "modify" }))).toMatch(/^missing field `modified_payload`/);
  });

  it("describes wrong types and out-of-range numbers with the offending value", () => {
    expect(detail(decode(AhpEventSchema, { ...event, depth: 1.5 }))).toMatch(/^invalid type: floating point `1\.5`, expected .* at depth$/);
    expect(detail(decode(AhpEventSchema, { ...event, depth: "1" }))).toMatch(/^invalid type: string "1", expected .* at depth$/);
    expect(detail(decode(AhpEventSchema, { ...event, depth: -1 }))).toMatch(/^invalid value: integer `-1`, .*>=0 at depth$/);
    expect(detail(decode(AhpEventSchema, 5))).toMatch(/^invalid type: integer `5`, expected object/);
    expect(detail(decode(TaskItemSchema, { id: "t", title: "x", status: "pending", depends_on: null }))).toBe(
      "invalid type: null, expected array at depends_on",
    );
    const cp = { session_id: "s", intent: "locate", target: { location: { path: "a", location_type: "b" } }, context: { workspace: "w" } };
    expect(detail(decode(ContextPerceptionEventSchema, { ...cp, constraints: null }))).toBe(
      "invalid type: null, expected object at constraints",
    );
  });

  it("names the extra member of a single-key object", () => {
    expect(detail(decode(PlanningStrategySchema, { custom: "x", other: "y" }))).toMatch(/unknown field `other`|`custom`, `other`/);
    expect(
      detail(decode(PerceptionTargetSchema, { location: { path: "a", location_type: "b" }, entity: { name: "n", entity_type: "t" } })),
    ).toMatch(/`location`, `entity`/);
  });

  it("keeps the zod issues for callers that want structure", () => {
    const result = decode(AhpEventSchema, without(event, "agent_id"));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues[0]?.path).toEqual(["agent_id"]);
  });
});

describe("describeIssues", () => {
  it("falls back to a generic text when there is no issue", () => {
    expect(describeIssues([] as z.core.$ZodIssue[], {})).toBe("invalid value");
  });
});

describe("missing enumeration members", () => {
  it("are reported as `missing field`, not as an invalid value", () => {
    expect(detail(decode(AhpEventSchema, without(event, "event_type")))).toBe("missing field `event_type` at event_type");
    expect(detail(decode(TaskItemSchema, { id: "t", title: "x" }))).toBe("missing field `status` at status");
  });
});
