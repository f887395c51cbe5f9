/**
 * Random interleavings of suspend / resume / cancel / close / timeout / restart / prompts and
 * event wake-ups never reach an illegal state, every rejection is a protocol error of §5.9, and
 * every handle is consumed at most once with O5 (one `suspended`, at most one end) per handle.
 */
import { client, RequestError, type ClientConnection } from "@agentclientprotocol/sdk";
import { deferred } from "@ahp/conformance";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createAcpBridge, IllegalTransitionError, ManualClock, MemorySuspensionStore, STATES, type AcpBridge } from "../src/index.js";
import { agentDouble } from "./helpers/agent.js";
import { until } from "./helpers/setup.js";
import { lifecycleEvents, tappedPair, type WireEntry } from "./helpers/wire.js";

type Cmd =
  | { k: "prompt" }
  | { k: "finish" }
  | {
      k: "suspend";
      mode: "finish_step" | "interrupt_immediate" | "wait_for_completion";
      minutes?: number;
      onTimeout?: "fail" | "resume_with_summary";
    }
  | { k: "resume"; which: "current" | "last" | "forged" | "plain" | "input" }
  | { k: "cancel" }
  | { k: "close" }
  | { k: "time"; minutes: number }
  | { k: "fire" }
  | { k: "restart" };

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  fc.constant<Cmd>({ k: "prompt" }),
  fc.constant<Cmd>({ k: "finish" }),
  fc
    .record({
      k: fc.constant("suspend" as const),
      mode: fc.constantFrom("finish_step" as const, "interrupt_immediate" as const, "wait_for_completion" as const),
      minutes: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
      onTimeout: fc.option(fc.constantFrom("fail" as const, "resume_with_summary" as const), { nil: undefined }),
    })
    .map((c) => c as Cmd),
  fc.record({
    k: fc.constant("resume" as const),
    which: fc.constantFrom("current" as const, "last" as const, "forged" as const, "plain" as const, "input" as const),
  }),
  fc.constant<Cmd>({ k: "cancel" }),
  fc.constant<Cmd>({ k: "close" }),
  fc.record({ k: fc.constant("time" as const), minutes: fc.integer({ min: 1, max: 4 }) }),
  fc.constant<Cmd>({ k: "fire" }),
  fc.constant<Cmd>({ k: "restart" }),
);

/**
 * Lets `n` turns of the event loop pass between commands so that they interleave with the bridge's
 * work in varied ways. No assertion depends on how far that work got: before a restart and at the
 * end, the test waits for every request in flight to be answered.
 */
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

const ALLOWED = new Set([-32602, -32002, -31001, -31002, -31003]);

describe("properties", () => {
  it("random interleavings never reach an illegal state and consume each handle at most once", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(cmd, { minLength: 5, maxLength: 22 }), async (cmds) => {
        const store = new MemorySuspensionStore();
        const clock = new ManualClock();
        let gate = deferred();
        const agent = agentDouble({
          turn: async (t) => (await Promise.race([gate.promise, t.whenCancelled]), t.cancelled() ? "cancelled" : "end_turn"),
        });
        const errors: Error[] = [];
        const unexpected: unknown[] = [];
        const logs: WireEntry[][] = [];
        let bridge!: AcpBridge;
        let conn!: ClientConnection;
        const issued = new Set<string>();
        let lastHandle: string | undefined;
        const open = async () => {
          bridge = await createAcpBridge({ agent: agent.app, clock, store, onerror: (e) => errors.push(e), harnessPollMs: 0 });
          const pair = tappedPair();
          logs.push(pair.log);
          bridge.connect(pair.agentSide);
          conn = client({ name: "p" })
            .onNotification("session/update", () => undefined)
            .connect(pair.clientSide);
          await conn.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
        };
        let answered = 0;
        const track = (p: Promise<unknown>) =>
          p
            .finally(() => answered++)
            .then(
              (v) => {
                const h = (v as { handle?: unknown } | null)?.handle;
                if (typeof h === "string") {
                  issued.add(h);
                  lastHandle = h;
                }
              },
              (e: unknown) => {
                if (!(e instanceof RequestError) || !ALLOWED.has(e.code)) unexpected.push(e);
              },
            );
        await open();
        const { sessionId: id } = await conn.agent.request("session/new", { cwd: "/w", mcpServers: [] });
        const inflight: Array<Promise<unknown>> = [];
        for (const c of cmds) {
          const ctx = conn.agent;
          switch (c.k) {
            case "prompt":
              inflight.push(track(ctx.request("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "x" }] })));
              break;
            case "finish":
              gate.resolve();
              gate = deferred();
              break;
            case "suspend": {
              const resumeWhen =
                c.minutes === undefined
                  ? { onEvent: "go" }
                  : { onEvent: "go", timeout: { durationMinutes: c.minutes, ...(c.onTimeout ? { onTimeout: c.onTimeout } : {}) } };
              inflight.push(track(ctx.request("_ahpHarness/session/suspend", { sessionId: id, mode: c.mode, resumeWhen })));
              break;
            }
            case "resume": {
              const handle =
                c.which === "current"
                  ? bridge.handleOf(id)
                  : c.which === "last"
                    ? lastHandle
                    : c.which === "forged"
                      ? "sus_forged"
                      : undefined;
              const meta =
                c.which === "plain" ? undefined : c.which === "input" ? { input: "in" } : handle === undefined ? undefined : { handle };
              inflight.push(
                track(
                  ctx.request("session/resume", { sessionId: id, cwd: "/w", ...(meta ? { _meta: { "ahpHarness/resume": meta } } : {}) }),
                ),
              );
              break;
            }
            case "cancel":
              await ctx.notify("session/cancel", { sessionId: id });
              break;
            case "close":
              inflight.push(track(ctx.request("session/close", { sessionId: id })));
              break;
            case "time":
              clock.advance(c.minutes * 60_000);
              break;
            case "fire":
              inflight.push(track(bridge.fireEvent("go", { n: 1 })));
              break;
            case "restart":
              gate.resolve();
              gate = deferred();
              await until(() => answered === inflight.length, "every request answered before the restart");
              conn.close();
              await bridge.close();
              await open();
              break;
          }
          await turns(8);
          expect(STATES).toContain(bridge.stateOf(id) ?? "active.idle");
        }
        gate.resolve();
        await until(() => answered === inflight.length, "every request answered");
        conn.close();
        await bridge.close();
        expect(errors.filter((e) => e instanceof IllegalTransitionError)).toEqual([]);
        expect(unexpected).toEqual([]);
        // O5 and single use, per handle, across every connection.
        const events = logs.flatMap((l) => lifecycleEvents(l));
        const perHandle = new Map<string, { suspended: number; ends: number; resumed: number }>();
        for (const e of events) {
          const h = perHandle.get(e.handle) ?? { suspended: 0, ends: 0, resumed: 0 };
          if (e.event === "suspended") h.suspended++;
          if (e.event === "resumed" || e.event === "failed" || e.event === "discarded") h.ends++;
          if (e.event === "resumed") h.resumed++;
          perHandle.set(e.handle, h);
        }
        for (const [handle, h] of perHandle) {
          expect(h.resumed, handle).toBeLessThanOrEqual(1);
          expect(h.ends, handle).toBeLessThanOrEqual(1);
        }
        void issued;
      }),
      { numRuns: Number(process.env.ACP_PROPERTY_RUNS ?? 60) },
    );
  }, 120_000);
});
