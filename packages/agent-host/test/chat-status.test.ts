/**
 * The chat status of long turns: the reducer keeps a per-turn count of the parts that wait for a
 * human instead of scanning every part on every action. Whatever the order of actions, the status
 * it derives must equal the status computed from scratch over the same content.
 */
import { describe, expect, it } from "vitest";
import { chatStatus, reduceChat, type Clock } from "../src/reducers/index.js";
import { needsInput, SessionStatus } from "../src/wire/constants.js";
import type { ChatState, StateAction } from "../src/wire/types.js";

const clock: Clock = () => 1_000;
const TURN = "turn-1";

/** Small deterministic generator (mulberry32), so a failure repeats. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function emptyChat(): ChatState {
  return { uri: "ahp-chat://s/main", title: "main", status: SessionStatus.Idle, turns: [] } as unknown as ChatState;
}

/** The status from scratch: a structural copy carries no remembered counts. */
const fresh = (state: ChatState) => chatStatus(structuredClone(state));

// CPU-bound (thousands of reductions checked from scratch): a generous limit, so that a busy machine only makes it slower.
describe("chat status of long turns", { timeout: 180_000 }, () => {
  it("equals the status computed from scratch after every action of a turn of 4,000 random actions", () => {
    const next = random(20261126);
    let state = reduceChat(emptyChat(), { type: "chat/turnStarted", turnId: TURN, startedAt: 1, message: "go" }, clock);
    const calls: string[] = [];
    const requests: string[] = [];
    let waiting = 0;
    const pick = <T>(list: T[]) => list[Math.floor(next() * list.length)];
    for (let step = 0; step < 4_000; step++) {
      const r = next();
      let action: Record<string, unknown>;
      // Mostly one of the latest calls (so calls move through their states), sometimes any.
      const id = next() < 0.8 && calls.length > 0 ? calls[calls.length - 1 - Math.floor(next() * Math.min(3, calls.length))] : pick(calls);
      if (r < 0.1 || id === undefined) {
        const toolCallId = `tc-${calls.length}`;
        calls.push(toolCallId);
        action = { type: "chat/toolCallStart", turnId: TURN, toolCallId, toolName: "bash" };
      } else if (r < 0.4) action = { type: "chat/toolCallReady", turnId: TURN, toolCallId: id, invocationMessage: "run", toolInput: "ls" };
      else if (r < 0.5)
        action = { type: "chat/toolCallReady", turnId: TURN, toolCallId: id, invocationMessage: "run", confirmed: "not-needed" };
      else if (r < 0.6)
        action = { type: "chat/toolCallConfirmed", turnId: TURN, toolCallId: id, approved: next() < 0.7, confirmed: "user-action" };
      else if (r < 0.7)
        action = {
          type: "chat/toolCallComplete",
          turnId: TURN,
          toolCallId: id,
          requiresResultConfirmation: next() < 0.3,
          result: { success: true, pastTenseMessage: "ran" },
        };
      else if (r < 0.75) action = { type: "chat/toolCallResultConfirmed", turnId: TURN, toolCallId: id, approved: next() < 0.5 };
      else if (r < 0.77) {
        const requestId = `rq-${step}`;
        requests.push(requestId);
        action = { type: "chat/inputRequested", request: { id: requestId, message: "Which branch?" } };
      } else if (r < 0.85 && requests.length > 0)
        action = {
          type: "chat/inputCompleted",
          requestId: requests.splice(Math.floor(next() * requests.length), 1)[0],
          response: "accept",
        };
      else if (r < 0.9) action = { type: "chat/responsePart", turnId: TURN, part: { kind: "markdown", id: `md-${step}`, content: "x" } };
      else if (r < 0.95) action = { type: "chat/usage", turnId: TURN, usage: { inputTokens: step, outputTokens: 1 } };
      else action = { type: "chat/delta", turnId: TURN, partId: `md-${step - 1}`, content: "y" };
      state = reduceChat(state, action as unknown as StateAction, clock);
      if (step % 150 === 149) {
        // Now and then everything that waits is answered, so the turn leaves InputNeeded again.
        const answers: Record<string, unknown>[] = [];
        for (const toolCallId of calls) {
          answers.push({ type: "chat/toolCallConfirmed", turnId: TURN, toolCallId, approved: false, reason: "denied" });
          answers.push({ type: "chat/toolCallResultConfirmed", turnId: TURN, toolCallId, approved: true });
        }
        for (const requestId of requests.splice(0)) answers.push({ type: "chat/inputCompleted", requestId, response: "accept" });
        for (const answer of answers) state = reduceChat(state, answer as unknown as StateAction, clock);
      }
      const derived = chatStatus(state);
      expect(derived, `step ${step}: ${String(action.type)}`).toBe(fresh(state));
      if (needsInput(derived)) waiting++;
    }
    // The sequence went through both states many times, so both branches were compared.
    expect(waiting).toBeGreaterThan(100);
    expect(4_000 - waiting).toBeGreaterThan(100);
    expect(state.activeTurn!.responseParts.length).toBeGreaterThan(500);
  });

  it("says InputNeeded while one call deep in a long turn waits for confirmation, and InProgress after", () => {
    let state = reduceChat(emptyChat(), { type: "chat/turnStarted", turnId: TURN, startedAt: 1, message: "go" }, clock);
    const act = (a: Record<string, unknown>) => (state = reduceChat(state, a as unknown as StateAction, clock));
    for (let k = 0; k < 3_000; k++) {
      act({ type: "chat/toolCallStart", turnId: TURN, toolCallId: `tc-${k}`, toolName: "bash" });
      act({ type: "chat/toolCallReady", turnId: TURN, toolCallId: `tc-${k}`, invocationMessage: "run", confirmed: "not-needed" });
    }
    expect(needsInput(state.status)).toBe(false);
    act({ type: "chat/toolCallStart", turnId: TURN, toolCallId: "deep", toolName: "rm" });
    act({ type: "chat/toolCallReady", turnId: TURN, toolCallId: "deep", invocationMessage: "rm -rf build", toolInput: "rm -rf build" });
    for (let k = 3_000; k < 3_500; k++) act({ type: "chat/toolCallStart", turnId: TURN, toolCallId: `tc-${k}`, toolName: "bash" });
    act({ type: "chat/toolCallComplete", turnId: TURN, toolCallId: "tc-3", result: { success: true } });
    expect(needsInput(state.status)).toBe(true);
    act({ type: "chat/toolCallConfirmed", turnId: TURN, toolCallId: "deep", approved: true, confirmed: "user-action" });
    expect(needsInput(state.status)).toBe(false);
    expect(state.status).toBe(fresh(state));
  });
  it("keeps the status right when chats take turns and when an older state is reduced again", () => {
    const next = random(20261127);
    const start = { type: "chat/turnStarted", turnId: TURN, startedAt: 1, message: "go" } as unknown as StateAction;
    // Three chats reduced in random order, plus older states of them kept and reduced again (a branch).
    const chats = [0, 1, 2].map(() => reduceChat(emptyChat(), start, clock));
    const kept: ChatState[] = [];
    const calls = [0, 0, 0];
    let waiting = 0;
    for (let step = 0; step < 3_000; step++) {
      const which = Math.floor(next() * 3);
      const branch = kept.length > 0 && next() < 0.1;
      const from = branch ? kept[Math.floor(next() * kept.length)]! : chats[which]!;
      const r = next();
      const last = `tc-${Math.max(0, calls[which]! - 1)}`;
      let action: Record<string, unknown>;
      if (r < 0.3) action = { type: "chat/toolCallStart", turnId: TURN, toolCallId: `tc-${calls[which]!++}`, toolName: "bash" };
      else if (r < 0.55) action = { type: "chat/toolCallReady", turnId: TURN, toolCallId: last, invocationMessage: "run", toolInput: "ls" };
      else if (r < 0.7)
        action = { type: "chat/toolCallReady", turnId: TURN, toolCallId: last, invocationMessage: "run", confirmed: "not-needed" };
      else if (r < 0.85)
        action = { type: "chat/toolCallConfirmed", turnId: TURN, toolCallId: last, approved: true, confirmed: "user-action" };
      else action = { type: "chat/toolCallComplete", turnId: TURN, toolCallId: last, result: { success: true, pastTenseMessage: "ran" } };
      const result = reduceChat(from, action as unknown as StateAction, clock);
      if (!branch) chats[which] = result;
      if (step % 97 === 0) kept.push(result);
      expect(chatStatus(result), `step ${step}: ${String(action.type)}${branch ? " (branch)" : ""}`).toBe(fresh(result));
      for (const chat of chats) expect(chatStatus(chat)).toBe(fresh(chat));
      if (needsInput(result.status)) waiting++;
    }
    // Both states occurred, so both branches were compared.
    expect(waiting).toBeGreaterThan(30);
    expect(3_000 - waiting).toBeGreaterThan(30);
  });
});
