/** Small builders for writing vector cases. */
import type { HarnessCase } from "./format.js";

export const TS = "2026-06-01T10:15:00Z";
export const SESSION = "sess-v";
export const AGENT = "agent-v";

type Json = unknown;
export type Line = HarnessCase["steps"][number]["send"][number];

// ---------------------------------------------------------------- what the agent sends

/** A JSON line. */
export const json = (value: Json): Line => ({ json: value });
/** An exact text line (followed by "\n" unless `eol` says otherwise). */
export const text = (value: string, eol?: string): Line => (eol === undefined ? { text: value } : { text: value, eol });

export const request = (id: unknown, method: string, params: Json) => ({ jsonrpc: "2.0", id, method, params });
export const notification = (method: string, params: Json) => ({ jsonrpc: "2.0", method, params });

export interface EventOptions {
  depth?: unknown;
  context?: unknown;
  metadata?: unknown;
  session?: string;
}

/** An AhpEvent as a foreign agent writes it. */
export function event(type: string, payload: Json, options: EventOptions = {}): Record<string, unknown> {
  const e: Record<string, unknown> = {
    event_type: type,
    session_id: options.session ?? SESSION,
    agent_id: AGENT,
    timestamp: TS,
    depth: "depth" in options ? options.depth : 0,
    payload,
  };
  if (options.context !== undefined) e.context = options.context;
  if (options.metadata !== undefined) e.metadata = options.metadata;
  return e;
}

export const eventRequest = (id: string, type: string, payload: Json, options?: EventOptions) =>
  json(request(id, "ahp/event", event(type, payload, options)));
export const eventNotification = (type: string, payload: Json, options?: EventOptions) =>
  json(notification("ahp/event", event(type, payload, options)));

export function handshakeParams(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    protocol_version: "2.4",
    agent_info: { framework: "vector-agent", version: "1.0.0", capabilities: ["pre_action", "post_action"] },
    session_id: SESSION,
    agent_id: AGENT,
    ...overrides,
  };
}

export function queryParams(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { session_id: SESSION, agent_id: AGENT, query_type: "approval_check", payload: { question: "May I wipe build/?" }, ...overrides };
}

// ---------------------------------------------------------------- what the harness answers

export const ok = (id: unknown, result: Json) => ({ jsonrpc: "2.0", id, result });

export interface MessageCheck {
  prefix?: string;
  contains?: string[];
}

/** An error response; `message` is the exact text, or a prefix with characteristic substrings. */
export function err(id: unknown, code: number, message: string | MessageCheck) {
  let m: Json = message;
  if (typeof message !== "string") {
    const matcher: Record<string, unknown> = {};
    if (message.prefix !== undefined) matcher.$prefix = message.prefix;
    if (message.contains !== undefined) matcher.$contains = message.contains;
    m = matcher;
  }
  return { jsonrpc: "2.0", id, error: { code, message: m } };
}

export const ALLOW = { decision: "allow" };

// ---------------------------------------------------------------- matchers

export const anyOfType = (type: string | string[]) => ({ $type: type });
export const prefix = (p: string) => ({ $prefix: p });
export const approx = (n: number) => ({ $approx: n });
export const nullish = () => ({ $nullish: true });
export const repeat = (s: string, count: number) => ({ $repeat: [s, count] });

// ---------------------------------------------------------------- cases

export interface CaseInput {
  title: string;
  checklist?: number[];
  spec: string[];
  steps: HarnessCase["steps"];
  outcomes?: HarnessCase["outcomes"];
}

/** A case of one area; ids are `<area>/<name>`. */
export function area(name: string) {
  const cases: HarnessCase[] = [];
  const add = (id: string, input: CaseInput): void => {
    cases.push({
      id: `${name}/${id}`,
      area: name,
      title: input.title,
      checklist: input.checklist ?? [],
      spec: input.spec,
      steps: input.steps,
      ...(input.outcomes === undefined ? {} : { outcomes: input.outcomes }),
    });
  };
  /** One step: send these lines, expect exactly these responses (in any order). */
  const simple = (id: string, input: Omit<CaseInput, "steps"> & { send: Line[]; expect?: unknown[] }): void => {
    const { send, expect, ...rest } = input;
    add(id, { ...rest, steps: [expect === undefined ? { send } : { send, expect }] });
  };
  return { cases, add, simple };
}

/** A request answered after the lines before it: proves the harness is still reading. */
export const ALIVE_ID = "alive";
export const aliveRequest = () => eventRequest(ALIVE_ID, "pre_action", { tool_name: "shell" });
export const aliveResponse = () => ok(ALIVE_ID, ALLOW);
