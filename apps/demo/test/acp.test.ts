import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { runAcpDemo } from "../src/acp.js";

const collect = () => {
  const stream = new PassThrough();
  let text = "";
  stream.on("data", (c: Buffer) => (text += c.toString()));
  return { stream, text: () => text };
};

describe("demo --scenario acp", () => {
  it("parks the session on the escalated install, the operator approves, the session resumes warm with the approval and installs", async () => {
    const out = collect();
    const result = await runAcpDemo({ out: out.stream, err: collect().stream, env: {} });
    expect(result.stopReasons).toEqual(["end_turn", "end_turn"]);
    expect(result.handle).toMatch(/^sus_/);
    const kinds = result.entries.map((e) => `${e.channel}|${e.kind}`);
    const at = (k: string) => kinds.findIndex((x) => x === k);
    // The story, in wire order.
    const order = [
      at("ACP client→bridge|session/prompt"),
      at("ACP agent→bridge|session/request_permission"),
      kinds.findIndex((k, i) => k === "AHP bridge→harness|pre_action" && result.entries[i]!.detail.includes("escalate")),
      at("ACP bridge→agent|session/cancel"),
      at("ACP bridge→client|resp:session/prompt"),
      at("ACP bridge→client|lifecycle:suspended"),
      at("operator|approve"),
      at("ACP bridge→client|lifecycle:resumed"),
    ];
    expect(
      order.every((i) => i >= 0),
      JSON.stringify(order),
    ).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    // Every message class shows up: ACP both faces, AHP gates and reports.
    for (const k of [
      "ACP bridge→agent|initialize",
      "ACP bridge→agent|session/new",
      "AHP bridge→harness|session_start",
      "AHP bridge→harness|run_lifecycle",
      "AHP bridge→harness|heartbeat",
    ])
      expect(kinds).toContain(k);
    expect(result.entries.find((e) => e.kind === "lifecycle:resumed")!.detail).toContain("cause external_event");
    // The resumed turn got the approval as input and ran the install warm.
    expect(result.resumedTurnText).toContain("Approval received");
    expect(result.resumedTurnText).toContain("Installed left-pad");
    const text = out.text();
    // eslint-disable-next-line no-control-regex -- the assertion is that no ANSI escape (ESC) reaches plain output.
    expect(text).not.toMatch(/\u001b\[/);
    expect(text).toMatch(/second turn\s+end_turn/);
  });
});
