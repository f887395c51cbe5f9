import { describe, expect, it } from "vitest";
import { composeRedactors, redactSecrets, redactValue } from "../src/index.js";
import { SAMPLES } from "./secret-samples.js";

describe("redactSecrets", () => {
  const cases: [string, string, string][] = [
    ["aws access key id", `key ${SAMPLES.aws_access_key_id} here`, "aws_access_key_id"],
    ["aws secret key", `aws_secret_access_key = ${SAMPLES.aws_secret}`, "aws_secret_access_key"],
    ["github classic", `token ${SAMPLES.github_classic}`, "github_token"],
    ["github fine-grained", `use ${SAMPLES.github_pat} now`, "github_token"],
    ["gitlab", `x ${SAMPLES.gitlab}`, "gitlab_token"],
    ["slack", `slack ${SAMPLES.slack}`, "slack_token"],
    ["stripe", `stripe ${SAMPLES.stripe}`, "stripe_key"],
    ["google", `g ${SAMPLES.google}`, "google_api_key"],
    ["openai", `OPENAI ${SAMPLES.openai}`, "openai_api_key"],
    ["anthropic", `ANTHROPIC ${SAMPLES.anthropic}`, "anthropic_api_key"],
    ["jwt", `Cookie: session=${SAMPLES.jwt}`, "jwt"],
    ["pem", `key:\n${SAMPLES.pem}\nrest`, "private_key"],
    ["password assignment", `mysql -u root password=${SAMPLES.password}`, "generic_secret"],
    ["json password", `{"user":"bob","password":"${SAMPLES.password}"}`, "generic_secret"],
    ["bearer", `Authorization: Bearer abcdef0123456789xyzQRSTUVW42`, "bearer_token"],
    ["url credentials", `git clone https://bob:${SAMPLES.password}@example.com/repo.git`, "url_credentials"],
  ];
  for (const [name, text, kind] of cases) {
    it(`redacts ${name}`, () => {
      const out = redactSecrets(text);
      expect(out).toContain(`[REDACTED:${kind}]`);
      for (const secret of Object.values(SAMPLES)) {
        if (text.includes(secret)) expect(out).not.toContain(secret);
      }
    });
  }

  it("keeps ordinary text unchanged", () => {
    for (const text of [
      "ls -la /tmp",
      "git push origin feature/x",
      "sk-short",
      "the password policy",
      "AKIA is a prefix",
      "eyJ alone",
      "",
    ]) {
      expect(redactSecrets(text)).toBe(text);
    }
  });

  it("redacts a truncated PEM block to the end", () => {
    const cut = SAMPLES.pem.slice(0, 45);
    expect(redactSecrets(`x ${cut}`)).toBe("x [REDACTED:private_key]");
  });

  it("is idempotent", () => {
    const once = redactSecrets(`password=${SAMPLES.password} ${SAMPLES.stripe}`);
    expect(redactSecrets(once)).toBe(once);
  });
});

describe("redactValue", () => {
  it("walks objects and arrays, replaces values under sensitive keys, leaves the input untouched", () => {
    const input = {
      command: `curl -H "Authorization: Bearer ${SAMPLES.openai}" x`,
      env: { API_KEY: "plain-value", password: SAMPLES.password, "client-secret": "abc", harmless: 3 },
      list: [SAMPLES.stripe, 1, null],
    };
    const out = redactValue(input) as typeof input;
    expect(JSON.stringify(out)).not.toContain(SAMPLES.openai);
    expect(JSON.stringify(out)).not.toContain(SAMPLES.password);
    expect(JSON.stringify(out)).not.toContain("plain-value");
    expect(out.env).toMatchObject({
      API_KEY: "[REDACTED:api_key]",
      password: "[REDACTED:password]",
      "client-secret": "[REDACTED:client-secret]",
      harmless: 3,
    });
    expect(out.list[0]).toBe("[REDACTED:stripe_key]");
    expect(input.env.password).toBe(SAMPLES.password);
  });

  it("survives cycles and deep nesting", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(redactValue(cyclic)).toEqual({ a: 1, self: "[CIRCULAR]" });
    let deep: unknown = "leaf";
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(JSON.stringify(redactValue(deep, undefined, 10))).toContain("[TRUNCATED:depth]");
  });

  it("takes a pluggable redactor, composable with the built-in one", () => {
    const custom = (text: string) => text.replace(/INTERNAL-\d+/g, "[REDACTED:internal]");
    const both = composeRedactors(redactSecrets, custom);
    expect(redactValue({ t: `INTERNAL-42 ${SAMPLES.stripe}` }, both)).toEqual({ t: "[REDACTED:internal] [REDACTED:stripe_key]" });
    expect(redactValue({ t: `INTERNAL-42 ${SAMPLES.stripe}` }, custom)).toEqual({ t: `[REDACTED:internal] ${SAMPLES.stripe}` });
  });
});
