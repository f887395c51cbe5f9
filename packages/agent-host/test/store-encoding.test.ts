/**
 * The store writes host action envelopes from a per-channel prefix (store.ts `#encodeAction`):
 * the text subscribers receive must be exactly the JSON of the `action` notification, for host
 * envelopes and for client envelopes with an origin or a rejection.
 */
import { describe, expect, it } from "vitest";
import type { OutFrame } from "../src/host/fanout.js";
import { ChannelStore } from "../src/host/store.js";
import { encodeFrame, notification } from "../src/wire/codec.js";
import type { ActionEnvelope, ChatState, StateAction } from "../src/wire/types.js";

const URI = 'ahp-chat:/00000000-0000-5000-8000-000000000000?"quoted"\\slash';

describe("action envelope encoding", () => {
  it("sends every envelope as the JSON of its action notification", () => {
    const store = new ChannelStore(() => 9999);
    store.create(URI, { resource: URI, title: "Main agent", status: 1, modifiedAt: "x", turns: [] } satisfies ChatState);
    const frames: string[] = [];
    store.addSubscriber(URI, { send: (frame: OutFrame) => frames.push(frame.text) });
    const envelopes: ActionEnvelope[] = [];
    const act = (a: Record<string, unknown>) => a as unknown as StateAction;
    envelopes.push(
      store.commit(
        URI,
        act({ type: "chat/turnStarted", turnId: "t", startedAt: "x", message: { text: 'é \u2028 "q"', origin: { kind: "user" } } }),
      )!,
    );
    envelopes.push(
      store.commit(
        URI,
        act({ type: "chat/toolCallStart", turnId: "t", toolCallId: "a", toolName: "bash", displayName: "Bash", intention: undefined }),
      )!,
    );
    envelopes.push(store.commit(URI, act({ type: "chat/draftChanged", draft: "d" }), { clientId: "c", clientSeq: 3 })!);
    envelopes.push(store.reject(URI, act({ type: "chat/draftChanged", draft: "e" }), { clientId: "c", clientSeq: 4 }, "no")!);
    expect(frames).toEqual(envelopes.map((env) => encodeFrame(notification("action", env))));
    expect(JSON.parse(frames[1]!)).toEqual({
      jsonrpc: "2.0",
      method: "action",
      params: {
        channel: URI,
        serverSeq: 2,
        action: { type: "chat/toolCallStart", turnId: "t", toolCallId: "a", toolName: "bash", displayName: "Bash" },
      },
    });
  });
});
