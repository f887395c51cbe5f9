/**
 * The in-process adapters wait for a person (ADR 0145, 0163): a harness that advertises a hold
 * (`config.timeout_ms` above AHP's 10 000 ms default) is waited that long plus 5 s, and a hold
 * that outlasts it becomes the host's own prompt or a deny, never the failure policy's allow.
 * Driven through the OpenAI Agents SDK adapter and the LangChain middleware as their frameworks
 * call them, against a real `AhpServer` harness, on fake timers.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { type AartsHostOptions, createLangChainMiddleware, createOpenAIAgentsAdapter, type ToolMessageFields } from "@ahp/aarts";
import { hostWithHarness, preToolUse } from "./helpers.js";

/** PreToolUse's catalog timeout: the adapter's own limit. */
const OWN_MS = 5_000;
/** What the harness advertises (e.g. `ahp serve --agent-host --approval-timeout-ms 28000`). */
const ADVERTISED_MS = 30_000;
/** The harness holds the decision three times the adapter's own limit before a person answers. */
const HOLD_MS = 3 * OWN_MS;

type Decision = { decision: "allow" } | { decision: "block"; reason: string };

/**
 * A harness advertising `advertised` that answers each `pre_action` after `holdMs` (never, when
 * undefined) and anything else at once; the host is activated, then time is faked.
 */
async function held(options: { holdMs?: number; answer?: Decision; advertised?: number; host?: Partial<AartsHostOptions> }) {
  vi.useRealTimers();
  const h = await hostWithHarness(
    (event) =>
      event.event_type !== "pre_action"
        ? { decision: "allow" }
        : new Promise((resolve) => {
            if (options.holdMs !== undefined) setTimeout(() => resolve(options.answer ?? { decision: "allow" }), options.holdMs);
          }),
    { server: { config: { timeout_ms: options.advertised ?? ADVERTISED_MS }, handlerTimeoutMs: 0 }, host: options.host ?? {} },
  );
  await h.host.activate();
  vi.useFakeTimers();
  return h;
}

/** Settles `promise` on fake time: not at `ms - 1`, then at `ms`. */
async function settlesAt<T>(promise: Promise<T>, ms: number): Promise<T> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await vi.advanceTimersByTimeAsync(ms - 1);
  expect(settled).toBe(false);
  await vi.advanceTimersByTimeAsync(1);
  expect(settled).toBe(true);
  return promise;
}

/** Closes on real time (a harness still holding a decision drains on timers). */
async function closeReal(h: { close(): Promise<void> }): Promise<void> {
  vi.useRealTimers();
  await h.close();
}

afterEach(() => {
  vi.useRealTimers();
});

describe("how long the bridge and the host wait (ADR 0145, 0163)", () => {
  it("an advertised hold is waited plus 5 s; up to 10 000 ms advertised it caps the own limit; announceWait keeps the own limit", async () => {
    const h = await hostWithHarness(undefined, { server: { config: { timeout_ms: ADVERTISED_MS } } });
    expect(h.host.timeoutFor("PreToolUse")).toBe(OWN_MS); // nothing advertised before the version check
    await h.host.activate();
    expect(h.host.ownTimeoutFor("PreToolUse")).toBe(OWN_MS);
    expect(h.host.timeoutFor("PreToolUse")).toBe(ADVERTISED_MS + 5_000);
    expect(h.host.timeoutFor("PreToolUse", "h1")).toBe(ADVERTISED_MS + 5_000);
    expect(h.bridge.waitFor("PreToolUse", OWN_MS)).toEqual({ timeoutMs: ADVERTISED_MS + 5_000, held: true });
    // An own limit longer than the hold stays.
    expect(h.bridge.waitFor("PreToolUse", 120_000)).toEqual({ timeoutMs: 120_000, held: true });
    await closeReal(h);

    for (const [advertised, expected] of [
      [2_000, 2_000],
      [10_000, OWN_MS],
    ] as const) {
      const plain = await hostWithHarness(undefined, { server: { config: { timeout_ms: advertised } } });
      await plain.host.activate();
      expect(plain.host.timeoutFor("PreToolUse")).toBe(expected);
      expect(plain.bridge.waitFor("PreToolUse", OWN_MS).held).toBe(false);
      await closeReal(plain);
    }

    const hard = await hostWithHarness(undefined, { server: { config: { timeout_ms: ADVERTISED_MS } }, bridge: { announceWait: "ask" } });
    await hard.host.activate();
    expect(hard.bridge.waitFor("PreToolUse", OWN_MS)).toEqual({ timeoutMs: OWN_MS, held: false });
    await closeReal(hard);
  });

  it("AhpBridge.evaluate alone waits the advertised hold and names a hold nobody answered", async () => {
    const h = await held({ holdMs: HOLD_MS, answer: { decision: "block", reason: "denied by alice" } });
    const verdict = await settlesAt(h.bridge.evaluate(preToolUse()), HOLD_MS);
    expect(verdict).toMatchObject({ decision: "deny", reasons: [expect.stringContaining("denied by alice")] });
    await closeReal(h);

    const never = await held({});
    const failure = await settlesAt(
      never.bridge.evaluate(preToolUse()).catch((e: unknown) => e),
      ADVERTISED_MS + 5_000,
    );
    expect(failure).toMatchObject({ failureCause: "timeout", message: expect.stringContaining("nobody answered") });
    await closeReal(never);
  });
});

