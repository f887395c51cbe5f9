/**
 * A member that must be there (`payload`, `modified_payload`, `answer`) but holds `undefined` is
 * missing on the wire: JSON has no `undefined`, so the encoder drops it. Each side refuses it
 * where it is produced, with the error it gives for a missing member, instead of sending a message
 * the peer must refuse.
 */
import { describe, expect, it } from "vitest";
import {
  AhpClient,
  AhpEventSchema,
  AhpServer,
  createLinkedPair,
  decode,
  DecisionSchema,
  QueryRequestSchema,
  QueryResponseSchema,
  type AhpServerOptions,
} from "../src/index.js";

const event = { event_type: "pre_action", session_id: "s", agent_id: "a", timestamp: "t", depth: 0, payload: null };

async function pair(options: AhpServerOptions) {
  const server = new AhpServer(options);
  const [agentSide, harnessSide] = createLinkedPair();
  await server.connect(harnessSide);
  const client = new AhpClient();
  await client.connect(agentSide);
  return {
    client,
    close: async () => {
      await client.close();
      await server.close({ graceMs: 0 });
    },
  };
}

const outcome = (p: Promise<unknown>) =>
  p.then(
    (value) => ({ value }),
    (error: unknown) => ({ error: error as { code?: unknown; message: string } }),
  );

describe("a required member holding undefined", () => {
  it("is refused by the schemas as the missing field it is on the wire; null is still a value", () => {
    const cases: Array<[Parameters<typeof decode>[0], Record<string, unknown>, string]> = [
      [AhpEventSchema, { ...event, payload: undefined }, "payload"],
      [DecisionSchema, { decision: "modify", modified_payload: undefined }, "modified_payload"],
      [QueryRequestSchema, { session_id: "s", agent_id: "a", query_type: "q", payload: undefined }, "payload"],
      [QueryResponseSchema, { answer: undefined }, "answer"],
    ];
    for (const [schema, value, member] of cases) {
      const decoded = decode(schema, value);
      expect(decoded.ok).toBe(false);
      if (!decoded.ok) expect(decoded.detail).toBe(`missing field \`${member}\` at ${member}`);
      expect(decode(schema, { ...value, [member]: null }).ok).toBe(true);
    }
    // An optional member holding undefined is simply absent.
    expect(decode(DecisionSchema, { decision: "allow", modified_payload: undefined }).ok).toBe(true);
  });

  it("in a handler's modify decision: the agent gets the handler error, not an answer it must refuse", async () => {
    const { client, close } = await pair({ handlers: { onEvent: () => ({ decision: "modify", modified_payload: undefined }) } });
    const result = await outcome(client.send("pre_action", { tool_name: "bash" }));
    expect(result).toMatchObject({
      error: { code: -32603, message: expect.stringContaining("Invalid decision: missing field `modified_payload`") },
    });
    await close();
  });

  it("in a handler's modify decision with handlerFailure 'decision': the fail-closed decision", async () => {
    const { client, close } = await pair({
      handlerFailure: "decision",
      handlers: { onEvent: () => ({ decision: "modify", modified_payload: undefined }) },
    });
    const result = await outcome(client.send("pre_action", { tool_name: "bash" }));
    expect(result).toMatchObject({ value: { decision: "block", reason: expect.stringContaining("missing field `modified_payload`") } });
    await close();
  });

  it("in a query answer: the agent gets the handler error", async () => {
    const { client, close } = await pair({ handlers: { onQuery: () => ({ answer: undefined }) } });
    const result = await outcome(client.query("q", null));
    expect(result).toMatchObject({ error: { code: -32603, message: expect.stringContaining("missing field `answer`") } });
    await close();
  });

  it("in an event the agent sends: refused before it is sent, as an invalid argument", async () => {
    let received = 0;
    const { client, close } = await pair({
      handlers: {
        onEvent: () => {
          received++;
          return { decision: "allow" };
        },
      },
    });
    const result = await outcome(client.event({ ...event, event_type: "pre_action", payload: undefined }));
    expect(result).toMatchObject({ error: { code: "INVALID_ARGUMENT", message: "invalid event: missing field `payload` at payload" } });
    expect(received).toBe(0);
    await close();
  });
});
