import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { runDemo } from "../src/session.js";

describe("demo", () => {
  it("prints one decision per command, blocking the destructive one", async () => {
    const out = new PassThrough();
    let text = "";
    out.on("data", (c: Buffer) => (text += c.toString()));
    expect(await runDemo({ out })).toBe(0);
    expect(text).toMatch(/handshake: demo-harness speaks AHP 2\.4/);
    expect(text).toMatch(/"rm -rf \/"\s+-> block \(recursive delete of \/\)/);
    expect(text).toMatch(/"ls -la"\s+-> allow/);
    expect(text).toMatch(/"npm install left-pad"\s+-> escalate/);
  });
});