describe("OpenAI Agents SDK adapter and a harness that holds for a person", () => {
  const call = { callId: "c1", name: "shell", arguments: JSON.stringify({ command: "git push origin main" }) };

  it("a decision held 3x the adapter's own limit still arrives: denied by the person under fail-open, allowed under fail-closed", async () => {
    const denied = await held({ holdMs: HOLD_MS, answer: { decision: "block", reason: "denied by alice" } });
    const a = createOpenAIAgentsAdapter({ host: denied.host, sessionId: "s1" });
    const out = await settlesAt(a.toolInputGuardrail.run({ toolCall: call }), HOLD_MS);
    // Under the host's default fail-open, a timeout would have allowed it.
    expect(denied.host.failurePolicy).toBe("fail-open");
    expect(out.behavior).toEqual({ type: "rejectContent", message: expect.stringContaining("denied by alice") });
    await closeReal(denied);

    const approved = await held({ holdMs: HOLD_MS, answer: { decision: "allow" }, host: { failurePolicy: "fail-closed" } });
    const b = createOpenAIAgentsAdapter({ host: approved.host, sessionId: "s2" });
    // Under fail-closed, a timeout would have denied it.
    expect((await settlesAt(b.toolInputGuardrail.run({ toolCall: call }), HOLD_MS)).behavior).toEqual({ type: "allow" });
    await closeReal(approved);
  });

  it("a hold nobody answers is never allowed, whatever the failure policy: deny without a prompt, needsApproval with one", async () => {
    const h = await held({});
    const a = createOpenAIAgentsAdapter({ host: h.host, sessionId: "s3" });
    const out = await settlesAt(a.toolInputGuardrail.run({ toolCall: call }), ADVERTISED_MS + 5_000);
    expect(out.behavior).toEqual({ type: "rejectContent", message: expect.stringContaining("Nobody answered") });
    expect(out.outputInfo).toMatchObject({ decision: "deny", category: "engine_timeout" });
    await closeReal(h);

    const prompting = await held({ host: { canPrompt: true } });
    const b = createOpenAIAgentsAdapter({ host: prompting.host, sessionId: "s4" });
    const needs = b.needsApprovalFor("shell")(undefined, { command: "git push origin main" }, "c2");
    expect(await settlesAt(needs, ADVERTISED_MS + 5_000)).toBe(true);
    await closeReal(prompting);
  });
});

describe("LangChain middleware and a harness that holds for a person", () => {
  const toolMessage = (f: ToolMessageFields) => ({ kind: "ToolMessage", ...f });
  const request = { toolCall: { id: "tc1", name: "terminal", args: { commands: "git push origin main" } } };

  it("a decision held 3x the adapter's own limit still arrives: the tool runs only once the person approved", async () => {
    const h = await held({ holdMs: HOLD_MS, answer: { decision: "allow" }, host: { failurePolicy: "fail-closed" } });
    const ran: unknown[] = [];
    const mw = createLangChainMiddleware({ host: h.host, toolMessage });
    const result = mw.wrapToolCall(request, async (req: never) => {
      ran.push(req);
      return { content: "pushed" };
    });
    expect(await settlesAt(result, HOLD_MS)).toEqual({ content: "pushed" });
    expect(ran).toHaveLength(1);
    await closeReal(h);
  });

  it("a hold nobody answers: the tool never runs; with interrupt the person is asked instead", async () => {
    const h = await held({});
    const ran: unknown[] = [];
    const handler = async (req: never) => {
      ran.push(req);
      return { content: "pushed" };
    };
    const mw = createLangChainMiddleware({ host: h.host, toolMessage });
    expect(await settlesAt(mw.wrapToolCall(request, handler), ADVERTISED_MS + 5_000)).toMatchObject({
      kind: "ToolMessage",
      status: "error",
      content: expect.stringContaining("Nobody answered"),
    });
    expect(ran).toHaveLength(0);
    await closeReal(h);

    const prompting = await held({ host: { canPrompt: true } });
    const asked: unknown[] = [];
    const withPrompt = createLangChainMiddleware({
      host: prompting.host,
      toolMessage,
      interrupt: async (req) => {
        asked.push(req);
        return "reject";
      },
    });
    expect(await settlesAt(withPrompt.wrapToolCall(request, handler), ADVERTISED_MS + 5_000)).toMatchObject({ status: "error" });
    expect(asked).toEqual([expect.objectContaining({ reasons: expect.stringContaining("handed to the host's prompt") })]);
    expect(ran).toHaveLength(0);
    await closeReal(prompting);
  });

  it("a host whose own limit is longer keeps it (ADR 0145: the longer of the two)", async () => {
    const h = await held({ holdMs: 50_000, answer: { decision: "allow" }, host: { timeoutMs: 60_000, failurePolicy: "fail-closed" } });
    expect(h.host.timeoutFor("PreToolUse")).toBe(60_000);
    const mw = createLangChainMiddleware({ host: h.host, toolMessage });
    expect(
      await settlesAt(
        mw.wrapToolCall(request, async () => ({ content: "pushed" })),
        50_000,
      ),
    ).toEqual({ content: "pushed" });
    await closeReal(h);
  });
});
