/** `GET /readyz` on the WebSocket listener: 200 when ready, 503 with the failing checks otherwise, no credentials needed. */
import type { ReadinessReport } from "@ahp/core";
import { afterEach, describe, expect, it } from "vitest";
import { startHarness, type Harness } from "./helpers.js";

describe("listenWebSocket GET /readyz", () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  it("follows the readiness function down and back while /healthz stays 200", async () => {
    let auditWritable = true;
    const readiness = (): ReadinessReport => ({
      ready: auditWritable,
      checks: { audit: auditWritable ? { ok: true } : { ok: false, detail: "audit sink not writable" } },
    });
    harness = await startHarness({}, { readiness, auth: { bearerTokens: ["ws-readiness-token-0123456789"] } });
    const base = harness.url.replace(/^ws/, "http").replace(/\/ahp$/, "");
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ready", checks: { audit: { ok: true } } });
    auditWritable = false;
    const down = await fetch(`${base}/readyz`);
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ status: "not_ready", checks: { audit: { ok: false, detail: "audit sink not writable" } } });
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    auditWritable = true;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  });

  it("is ready whenever alive without a readiness function", async () => {
    harness = await startHarness();
    expect((await fetch(`${harness.url.replace(/^ws/, "http").replace(/\/ahp$/, "")}/readyz`)).status).toBe(200);
  });
});
