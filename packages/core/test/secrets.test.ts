import { describe, expect, it } from "vitest";
import { containsSecret, findSecrets, redactSecretsIn, redactText, scanSecrets, shannonEntropy, type SecretKind } from "../src/index.js";

// Test credentials are assembled at run time so that secret scanners do not flag this file.
const j = (...parts: string[]) => parts.join("");
const GH = j("ghp", "_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");

const TRUE_POSITIVES: [SecretKind, string, string][] = [
  ["aws_access_key_id", j("AKIA", "IOSFODNN7EXAMPLE"), "export AWS_ACCESS_KEY_ID=@@"],
  ["aws_access_key_id", j("ASIA", "Y34FZKBOKMUTVV7A"), "key: @@"],
  ["aws_secret_access_key", j("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY"), "aws_secret_access_key = @@"],
  ["aws_secret_access_key", j("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY"), 'AWS_SECRET_ACCESS_KEY="@@"'],
  ["github_token", GH, "token @@ here"],
  ["github_token", j("gho", "_", "16C7e42F292c6912E7710c838347Ae178B4a"), "@@"],
  ["github_token", j("github_pat_", "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTU"), "pat=@@"],
  ["gitlab_token", j("glpat", "-", "Zx8Yw7Vu6Ts5Rq4Po3Nm"), "GITLAB_TOKEN @@"],
  ["slack_token", j("xoxb", "-", "1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx"), "slack: @@"],
  ["slack_webhook", j("https://hooks.slack.com/services/", "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"), "post to @@ now"],
  ["stripe_key", j("sk_live", "_", "4eC39HqLyjWDarjtT1zdp7dc"), "stripe @@"],
  ["google_api_key", j("AIza", "SyA1234567890abcdefghijklmnopqrstuv"), "maps key=@@"],
  ["anthropic_api_key", j("sk-ant", "-api03-", "abcdefGHIJ1234567890_xyz-abcdefghKLMN"), "ANTHROPIC_API_KEY=@@"],
  ["openai_api_key", j("sk-proj", "-", "Abc123Def456Ghi789Jkl012Mno345Pqr678"), "OPENAI_API_KEY=@@"],
  ["openai_api_key", j("sk", "-", "T3BlbkFJa1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"), "@@"],
  [
    "jwt",
    j("eyJhbGciOiJIUzI1NiJ9", ".", "eyJzdWIiOiIxMjM0NTY3ODkwIn0", ".", "dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
    "Cookie: session=@@",
  ],
  [
    "private_key",
    j("-----BEGIN RSA ", "PRIVATE KEY-----\nMIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END RSA ", "PRIVATE KEY-----"),
    "key:\n@@\nend",
  ],
  ["private_key", j("-----BEGIN OPENSSH ", "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH ", "PRIVATE KEY-----"), "@@"],
  ["private_key", j("-----BEGIN ", "PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC"), "truncated output: @@"],
  ["url_credentials", "S3cr3tPw0rd", "DATABASE_URL=postgres://admin:@@@db.internal:5432/app"],
  ["bearer_token", "abcDEF123456ghiJKL789mnoPQR", "Authorization: Bearer @@"],
  ["generic_secret", "Xk9#mQ2vL8pZ", "password=@@"],
  ["generic_secret", "Tr0ub4dor&3xyz", 'DB_PASSWORD="@@"'],
  ["generic_secret", "Zx81Lq02Mn55Pp", '{"apiKey": "@@"}'],
  ["generic_secret", "q8W2e6R4t0Y5u3I1", "client_secret: @@"],
];

const FALSE_POSITIVES = [
  "password=hunter2",
  "password = os.environ['DB_PASSWORD']",
  "api_key=your_api_key_here",
  "token=${GITHUB_TOKEN}",
  "password: changeme123",
  "the password is stored in the vault",
  "password=user.password_hash",
  "sk-learn-is-a-library-name-indeed",
  "task-1234567890abcdefghijklmn",
  "AKIA-not-a-key",
  "ghp_short",
  "eyJ only a prefix",
  "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A\n-----END PUBLIC KEY-----",
  "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkq\n-----END CERTIFICATE-----",
  "postgres://user:password@localhost/db",
  "https://example.com/path?query=1",
  "Bearer token",
  "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
  "uuid 123e4567-e89b-12d3-a456-426614174000",
];

describe("findSecrets", () => {
  it.each(TRUE_POSITIVES)("finds %s", (kind, secret, template) => {
    const text = template.replace("@@", secret);
    const findings = findSecrets(text);
    expect(findings.map((f) => f.kind)).toEqual([kind]);
    const [f] = findings;
    expect(text.slice(f!.start, f!.end)).toBe(secret);
  });

  it.each(FALSE_POSITIVES)("ignores %j", (text) => {
    expect(findSecrets(text)).toEqual([]);
  });

  it("reports several secrets in order without overlaps; the specific kind wins", () => {
    const jwt = j("eyJhbGciOiJIUzI1NiJ9", ".", "eyJzdWIiOiIxIn0", ".", "c2lnbmF0dXJlX2hlcmVfMTIz");
    const text = `token=${jwt} and ${GH} and AKIAIOSFODNN7EXAMPLE`;
    expect(findSecrets(text).map((f) => f.kind)).toEqual(["jwt", "github_token", "aws_access_key_id"]);
  });

  it("filters by kind", () => {
    const text = `${GH} AKIAIOSFODNN7EXAMPLE`;
    expect(findSecrets(text, { kinds: ["aws_access_key_id"] }).map((f) => f.kind)).toEqual(["aws_access_key_id"]);
  });

  it("never returns the secret itself", () => {
    expect(JSON.stringify(findSecrets(`x ${GH}`))).not.toContain(GH);
  });

  it("stays fast on adversarial input", () => {
    const inputs = [
      "a.".repeat(50_000),
      "password=".repeat(10_000),
      "a_".repeat(50_000),
      "http://".repeat(20_000),
      "-----BEGIN ".repeat(10_000),
    ];
    for (const text of inputs) {
      const start = performance.now();
      findSecrets(text);
      // Linear time takes milliseconds here; backtracking that grows with the square of the
      // length takes minutes. The bound sits far from both, so a busy machine does not matter.
      expect(performance.now() - start).toBeLessThan(10_000);
    }
  });
});

describe("redaction", () => {
  it("replaces each secret by [REDACTED:<kind>]", () => {
    expect(redactText(`use ${GH} and AKIAIOSFODNN7EXAMPLE`)).toBe("use [REDACTED:github_token] and [REDACTED:aws_access_key_id]");
    expect(redactText("password=Xk9#mQ2vL8pZ done")).toBe("password=[REDACTED:generic_secret] done");
    expect(redactText("nothing here")).toBe("nothing here");
  });

  it("redacts a copy of a JSON value, at any depth, and leaves the input alone", () => {
    const payload = { prompt: `key ${GH}`, nested: [{ env: "AKIAIOSFODNN7EXAMPLE" }, 42, null, true], keep: "plain" };
    const before = JSON.stringify(payload);
    const out = redactSecretsIn(payload);
    expect(out).toEqual({
      prompt: "key [REDACTED:github_token]",
      nested: [{ env: "[REDACTED:aws_access_key_id]" }, 42, null, true],
      keep: "plain",
    });
    expect(JSON.stringify(payload)).toBe(before);
    expect(out).not.toBe(payload);
  });

  it("keeps a member named __proto__ as data", () => {
    const input = JSON.parse(`{"__proto__": {"k": "${GH}"}}`) as Record<string, unknown>;
    const out = redactSecretsIn<Record<string, unknown>>(input);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(out, "__proto__")?.value).toEqual({ k: "[REDACTED:github_token]" });
  });

  it("is idempotent", () => {
    const once = redactText(`a ${GH} password=Xk9#mQ2vL8pZ`);
    expect(redactText(once)).toBe(once);
  });

  it("scanSecrets gives paths; containsSecret answers yes/no", () => {
    expect(scanSecrets({ a: [{ b: `x ${GH}` }] }).map((l) => [l.path, l.kind])).toEqual([[["a", 0, "b"], "github_token"]]);
    expect(containsSecret(GH)).toBe(true);
    expect(containsSecret("hello")).toBe(false);
  });
});

describe("shannonEntropy", () => {
  it("measures bits per character", () => {
    expect(shannonEntropy("aaaa")).toBe(0);
    expect(shannonEntropy("abcd")).toBe(2);
    expect(shannonEntropy("")).toBe(0);
  });
});
