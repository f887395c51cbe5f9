/**
 * Canary requests sent after every batch of fuzz input: valid requests whose exact answers are
 * known. They prove that the harness still answers correctly, and two of them would be answered
 * differently if `Object.prototype` had been polluted: an `ahp/event` and an `ahp/query` whose
 * params are `{}` must fail validation (-32602), but would pass if `session_id`, `event_type`,
 * `query_type`, … had become inherited members of every object.
 */

export interface Canary {
  id: string;
  text: string;
  /** Why the answer is wrong, or undefined. */
  check(answer: Record<string, unknown>): string | undefined;
}

const result = (a: Record<string, unknown>) => a.result as Record<string, unknown> | undefined;
const code = (a: Record<string, unknown>) => (a.error as { code?: unknown } | undefined)?.code;

export function canaries(tag: string, harnessName = "ahp-harness"): Canary[] {
  const event = (command: string) => ({
    event_type: "pre_action",
    session_id: "canary",
    agent_id: "canary",
    timestamp: "2026-06-01T10:15:00Z",
    depth: 0,
    payload: { tool_name: "bash", arguments: { command } },
  });
  const request = (id: string, method: string, params: unknown) => JSON.stringify({ jsonrpc: "2.0", id, method, params });
  const make = (n: string, method: string, params: unknown, check: Canary["check"]): Canary => {
    const id = `canary-${tag}-${n}`;
    return { id, text: request(id, method, params), check };
  };
  return [
    make(
      "handshake",
      "ahp/handshake",
      {
        protocol_version: "2.4",
        agent_info: { framework: "fuzz", version: "1", capabilities: [] },
        session_id: "canary",
        agent_id: "canary",
      },
      (a) => {
        const r = result(a);
        const info = r?.harness_info as { name?: unknown } | undefined;
        return r?.protocol_version === "2.4" && info?.name === harnessName ? undefined : "handshake answer is wrong";
      },
    ),
    make("allow", "ahp/event", event("ls -la"), (a) => (result(a)?.decision === "allow" ? undefined : "`ls -la` was not allowed")),
    make("block", "ahp/event", event("rm -rf /"), (a) => (result(a)?.decision === "block" ? undefined : "`rm -rf /` was not blocked")),
    make("proto-event", "ahp/event", {}, (a) =>
      code(a) === -32602 ? undefined : "ahp/event with params {} was not refused (-32602): Object.prototype polluted?",
    ),
    make("proto-query", "ahp/query", {}, (a) =>
      code(a) === -32602 ? undefined : "ahp/query with params {} was not refused (-32602): Object.prototype polluted?",
    ),
  ];
}

/** Checks the canary answers among `answers`; returns the problems and leaves the other answers. */
export function checkCanaries(list: readonly Canary[], answers: unknown[]): { problems: string[]; rest: unknown[] } {
  const byId = new Map(list.map((c) => [c.id, c]));
  const seen = new Set<string>();
  const problems: string[] = [];
  const rest: unknown[] = [];
  for (const answer of answers) {
    const id = (answer as { id?: unknown } | null)?.id;
    const canary = typeof id === "string" ? byId.get(id) : undefined;
    if (canary === undefined) {
      rest.push(answer);
      continue;
    }
    if (seen.has(canary.id)) problems.push(`canary ${canary.id} answered twice`);
    seen.add(canary.id);
    const problem = canary.check(answer as Record<string, unknown>);
    if (problem !== undefined) problems.push(`canary ${canary.id}: ${problem}: ${JSON.stringify(answer).slice(0, 300)}`);
  }
  for (const c of list) if (!seen.has(c.id)) problems.push(`canary ${c.id} got no answer`);
  return { problems, rest };
}
