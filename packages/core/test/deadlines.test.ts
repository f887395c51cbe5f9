import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { Deadlines } from "../src/deadlines.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("Deadlines", () => {
  it("expires in deadline order, per timeout value, and not cancelled ones", async () => {
    const d = new Deadlines();
    const fired: string[] = [];
    d.schedule(30, () => fired.push("a30"));
    const b = d.schedule(30, () => fired.push("b30"));
    d.schedule(10, () => fired.push("c10"));
    d.schedule(30, () => fired.push("d30"));
    d.cancel(b);
    await sleep(15);
    expect(fired).toEqual(["c10"]);
    await sleep(40);
    expect(fired).toEqual(["c10", "a30", "d30"]);
  });

  it("re-arms for the next call when the first one finished early", async () => {
    const d = new Deadlines();
    const fired: number[] = [];
    const first = d.schedule(20, () => fired.push(1));
    await sleep(10);
    d.schedule(20, () => fired.push(2));
    d.cancel(first);
    await sleep(15); // the first deadline has passed: nothing may fire yet
    expect(fired).toEqual([]);
    await sleep(20);
    expect(fired).toEqual([2]);
  });

  it("does not keep the process alive once nothing is pending", () => {
    const code = `
      import { Deadlines } from ${JSON.stringify(new URL("../src/deadlines.ts", import.meta.url).pathname)};
      const d = new Deadlines();
      const n = d.schedule(60_000, () => { console.log("fired"); });
      d.cancel(n);
    `;
    const started = Date.now();
    const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { encoding: "utf8", timeout: 20_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/fired/);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it("keeps the process alive while a call is pending, then fires", () => {
    const code = `
      import { Deadlines } from ${JSON.stringify(new URL("../src/deadlines.ts", import.meta.url).pathname)};
      const d = new Deadlines();
      d.schedule(50, () => { console.log("fired"); });
    `;
    const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { encoding: "utf8", timeout: 20_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/fired/);
  });
});
