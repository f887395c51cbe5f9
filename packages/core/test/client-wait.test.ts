/**
 * A decision the harness holds for a person is not a transport timeout (ADR 0145): a blocking
 * event waits at least the harness's advertised `timeout_ms` plus a grace, unless the call names
 * its own `timeoutMs`; queries and the handshake keep the client's own timeout.
 */
import { afterEach, describe, expect, it } from "vitest";
import { AhpClient, AhpLocalError, AhpServer, HOLD_GRACE_MS, createLinkedPair, type HarnessConfig } from "@ahp/core";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** A harness whose handler answers `allow` only once `heldMs` have passed since the event arrived. */
async function harness(config: HarnessConfig, heldMs: number): Promise<AhpClient> {
  const server = new AhpServer({
    config,
    handlerTimeoutMs: 0,
    handlers: {
      onEvent: () => new Promise((resolve) => setTimeout(() => resolve({ decision: "allow" }), heldMs)),
      onQuery: () => new Promise((resolve) => setTimeout(() => resolve({ answer: null }), heldMs)),
    },
  });
  const [agent, other] = createLinkedPair();
  await server.connect(other);
  const client = new AhpClient({ timeoutMs: 200 });
  await client.connect(agent);
  cleanups.push(async () => {
    await client.close();
    await server.close();
  });
  return client;
}

const codeOf = (error: unknown) => (AhpLocalError.isInstance(error) ? error.code : String(error));

describe("AhpClient waits as long as the harness may hold a decision", () => {
  it("takes the advertised timeout_ms plus the grace as the decision deadline", async () => {
    const client = await harness({ timeout_ms: 60_000 }, 0);
    expect(client.decisionTimeoutMs).toBe(60_000 + HOLD_GRACE_MS);
  });

  it("gets the decision of a hold longer than its own timeout", async () => {
    // Held 600 ms, three times the client's own 200 ms: a busy machine only makes the hold longer.
    const client = await harness({ timeout_ms: 60_000 }, 600);
    await expect(client.send("pre_action", { action_type: "shell", command: "ls" })).resolves.toEqual({ decision: "allow" });
    await expect(
      client.batch([
        { event_type: "pre_action", session_id: "s", agent_id: "a", timestamp: new Date().toISOString(), depth: 0, payload: {} },
      ]),
    ).resolves.toEqual([{ decision: "allow" }]);
  });

  it("keeps its own timeout when the call names one, for queries, and when the harness advertises none", async () => {
    const advertising = await harness({ timeout_ms: 60_000 }, 5_000);
    const explicit = await advertising.send("pre_action", {}, { timeoutMs: 200 }).catch(codeOf);
    expect(explicit).toBe("TIMEOUT");
    const query = await advertising.query("status", null).catch(codeOf);
    expect(query).toBe("TIMEOUT");
    const silent = await harness({}, 5_000);
    expect(silent.decisionTimeoutMs).toBe(200);
    expect(await silent.send("pre_action", {}).catch(codeOf)).toBe("TIMEOUT");
  });

  it("keeps waiting without limit when its own timeout is disabled", async () => {
    const server = new AhpServer({ config: { timeout_ms: 1000 }, handlers: { onEvent: () => ({ decision: "allow" }) } });
    const [agent, other] = createLinkedPair();
    await server.connect(other);
    const client = new AhpClient({ timeoutMs: 0 });
    await client.connect(agent);
    expect(client.decisionTimeoutMs).toBe(0);
    await client.close();
    await server.close();
  });
});
