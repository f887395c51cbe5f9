/**
 * External anchors: every checkpoint is also published to a file elsewhere or an HTTP endpoint,
 * and verification against the anchor finds records removed behind it even when the checkpoint
 * next to the log was put back to an older one. Publishing never holds up an append.
 */
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openAuditLog, readAuditAnchor, toAuditAnchor, verifyAuditLog, type AuditIncident, type AuditLog } from "../src/index.js";
import { entry, key, otherKey, tempDir } from "./helpers.js";

let dir: string;
let cleanup: () => Promise<void>;
const closers: Array<() => Promise<unknown>> = [];
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await cleanup();
});

/** Polls `check` until it holds (a condition with a generous deadline, never a fixed sleep). */
async function until(check: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const lines = async (file: string) => (await readFile(file, "utf8")).split("\n").filter((l) => l.length > 0);

/** A minimal anchor service: stores each POSTed checkpoint, answers GET with the latest (404 while none). */
async function anchorServer(
  behaviour: "store" | "fail" | "hang" = "store",
): Promise<{ url: string; posts: string[]; server: Server; hung: ServerResponse[] }> {
  const posts: string[] = [];
  const hung: ServerResponse[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.setEncoding("utf8").on("data", (c: string) => (body += c));
    req.on("end", () => {
      if (req.method === "POST") {
        if (behaviour === "hang") {
          hung.push(res);
          return;
        }
        if (behaviour === "fail") {
          res.writeHead(503).end();
          return;
        }
        posts.push(body);
        res.writeHead(204).end();
        return;
      }
      const last = posts.at(-1);
      if (last === undefined) res.writeHead(404).end();
      else res.writeHead(200, { "content-type": "application/json" }).end(last);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const res of hung) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/anchor/log-1`, posts, server, hung };
}

async function writeRecords(log: AuditLog, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) await log.append(entry(i));
}

describe("file anchor", () => {
  it("receives every checkpoint; records cut behind it are found although an older checkpoint was put back", async () => {
    const path = join(dir, "audit.log");
    await mkdir(join(dir, "elsewhere"));
    const anchor = join(dir, "elsewhere", "audit.anchor");
    const log = await openAuditLog({ key, path, anchor, checkpoint: { intervalMs: 60_000 } });
    await writeRecords(log, 0, 5);
    await log.checkpoint();
    await until(() => log.stats.anchoredSeq === 5, "the anchor to hold seq 5");
    expect(await readAuditAnchor(anchor)).toMatchObject({ checkpoint: { seq: 5, kid: key.id } });
    // The attacker keeps this checkpoint to put it back later.
    await copyFile(`${path}.checkpoint`, join(dir, "old.checkpoint"));
    await writeRecords(log, 5, 5);
    await log.close();
    expect(log.stats).toMatchObject({ anchored: 2, anchorFailures: 0, anchoredSeq: 10 });
    expect(await verifyAuditLog(path, key, { anchor })).toMatchObject({
      status: "intact",
      anchor: { status: "verified", seq: 10, file: anchor },
    });

    // Cut records 6..10 and put the old checkpoint back: the log alone still verifies...
    const all = await lines(path);
    await writeFile(path, `${all.slice(0, 5).join("\n")}\n`);
    await copyFile(join(dir, "old.checkpoint"), `${path}.checkpoint`);
    expect(await verifyAuditLog(path, key)).toMatchObject({ status: "intact" });
    // ...but not against the anchor.
    const report = await verifyAuditLog(path, key, { anchor });
    expect(report).toMatchObject({ status: "broken", break: { kind: "truncated", expectedSeq: 10 }, anchor: { status: "failed" } });
    expect(report.break!.message).toContain("records 6..10 are missing");
    expect(report.break!.message).toContain(`published to the anchor ${anchor}`);
  });

  it("an anchor of another key, or altered, is refused; an empty one is reported as holding nothing", async () => {
    const path = join(dir, "audit.log");
    const anchor = join(dir, "audit.anchor");
    const log = await openAuditLog({ key, path, anchor });
    await writeRecords(log, 0, 3);
    await log.close();
    const text = await readFile(anchor, "utf8");
    await writeFile(anchor, text.replace('"seq":3', '"seq":2'));
    expect((await verifyAuditLog(path, key, { anchor })).break).toMatchObject({ kind: "checkpoint" });
    const foreign = join(dir, "foreign.log");
    const other = await openAuditLog({ key: otherKey, path: foreign, anchor: join(dir, "foreign.anchor") });
    await other.append(entry(0));
    await other.close();
    const wrong = await verifyAuditLog(path, key, { anchor: join(dir, "foreign.anchor") });
    expect(wrong.break).toMatchObject({
      kind: "checkpoint",
      message: expect.stringContaining(`written with key ${otherKey.id}`) as unknown,
    });
    expect(await verifyAuditLog(path, key, { anchor: join(dir, "none.anchor") })).toMatchObject({
      status: "intact",
      anchor: { status: "none" },
    });
  });

  it("an anchor needs checkpoints; an empty target is refused", async () => {
    await expect(openAuditLog({ key, path: join(dir, "a.log"), anchor: join(dir, "x"), checkpoint: false })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
    expect(() => toAuditAnchor(" ")).toThrow(/file path or URL/);
  });
});

describe("HTTP anchor", () => {
  it("each checkpoint is POSTed; verification GETs the latest and finds a cut tail", async () => {
    const service = await anchorServer();
    const path = join(dir, "audit.log");
    const log = await openAuditLog({ key, path, anchor: service.url, checkpoint: { intervalMs: 60_000 } });
    await writeRecords(log, 0, 4);
    await log.close();
    expect(service.posts.length).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(service.posts.at(-1)!)).toMatchObject({ type: "checkpoint", seq: 4, kid: key.id });
    expect(await verifyAuditLog(path, key, { anchor: service.url })).toMatchObject({
      status: "intact",
      anchor: { status: "verified", seq: 4 },
    });
    const all = await lines(path);
    await writeFile(path, `${all.slice(0, 3).join("\n")}\n`);
    await writeFile(`${path}.checkpoint`, ""); // the local checkpoint damaged too: the anchor still tells
    const report = await verifyAuditLog(path, key, { anchor: service.url, checkpoint: false });
    expect(report.break).toMatchObject({ kind: "truncated", expectedSeq: 4 });
  });

  it("a failing or hanging endpoint never holds up appends; failures are reported and counted", async () => {
    const failing = await anchorServer("fail");
    const incidents: AuditIncident[] = [];
    const log = await openAuditLog({
      key,
      path: join(dir, "a.log"),
      anchor: failing.url,
      checkpoint: { intervalMs: 60_000 },
      onincident: (i) => incidents.push(i),
    });
    await writeRecords(log, 0, 3);
    await log.checkpoint();
    await until(() => log.stats.anchorFailures >= 1, "a failed publication");
    expect(incidents.find((i) => i.kind === "anchor_failed")?.message).toMatch(/HTTP 503/);
    await log.close();

    const hanging = await anchorServer("hang");
    const held = await openAuditLog({
      key,
      path: join(dir, "b.log"),
      anchor: toAuditAnchor(hanging.url, { timeoutMs: 300 }),
      checkpoint: { intervalMs: 60_000 },
    });
    await writeRecords(held, 0, 2);
    await held.checkpoint();
    await until(() => hanging.hung.length >= 1, "the endpoint to hold a publication");
    // The endpoint holds the publication: appends still complete.
    await writeRecords(held, 2, 20);
    expect(held.head?.seq).toBe(22);
    await until(() => held.stats.anchorFailures >= 1, "the publication to time out");
    await held.close();
    expect(held.stats.anchored).toBe(0);
  });

  it("an unreachable anchor makes verification fail, naming it without credentials", async () => {
    const path = join(dir, "audit.log");
    const log = await openAuditLog({ key, path });
    await log.append(entry(0));
    await log.close();
    const service = await anchorServer();
    const url = service.url.replace("http://", "http://user:pw@");
    await new Promise<void>((resolve) => service.server.close(() => resolve()));
    const report = await verifyAuditLog(path, key, { anchor: url });
    expect(report.break).toMatchObject({
      kind: "checkpoint",
      message: expect.stringMatching(/cannot read anchor http:\/\/127\.0\.0\.1:\d+\/anchor\/log-1/) as unknown,
    });
    expect(report.break!.message).not.toContain("pw");
  });
});
