/**
 * Per-call time limits without a timer per call (deadlines.ts), directly and through the
 * client's call timeouts and the server's handler timeouts.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { clearDeadline, startDeadline, TimedCall } from "../src/deadlines.js";
import { AhpClient, AhpLocalError, AhpServer, createLinkedPair } from "../src/index.js";
import { until } from "./wait.js";

class Probe extends TimedCall {
  expiredAt: number | undefined;
  constructor(
    readonly name: string,
    readonly log: string[],
  ) {
    super();
  }
  onDeadline(): void {
    this.expiredAt = Date.now();
    this.log.push(this.name);
  }
}

const deadlineTimers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;

describe("deadlines", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("expires calls of one limit in the order they started, each at its own limit", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date", "performance"] });
    const log: string[] = [];
    const a = new Probe("a", log);
    const b = new Probe("b", log);
    const c = new Probe("c", log);
    startDeadline(a, 100);
    await vi.advanceTimersByTimeAsync(30);
    startDeadline(b, 100);
    await vi.advanceTimersByTimeAsync(30);
    startDeadline(c, 100);
    await vi.advanceTimersByTimeAsync(39);
    expect(log).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(log).toEqual(["a"]);
    await vi.advanceTimersByTimeAsync(29);
    expect(log).toEqual(["a"]);
    await vi.advanceTimersByTimeAsync(1);
    expect(log).toEqual(["a", "b"]);
    await vi.advanceTimersByTimeAsync(30);
    expect(log).toEqual(["a", "b", "c"]);
  });

  it("never expires a call that finished, even the oldest, and keeps the later ones' limits", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date", "performance"] });
    const log: string[] = [];
    const first = new Probe("first", log);
    const middle = new Probe("middle", log);
    const last = new Probe("last", log);
    startDeadline(first, 50);
    await vi.advanceTimersByTimeAsync(10);
    startDeadline(middle, 50);
    await vi.advanceTimersByTimeAsync(10);
    startDeadline(last, 50);
    clearDeadline(first);
    clearDeadline(middle);
    clearDeadline(middle); // twice: a no-op
    await vi.advanceTimersByTimeAsync(40);
    expect(log).toEqual([]);
    await vi.advanceTimersByTimeAsync(10);
    expect(log).toEqual(["last"]);
  });

  it("keeps limits of different lengths apart", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date", "performance"] });
    const log: string[] = [];
    startDeadline(new Probe("long", log), 300);
    startDeadline(new Probe("short", log), 100);
    startDeadline(new Probe("middle", log), 200);
    await vi.advanceTimersByTimeAsync(300);
    expect(log).toEqual(["short", "middle", "long"]);
  });

  it("lets a call that expires start another of the same limit", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date", "performance"] });
    const log: string[] = [];
    class Again extends Probe {
      override onDeadline(): void {
        super.onDeadline();
        if (log.length < 3) startDeadline(new Again(`again${log.length}`, log), 20);
      }
    }
    startDeadline(new Again("again0", log), 20);
    await vi.advanceTimersByTimeAsync(100);
    expect(log).toEqual(["again0", "again1", "again2"]);
  });

  it("reuses one timer for calls made one after the other, and still expires a later call at its limit", async () => {
    const setSpy = vi.spyOn(globalThis, "setTimeout");
    try {
      const before = deadlineTimers();
      for (let k = 0; k < 100; k++) {
        const call = new Probe(`seq${k}`, []);
        startDeadline(call, 12_345);
        expect(deadlineTimers()).toBe(before + 1);
        clearDeadline(call);
        expect(deadlineTimers()).toBe(before);
      }
      expect(setSpy.mock.calls.filter(([, ms]) => ms === 12_345)).toHaveLength(1);
    } finally {
      setSpy.mockRestore();
    }
    // The idle timer of a short limit was armed for an earlier call: a later call still expires at its own limit.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date", "performance"] });
    const log: string[] = [];
    const early = new Probe("early", log);
    startDeadline(early, 40);
    clearDeadline(early);
    await vi.advanceTimersByTimeAsync(25);
    const late = new Probe("late", log);
    startDeadline(late, 40);
    await vi.advanceTimersByTimeAsync(25); // the idle timer fired: nothing due yet
    expect(log).toEqual([]);
    await vi.advanceTimersByTimeAsync(14);
    expect(log).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(log).toEqual(["late"]);
    expect(late.expiredAt).toBeDefined();
  });

  it("does not reuse an idle timer armed by fake timers once real timers are back", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date", "performance"] });
    const faked = new Probe("faked", []);
    startDeadline(faked, 30);
    clearDeadline(faked); // leaves an idle fake timer behind
    vi.useRealTimers();
    const log: string[] = [];
    const real = new Probe("real", log);
    const started = Date.now();
    startDeadline(real, 30);
    await until(() => log.length > 0, "the call expired");
    expect(log).toEqual(["real"]);
    expect(real.expiredAt! - started).toBeGreaterThanOrEqual(29); // at its limit, not before
  });

  it("holds no timer once every call finished (the process may exit), and one while any runs", async () => {
    const before = deadlineTimers();
    const calls = Array.from({ length: 1000 }, (_, k) => new Probe(`p${k}`, []));
    for (const call of calls) startDeadline(call, 60_000);
    expect(deadlineTimers()).toBe(before + 1);
    for (const call of calls.slice(0, 999)) clearDeadline(call);
    expect(deadlineTimers()).toBe(before + 1);
    clearDeadline(calls[999]!);
    expect(deadlineTimers()).toBe(before);
  });
});

describe("call timeouts on shared deadlines", () => {
  it("fails each unanswered call with TIMEOUT and answers the others; no timer is left behind", async () => {
    const server = new AhpServer({
      // Advertising less than the client's own timeout: the client's 1 s stands (ADR 0145).
      config: { timeout_ms: 100 },
      handlerTimeoutMs: 0,
      handlers: {
        onEvent: (event) =>
          (event.payload as { hang?: boolean }).hang === true
            ? new Promise(() => undefined)
            : Promise.resolve({ decision: "allow" as const }),
      },
    });
    const [agentSide, harnessSide] = createLinkedPair();
    await server.connect(harnessSide);
    // Long enough for the answered calls to come back on a busy machine.
    const client = new AhpClient({ timeoutMs: 1000 });
    await client.connect(agentSide);
    const before = deadlineTimers();
    const hung = [client.send("pre_action", { hang: true }), client.send("pre_action", { hang: true })];
    const answered = [client.send("pre_action", {}), client.send("pre_action", {})];
    await expect(Promise.all(answered)).resolves.toEqual([
      expect.objectContaining({ decision: "allow" }),
      expect.objectContaining({ decision: "allow" }),
    ]);
    for (const call of hung) {
      const error = await call.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(AhpLocalError.isInstance(error) && error.code).toBe("TIMEOUT");
      expect((error as Error).message).toBe("Timeout after 1000ms");
    }
    expect(deadlineTimers()).toBeLessThanOrEqual(before);
    await client.close();
    await server.close({ graceMs: 0 });
  });

  it("answers a handler that runs past the server's limit with -32603, and a later one in time", async () => {
    let calls = 0;
    const server = new AhpServer({
      handlerTimeoutMs: 100,
      handlers: {
        onEvent: () => (++calls === 1 ? new Promise(() => undefined) : Promise.resolve({ decision: "allow" })),
      },
    });
    const [agentSide, harnessSide] = createLinkedPair();
    await server.connect(harnessSide);
    const client = new AhpClient({ timeoutMs: 60_000 });
    await client.connect(agentSide);
    const slow = client.send("pre_action", {});
    const fast = await client.send("pre_action", {});
    expect(fast).toMatchObject({ decision: "allow" });
    await expect(slow).rejects.toThrow(/Timeout after 100ms/);
    await client.close();
    await server.close({ graceMs: 0 });
  });
});
