/** §8 scenario 53: the v2 draft carriage (optional, §6.7). */
import * as v2 from "@agentclientprotocol/sdk/experimental/v2";
import { describe, expect, it } from "vitest";
import { META, toV2StateUpdate, V2_SUSPENDED_STOP_REASON } from "../../src/index.js";
import { until } from "../helpers/setup.js";
import { tappedPair } from "../helpers/wire.js";

describe("v2 draft", () => {
  it("S53 custom state accepted: a v2 stock client receives state_update {idle, stopReason _ahpHarness/suspended} in its handler", async () => {
    const pair = tappedPair();
    const got: Array<{ sessionId: string; update: Record<string, any> }> = [];
    const agentConn = v2
      .agent({ name: "v2-agent" })
      .onRequest("initialize", () => ({ protocolVersion: 2, info: { name: "v2-agent", version: "1.0.0" }, capabilities: {} }) as never)
      .connect(pair.agentSide);
    const clientConn = v2
      .client({ name: "v2-stock-client" })
      .onNotification("session/update", ({ params }) => {
        got.push(params);
      })
      .connect(pair.clientSide);
    await clientConn.agent.request("initialize", { protocolVersion: 2, info: { name: "c", version: "1" }, capabilities: {} } as never);
    const lifecycle = {
      event: "suspended",
      handle: "sus_1",
      initiator: "client",
      suspendedAt: "2026-11-21T10:00:00.000Z",
      state: "suspended",
    };
    const update = toV2StateUpdate(lifecycle);
    expect(update).toEqual({
      sessionUpdate: "state_update",
      state: "idle",
      stopReason: V2_SUSPENDED_STOP_REASON,
      _meta: { [META.lifecycle]: lifecycle },
    });
    await agentConn.client.notify("session/update", { sessionId: "s1", update } as never);
    await agentConn.client.notify("session/update", {
      sessionId: "s1",
      update: toV2StateUpdate({ event: "resumed", handle: "sus_1" }),
    } as never);
    await until(() => got.length === 2, "both updates");
    expect(got[0]!.update).toMatchObject({ sessionUpdate: "state_update", state: "idle", stopReason: "_ahpHarness/suspended" });
    expect(got[0]!.update._meta[META.lifecycle].handle).toBe("sus_1");
    expect(got[1]!.update).toMatchObject({ state: "idle", _meta: { [META.lifecycle]: { event: "resumed" } } });
    clientConn.close();
    agentConn.close();
  });
});
