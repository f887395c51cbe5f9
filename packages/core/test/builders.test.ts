import { describe, expect, it, vi } from "vitest";
import { AhpEventSchema, childEvent, createEvent, eventFactory, newId, rfc3339Now } from "../src/index.js";

const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("createEvent", () => {
  it("fills a current RFC 3339 UTC timestamp and depth 0, and omits context and metadata", () => {
    const before = Date.now();
    const event = createEvent("pre_action", { tool_name: "bash", arguments: { command: "ls" } }, { sessionId: "s-1", agentId: "a-1" });
    const after = Date.now();
    expect(event.timestamp).toMatch(RFC3339_UTC);
    const at = Date.parse(event.timestamp);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(after);
    expect(event).toEqual({
      event_type: "pre_action",
      session_id: "s-1",
      agent_id: "a-1",
      timestamp: event.timestamp,
      depth: 0,
      payload: { tool_name: "bash", arguments: { command: "ls" } },
    });
    expect(Object.keys(event)).not.toContain("context");
    expect(Object.keys(event)).not.toContain("metadata");
    expect(JSON.stringify(event)).not.toMatch(/context|metadata/);
    expect(AhpEventSchema.safeParse(event).success).toBe(true);
  });

  it("uses the given timestamp, depth, context and metadata exactly", () => {
    const event = createEvent("session_start", null, {
      sessionId: "s",
      agentId: "a",
      depth: 2,
      timestamp: "2026-06-01T12:34:56.123456789+00:00",
      context: {},
      metadata: { trace_id: "t-1" },
    });
    expect(event).toMatchObject({
      depth: 2,
      timestamp: "2026-06-01T12:34:56.123456789+00:00",
      context: {},
      metadata: { trace_id: "t-1" },
      payload: null,
    });
  });

  it("builds typed payloads that the schemas accept", () => {
    const event = createEvent(
      "task_list",
      { run_id: "r", session_id: "s", updated_at: "2026-06-01T10:20:00Z", tasks: [{ id: "t1", title: "x", status: "in_progress" }] },
      { sessionId: "s", agentId: "a" },
    );
    expect(AhpEventSchema.safeParse(event).success).toBe(true);
  });
});

describe("eventFactory", () => {
  it("binds session, agent and depth; per-call overrides win", () => {
    const ev = eventFactory({ sessionId: "s", agentId: "a", depth: 1 });
    const first = ev("post_action", { exit_code: 0 });
    expect(first).toMatchObject({ event_type: "post_action", session_id: "s", agent_id: "a", depth: 1, payload: { exit_code: 0 } });
    expect(first.timestamp).toMatch(RFC3339_UTC);
    expect(ev("pre_prompt", { prompt: "hi" }, { depth: 3, agentId: "b" })).toMatchObject({ depth: 3, agent_id: "b", session_id: "s" });
  });
});

describe("childEvent", () => {
  it("returns a copy one level deeper without touching the original", () => {
    const parent = createEvent("pre_action", {}, { sessionId: "s", agentId: "a", depth: 4 });
    const child = childEvent(parent);
    expect(child.depth).toBe(5);
    expect(parent.depth).toBe(4);
    expect(child).not.toBe(parent);
    expect({ ...child, depth: 4 }).toEqual(parent);
  });
});

describe("ids and time", () => {
  it("newId returns distinct UUID v4 strings", () => {
    const ids = new Set(Array.from({ length: 100 }, () => newId()));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(UUID_V4);
  });

  it("rfc3339Now is UTC", () => {
    expect(rfc3339Now()).toMatch(RFC3339_UTC);
  });

  it("rfc3339Now follows the clock to the millisecond (its cached text never goes stale)", () => {
    vi.useFakeTimers();
    try {
      vi.setSystemTime(new Date("2026-06-01T10:15:00.123Z"));
      expect(rfc3339Now()).toBe("2026-06-01T10:15:00.123Z");
      expect(rfc3339Now()).toBe("2026-06-01T10:15:00.123Z");
      vi.advanceTimersByTime(1);
      expect(rfc3339Now()).toBe("2026-06-01T10:15:00.124Z");
      vi.setSystemTime(new Date("2020-01-01T00:00:00.000Z")); // backwards too
      expect(rfc3339Now()).toBe("2020-01-01T00:00:00.000Z");
    } finally {
      vi.useRealTimers();
    }
  });
});
