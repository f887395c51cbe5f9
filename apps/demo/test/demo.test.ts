import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { runDemo } from "../src/demo.js";
import { TRANSPORTS } from "../src/harness.js";

const collect = () => {
  const stream = new PassThrough();
  let text = "";
  stream.on("data", (c: Buffer) => (text += c.toString()));
  return { stream, text: () => text };
};

describe("demo session", () => {
  it.each(TRANSPORTS)("plays the whole session over %s and the audit log verifies", async (transport) => {
    const out = collect();
    const err = collect();
    const result = await runDemo({ transport, out: out.stream, err: err.stream, env: {} });

    // The story: every decision kind the issue asks for, each from the rule that should fire.
    const decided = result.entries.filter((e) => e.outcome !== "notified");
    const byDetail = (needle: string) => decided.filter((e) => e.detail.includes(needle));
    expect(byDetail("rm -rf /")[0]).toMatchObject({ outcome: "block", rule: "block-recursive-delete-root", enforcement: "not run" });
    expect(byDetail("npm install")[0]).toMatchObject({ outcome: "escalate", rule: "escalate-unknown-package-source" });
    expect(byDetail("git push origin main")[0]).toMatchObject({ outcome: "escalate", rule: "escalate-protected-branch-push" });
    expect(byDetail("AWS access key")[0]).toMatchObject({ outcome: "modify", rule: "redact-secrets-in-prompts" });
    expect(byDetail("AWS access key")[0]!.reason).toMatch(/\[REDACTED:aws_access_key_id\]/);
    const fetches = byDetail("web_fetch rfc4627");
    expect(fetches.map((e) => e.outcome)).toEqual(["defer", "allow"]);
    expect(fetches[0]!.rule).toBe("demo-rate-limit-web-fetch");
    expect(result.counts).toMatchObject({ allow: 7, modify: 1, block: 1, escalate: 2, defer: 1, notified: 19 });

    // The audit log holds every event (and the handshake) and its chain verifies.
    expect(result.audit.status).toBe("intact");
    expect(result.audit.records).toBe(result.entries.length);

    // Plain text when piped; the secret never reaches the output.
    const text = out.text();
    expect(text).not.toContain("\u001b[");
    expect(text).toMatch(/verify\s+intact: \d+ records, HMAC chain verified/);
    expect(text).not.toMatch(/AKIAZ3X9QW7EXAMPLE42/);
    expect(err.text()).not.toMatch(/"level":"error"/);
  });

  it("uses colour on request", async () => {
    const out = collect();
    await runDemo({ transport: "memory", out: out.stream, err: collect().stream, env: {}, color: true });
    expect(out.text()).toContain("\u001b[31mblock\u001b[39m");
  });
});
