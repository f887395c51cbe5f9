/** `GET /readyz` beside `/healthz`: 200 when the readiness function says ready, 503 with the failing checks otherwise. */
import type { ReadinessReport } from "@ahp/core";
import { afterEach, describe, expect, it } from "vitest";
import { rawRequest, startHarness, type Harness } from "./helpers.js";

const TOKEN = "readiness-test-token-0123456789";

describe("GET /readyz", () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  it("follows each dependency down and back; /healthz stays 200; no credentials needed, like /healthz", async () => {
    const state = { policy: true, audit: true, store: true };
    const readiness = (): ReadinessReport => {
      const checks = {
        policy: state.policy ? { ok: true } : { ok: false, detail: "policy not loaded" },
        audit: state.audit ? { ok: true } : { ok: false, detail: "audit sink not writable" },
        store: state.store ? { ok: true } : { ok: false, detail: "state store unreachable" },
      };
      return { ready: Object.values(checks).every((c) => c.ok), checks };
    };
    harness = await startHarness({}, { readiness, auth: { bearerTokens: [TOKEN] } });
    const base = harness.url.replace(/\/ahp$/, "");
    const ready = await rawRequest(`${base}/readyz`, { method: "GET" });
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.text)).toEqual({ status: "ready", checks: { policy: { ok: true }, audit: { ok: true }, store: { ok: true } } });
    for (const dependency of ["policy", "audit", "store"] as const) {
      state[dependency] = false;
      const down = await rawRequest(`${base}/readyz`, { method: "GET" });
      expect(down.status, dependency).toBe(503);
      const body = JSON.parse(down.text) as { status: string; checks: Record<string, { ok: boolean; detail?: string }> };
      expect(body.status).toBe("not_ready");
      expect(body.checks[dependency]).toMatchObject({ ok: false, detail: expect.any(String) });
      expect((await rawRequest(`${base}/healthz`, { method: "GET" })).status).toBe(200);
      state[dependency] = true;
      expect((await rawRequest(`${base}/readyz`, { method: "GET" })).status, `${dependency} back`).toBe(200);
    }
    expect((await rawRequest(`${base}/readyz`, { method: "HEAD" })).status).toBe(200);
    expect((await rawRequest(`${base}/readyz`, { method: "POST", body: "{}" })).status).toBe(405);
  });

  it("answers 503 when the readiness function throws, returns a failing check with ready true, or does not answer in time", async () => {
    let mode: "throw" | "lie" | "hang" = "throw";
    const readiness = (): Promise<ReadinessReport> => {
      if (mode === "throw") return Promise.reject(new Error("store probe failed"));
      if (mode === "lie") return Promise.resolve({ ready: true, checks: { audit: { ok: false } } });
      return new Promise(() => undefined);
    };
    harness = await startHarness({}, { readiness, readinessTimeoutMs: 200 });
    const url = harness.url.replace(/\/ahp$/, "/readyz");
    const thrown = await rawRequest(url, { method: "GET" });
    expect(thrown.status).toBe(503);
    expect(JSON.parse(thrown.text)).toEqual({ status: "not_ready", checks: { readiness: { ok: false, detail: "store probe failed" } } });
    mode = "lie";
    expect((await rawRequest(url, { method: "GET" })).status).toBe(503);
    mode = "hang";
    const hung = await rawRequest(url, { method: "GET" });
    expect(hung.status).toBe(503);
    expect(hung.text).toContain("no answer within 200 ms");
  });

  it("is ready whenever alive without a readiness function, and can be turned off", async () => {
    harness = await startHarness({}, {});
    expect((await rawRequest(harness.url.replace(/\/ahp$/, "/readyz"), { method: "GET" })).status).toBe(200);
    await harness.close();
    harness = await startHarness({}, { readyPath: false });
    expect((await rawRequest(harness.url.replace(/\/ahp$/, "/readyz"), { method: "GET" })).status).toBe(404);
  });
});
