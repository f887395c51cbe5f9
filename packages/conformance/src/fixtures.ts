/** Valid payloads for every event type and small builders for raw wire messages. */
import type { EventType } from "@ahp/core";

export const FIXED_TIMESTAMP = "2026-06-01T10:15:00Z";

/** A valid payload for each of the 22 event types (typed and contract payloads decode). */
export function validPayload(type: EventType, sessionId = "sess-1"): unknown {
  switch (type) {
    case "handshake":
    case "query":
      return {};
    case "pre_action":
      return { action_type: "tool_call", tool_name: "shell", arguments: { command: "npm test" } };
    case "post_action":
      return { tool_name: "shell", exit_code: 0 };
    case "pre_prompt":
      return { prompt: "Summarise the diff", message_count: 3 };
    case "post_response":
      return { response: "done" };
    case "session_start":
      return { session_id: sessionId, model_name: "m" };
    case "session_end":
      return { session_id: sessionId, duration_ms: 1200 };
    case "error":
      return { error_type: "tool", error_message: "exit 1" };
    case "heartbeat":
      return { uptime_ms: 60_000, total_events_processed: 12, current_state: "running", cpu_percent: 12.5 };
    case "success":
      return { session_id: sessionId, action_type: "tool_call", action_summary: "tests pass", duration_ms: 900 };
    case "idle":
      return { idle_duration_ms: 60_000, idle_reason: "no input" };
    case "context_perception":
      return {
        session_id: sessionId,
        intent: "locate",
        target: { location: { path: "src", location_type: "directory" } },
        context: { workspace: "/home/dev/project" },
      };
    case "memory_recall":
      return { session_id: sessionId, query: "build flags", memory_type: "episodic", max_results: 5, working_directory: "/w" };
    case "planning":
      return { session_id: sessionId, task_description: "refactor the parser", available_strategies: ["step_by_step", { custom: "mine" }] };
    case "reasoning":
      return { session_id: sessionId, reasoning_type: "re_act", problem_statement: "why does the build fail" };
    case "rate_limit":
      return { session_id: sessionId, limit_type: "llm_token_limit", retry_after_ms: 1000, current_usage: "95%" };
    case "confirmation":
      return { session_id: sessionId, confirmation_type: "safety_confirm", message: "delete build/?" };
    case "intent_detection":
      return { session_id: sessionId, prompt: "review src/server.ts", workspace: "/w" };
    case "run_lifecycle":
      return { run_id: "run-1", session_id: sessionId, status: "executing", updated_at: FIXED_TIMESTAMP };
    case "task_list":
      return {
        run_id: "run-1",
        session_id: sessionId,
        updated_at: FIXED_TIMESTAMP,
        tasks: [
          { id: "t1", title: "Reproduce the crash", status: "completed", evidence: [{ kind: "transcript", summary: "crash seen" }] },
          { id: "t2", title: "Patch the parser", status: "in_progress", depends_on: ["t1"] },
        ],
      };
    case "verification":
      return {
        run_id: "run-1",
        session_id: sessionId,
        status: "passed",
        updated_at: FIXED_TIMESTAMP,
        checks: [{ id: "c1", subject: "unit tests", status: "passed", command: "npm test" }],
        residual_risks: [],
      };
  }
}

export interface EventOverrides {
  agent_id?: string;
  timestamp?: string;
  depth?: unknown;
  context?: unknown;
  metadata?: unknown;
}

/** A plain AhpEvent object exactly as a foreign agent would write it. */
export function wireEvent(type: string, payload: unknown, sessionId: string, overrides: EventOverrides = {}): Record<string, unknown> {
  const event: Record<string, unknown> = {
    event_type: type,
    session_id: sessionId,
    agent_id: overrides.agent_id ?? "conformance-agent",
    timestamp: overrides.timestamp ?? FIXED_TIMESTAMP,
    depth: "depth" in overrides ? overrides.depth : 0,
    payload,
  };
  if (overrides.context !== undefined) event.context = overrides.context;
  if (overrides.metadata !== undefined) event.metadata = overrides.metadata;
  return event;
}

export const request = <I extends string | number>(id: I, method: string, params: unknown) => ({ jsonrpc: "2.0", id, method, params });
export const notification = (method: string, params: unknown) => ({ jsonrpc: "2.0", method, params });

export function handshakeParams(sessionId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    protocol_version: "2.4",
    agent_info: { framework: "conformance", version: "0.1.0", capabilities: ["pre_action"] },
    session_id: sessionId,
    agent_id: "conformance-agent",
    ...overrides,
  };
}

export function queryParams(sessionId: string, queryType: string, payload: unknown): Record<string, unknown> {
  return { session_id: sessionId, agent_id: "conformance-agent", query_type: queryType, payload };
}
