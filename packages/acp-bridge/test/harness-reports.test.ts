/**
 * Reports to the harness leave after the turn of the event loop that made them (off the ACP
 * message's path) and never overtake or fall behind a gate: a gate sends the queued reports
 * first. Real AhpClient and AhpServer over the in-memory linked pair.
 */
import { afterEach, describe, expect, it } from "vitest";
import { HarnessLink, ManualClock } from "../src/index.js";
import { testHarness, until, type TestHarness } from "./helpers/setup.js";

let h: TestHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const kinds = (t: TestHarness) =>
  t.events.map((e) => (e.event_type === "run_lifecycle" ? `run:${(e.payload as { status: string }).status}` : e.event_type));

describe("HarnessLink reports", () => {
  it("are not sent within the call that made them; after the loop turns they arrive in order", async () => {
    h = await testHarness();
    const link = new HarnessLink({ client: h.client, clock: new ManualClock() });
    link.notify("session_start", "s1", { session_id: "s1", cwd: "/p" });
    link.runLifecycle("s1", "run_1", "executing", { updatedAt: new Date(0).toISOString() });
    link.runLifecycle("s1", "run_1", "completed", { updatedAt: new Date(0).toISOString() });
    await Promise.resolve();
    expect(h.events).toHaveLength(0);
    await until(() => kinds(h!).length >= 3, "the three reports at the harness");
    expect(kinds(h)).toEqual(["session_start", "run:executing", "run:completed"]);
  });

  it("a gate sends the reports queued before it first, so the harness sees them in the order they were made", async () => {
    h = await testHarness();
    const link = new HarnessLink({ client: h.client, clock: new ManualClock() });
    link.runLifecycle("s1", "run_1", "executing", { updatedAt: new Date(0).toISOString() });
    const gate = link.gateSuspend({ sessionId: "s1", mode: "finish_step", initiator: "client", initiatorDetail: "user" });
    link.runLifecycle("s1", "run_1", "completed", { updatedAt: new Date(0).toISOString() });
    expect(await gate).toEqual({ proceed: true });
    await until(() => kinds(h!).length >= 3, "the reports and the gate at the harness");
    expect(kinds(h)).toEqual(["run:executing", "pre_action", "run:completed"]);
  });

  it("flush() sends the queued reports at once (the bridge does so when it closes)", async () => {
    h = await testHarness();
    const link = new HarnessLink({ client: h.client, clock: new ManualClock() });
    link.notify("session_end", "s1", { session_id: "s1", reason: "closed" });
    link.flush();
    await until(() => kinds(h!).length > 0, "the report at the harness");
    expect(kinds(h)).toEqual(["session_end"]);
  });
});
