/** The countdown on a waiting card (pure; no browser). */
import { describe, expect, it } from "vitest";
import { countdownText } from "../src/page/view.js";

describe("countdownText", () => {
  const deadline = "2026-11-27T12:05:00.000Z";
  const at = (iso: string) => Date.parse(iso);
  it("says how long is left, rounded up to the second, and when the deadline passed", () => {
    expect(countdownText(deadline, at("2026-11-27T12:00:00.000Z"))).toBe("answer within 5:00");
    expect(countdownText(deadline, at("2026-11-27T12:04:59.100Z"))).toBe("answer within 0:01");
    expect(countdownText("2026-11-27T14:00:00.000Z", at("2026-11-27T12:00:00.000Z"))).toBe("answer within 2:00:00");
    expect(countdownText(deadline, at("2026-11-27T12:05:00.000Z"))).toBe("deadline passed");
    expect(countdownText("not a date", 0)).toBe("");
  });
});
