/**
 * The transport's own exchange limit follows the harness's advertised `timeout_ms` for decisions
 * it may hold for a person (ADR 0145): an `ahp/event` waits `timeout_ms` + 5 s when that is longer
 * than `timeoutMs`; queries and harnesses that advertise no more keep `timeoutMs`.
 */
import { AhpClient, AhpLocalError, type AhpServerOptions } from "@ahp/core";
import { HttpClientTransport } from "@ahp/transport-http";
import { afterEach, describe, expect, it } from "vitest";
import { deferred, startHarness, type Harness } from "./helpers.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A harness whose handlers hold every call until `release()`; `held()` says whether one is waiting. */
async function holdingHarness(config: AhpServerOptions["config"]) {
  let gate = deferred();
  let waiting = 0;
  const hold = async () => {
    waiting++;
    await gate.promise;
  };
  const h: Harness = await startHarness({
    config,
    handlerTimeoutMs: 0,
    handlers: {
      onEvent: async () => {
        await hold();
        return { decision: "allow" };
      },
      onQuery: async () => {
        await hold();
        return { result: "ok" } as never;
      },
    },
  });
  cleanups.push(() => h.close());
  return {
    url: h.url,
    held: () => waiting > 0,
    release: () => {
      gate.resolve();
      gate = deferred();
      waiting = 0;
    },
  };
}

/**
 * The transport's own limit in these tests: long enough for a handshake on a busy machine, short
 * enough to be passed within the test.
 */
const OWN_MS = 3000;

async function connect(url: string, timeoutMs: number) {
  const transport = new HttpClientTransport(url, { timeoutMs });
  // The client's own limit is long: the transport's limit is what is tested.
  const client = new AhpClient({ timeoutMs: 120_000 });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, transport };
}

/** Resolves once `ms` have passed since `start` (polled; a condition, not a fixed sleep of the test). */
async function past(start: number, ms: number): Promise<void> {
  while (performance.now() - start < ms) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe("HttpClientTransport: waiting for a decision held for a person", () => {
  it("waits past its own timeoutMs when the harness advertises a longer timeout_ms", async () => {
    const h = await holdingHarness({ timeout_ms: 20_000 });
    const { client, transport } = await connect(h.url, OWN_MS);
    expect(transport.decisionTimeoutMs).toBe(25_000);
    const sentAt = performance.now();
    const answer = client.send("pre_action", {});
    const settled = answer.then(
      () => "answered",
      (error: unknown) => error,
    );
    // Twice the transport's own limit later (its timer was due long before), still waiting.
    await past(sentAt, 2 * OWN_MS);
    expect(h.held()).toBe(true);
    h.release();
    expect(await settled).toBe("answered");
  }, 60_000);

  it("keeps its own limit for a query, which the harness does not hold for a person", async () => {
    const h = await holdingHarness({ timeout_ms: 20_000 });
    const { client } = await connect(h.url, OWN_MS);
    const error = await client.query("status", {}).catch((e: unknown) => e);
    h.release();
    expect(AhpLocalError.isInstance(error) && error.code).toBe("TIMEOUT");
    expect((error as Error).message).toContain(`${OWN_MS}ms`);
  }, 60_000);

  it("keeps its own limit when the harness advertises no longer a timeout_ms", async () => {
    const h = await holdingHarness({ timeout_ms: 200 });
    const { client, transport } = await connect(h.url, OWN_MS);
    expect(transport.decisionTimeoutMs).toBe(OWN_MS);
    const error = await client.send("pre_action", {}).catch((e: unknown) => e);
    h.release();
    expect(AhpLocalError.isInstance(error) && error.code).toBe("TIMEOUT");
    expect((error as Error).message).toContain(`${OWN_MS}ms`);
  }, 60_000);

  it("a decision held longer than timeout_ms + 5 s fails with the longer limit, and a later short call still times out on time", async () => {
    const h = await holdingHarness({ timeout_ms: OWN_MS + 500 });
    const { client, transport } = await connect(h.url, OWN_MS);
    expect(transport.decisionTimeoutMs).toBe(OWN_MS + 5_500);
    const held = client.send("pre_action", {}).catch((e: unknown) => e);
    // A query sent after it has the earlier deadline: the timer follows the earliest one.
    const query = await client.query("status", {}).catch((e: unknown) => e);
    expect((query as Error).message).toContain(`Timeout after ${OWN_MS}ms`);
    expect((await held) as Error).toMatchObject({ code: "TIMEOUT", message: expect.stringContaining(`${OWN_MS + 5_500}ms`) });
    h.release();
  }, 60_000);
});
