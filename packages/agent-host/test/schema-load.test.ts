import { describe, expect, it } from "vitest";
import { validateDef } from "./helpers/schema.js";

describe("vendored schemas with the README's relaxations", () => {
  it("accept a bitset status and reject a malformed envelope", () => {
    expect(
      validateDef("actions", "ActionEnvelope", {
        channel: "ahp-session:/x",
        serverSeq: 1,
        action: { type: "session/titleChanged", title: "t" },
      }),
    ).toBeUndefined();
    expect(
      validateDef("commands", "SessionSummary", {
        resource: "ahp-session:/x",
        provider: "p",
        title: "t",
        status: 40,
        createdAt: "a",
        modifiedAt: "b",
      }),
    ).toBeUndefined();
    expect(validateDef("actions", "ActionEnvelope", { channel: "ahp-session:/x", action: { type: "session/titleChanged" } })).toMatch(
      /ActionEnvelope/,
    );
  });
});
