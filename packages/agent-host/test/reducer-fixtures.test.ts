/**
 * §14.2 scenario 26 (reducer parity): every vendored reducer case tagged `core` passes, except
 * the cases listed in REDUCER_SKIPS, each naming the drift item of the fixtures README it
 * belongs to. Nulls stand for absent keys; the clock is fixed at 9999 ms; inputs are frozen.
 */
import { describe, expect, it } from "vitest";
import { reduceChat, reduceRoot, reduceSession, type Clock } from "../src/reducers/index.js";
import type { StateAction } from "../src/wire/types.js";
import { deepFreeze, dropUndefined, fixtureIndex, nullToAbsent, readFixture } from "./helpers/fixtures.js";
import { REDUCER_SKIPS } from "./reducer-skips.js";

interface ReducerCase {
  description: string;
  reducer: string;
  initial: unknown;
  actions: StateAction[];
  expected: unknown;
}

const clock: Clock = () => 9999;
const REDUCERS: Record<string, (state: never, action: StateAction, clock: Clock) => unknown> = {
  chat: reduceChat,
  session: reduceSession,
  root: reduceRoot,
};

const core = fixtureIndex().filter((e) => e.adapterRelevance === "core" && e.reducer !== undefined);

describe("S26 reducer parity with the vendored fixtures", () => {
  it("covers every core case of INDEX.json (123 chat, 38 session, 3 root)", () => {
    const count = (r: string) => core.filter((e) => e.reducer === r).length;
    expect([count("chat"), count("session"), count("root")]).toEqual([123, 38, 3]);
    for (const file of Object.keys(REDUCER_SKIPS)) expect(core.map((e) => e.file)).toContain(file);
  });

  for (const entry of core) {
    const skip = REDUCER_SKIPS[entry.file];
    it.skipIf(skip !== undefined)(`${entry.file}${skip === undefined ? "" : ` (skipped: ${skip})`}`, () => {
      const data = readFixture<ReducerCase>(entry.file);
      const reduce = REDUCERS[data.reducer]!;
      let state = deepFreeze(nullToAbsent(data.initial));
      for (const action of data.actions) state = deepFreeze(reduce(state as never, nullToAbsent(action) as StateAction, clock));
      expect(dropUndefined(state)).toEqual(dropUndefined(nullToAbsent(data.expected)));
    });
  }
});
