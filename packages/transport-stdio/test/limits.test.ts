/** serveStdio's limit on requests in flight. */
import { PassThrough } from "node:stream";
import { AhpServer, type AhpLocalError } from "@ahp/core";
import { serveStdio } from "@ahp/transport-stdio";
import { deferred } from "@ahp/conformance";
import { until } from "./helpers.js";
import { describe, expect, it } from "vitest";

const line = (id: string) =>
  `${JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "ahp/event",
    params: { event_type: "pre_action", session_id: "s", agent_id: "a", timestamp: "t", depth: 0, payload: {} },
  })}\n`;

describe("serveStdio maxInFlight", () => {
  it("hands the handlers at most maxInFlight requests; the rest wait in order and are all answered", async () => {
    const gates: Array<{ resolve: () => void }> = [];
    const seen: string[] = [];
    const server = new AhpServer({
      handlers: {
        onEvent: async (_e, ctx) => {
          seen.push(String(ctx.requestId));
          const gate = deferred<void>();
          gates.push(gate);
          await gate.promise;
          return { decision: "allow" };
        },
      },
    });
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let out = "";
    stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
    const limits: AhpLocalError[] = [];
    const served = serveStdio(server, { stdin, stdout, maxInFlight: 2, onlimit: (e) => limits.push(e) });
    stdin.write(Array.from({ length: 5 }, (_, i) => line(`s${i}`)).join(""));
    await until(() => limits.length > 0);
    expect(limits[0]!.message).toMatch(/2 requests in flight on stdin/);
    expect(seen).toEqual(["s0", "s1"]);
    for (let i = 0; i < 5; i++) {
      await until(() => gates.length > i);
      expect(seen.length).toBeLessThanOrEqual(i + 2);
      gates[i]!.resolve();
    }
    stdin.end();
    expect(await served).toBeUndefined();
    expect(seen).toEqual(["s0", "s1", "s2", "s3", "s4"]);
    expect(out.trim().split("\n")).toHaveLength(5);
    await server.close();
  });
});
