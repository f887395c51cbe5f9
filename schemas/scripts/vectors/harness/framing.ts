/** stdio framing: line endings, blank lines, whitespace, broken lines, large and unusual text (spec §13.1; §17 items 8, 9, 83). */
import { ALLOW, aliveRequest, aliveResponse, area, err, event, eventRequest, json, ok, request, text } from "../dsl.js";

const { cases, simple } = area("framing");

const line = (id: string, payload: unknown = { tool_name: "shell" }) =>
  JSON.stringify(request(id, "ahp/event", event("pre_action", payload)));

simple("crlf", {
  title: "Lines ending in \\r\\n are accepted",
  checklist: [9],
  spec: ["§13.1"],
  send: [text(`${line("crlf-1")}\r`), text(`${line("crlf-2")}\r`)],
  expect: [ok("crlf-1", ALLOW), ok("crlf-2", ALLOW)],
});

simple("blank-lines", {
  title: "Blank lines (empty, spaces, tabs, a lone \\r) are skipped without an answer",
  checklist: [9],
  spec: ["§13.1"],
  send: [text(""), text("   "), text("\t \t"), text("\r"), text(""), aliveRequest()],
  expect: [aliveResponse()],
});

simple("surrounding-whitespace", {
  title: "Whitespace around a message is tolerated",
  checklist: [9],
  spec: ["§13.1"],
  send: [text(`   ${line("ws-1")}\t  `), text(`\t${line("ws-2")} \r`)],
  expect: [ok("ws-1", ALLOW), ok("ws-2", ALLOW)],
});

simple("pretty-printed-is-not-one-message", {
  title: "Lines are split on \\n only: a message spread over two lines is two broken lines, and the next line is still answered",
  checklist: [8],
  spec: ["§13.1"],
  send: [text(`{"jsonrpc":"2.0","id":"split-1",\n"method":"ahp/nope","params":{}}`), aliveRequest()],
  outcomes: [
    { name: "reference", note: "§11.3: unparseable lines are skipped silently", expect: [aliveResponse()] },
    {
      name: "json-rpc",
      note: "JSON-RPC 2.0 §5: each unparseable line is answered -32700 Parse error with id null (this implementation)",
      expect: [err(null, -32700, { prefix: "Parse error" }), err(null, -32700, { prefix: "Parse error" }), aliveResponse()],
    },
  ],
});

simple("unparseable-line", {
  title: "An unparseable line is skipped (reference) or answered -32700 with id null; the next line is answered",
  checklist: [8],
  spec: ["§11.3", "§13.1", "§14"],
  send: [text('{"jsonrpc":"2.0","id":"broken-1","method":"ahp/event","params":{'), text("this is not JSON"), aliveRequest()],
  outcomes: [
    { name: "reference", note: "§11.3, §14 item 2: the reference never emits -32700; broken lines are dropped", expect: [aliveResponse()] },
    {
      name: "json-rpc",
      note: "JSON-RPC 2.0 §5: -32700 Parse error with id null for each broken line (this implementation)",
      expect: [err(null, -32700, { prefix: "Parse error" }), err(null, -32700, { prefix: "Parse error" }), aliveResponse()],
    },
  ],
});

simple("two-messages-one-write", {
  title: "Several lines written at once are separate messages",
  checklist: [85],
  spec: ["§13.1"],
  send: [text(`${line("w-1")}\n${line("w-2")}\n${line("w-3")}`)],
  expect: [ok("w-1", ALLOW), ok("w-2", ALLOW), ok("w-3", ALLOW)],
});

simple("last-line-without-newline", {
  title: "A last line without \\n before end of input is still a message",
  checklist: [9],
  spec: ["§13.1"],
  send: [text(line("nonl-1"), "")],
  expect: [ok("nonl-1", ALLOW)],
});

simple("line-separators-inside-strings", {
  title: "U+2028 and U+2029 inside a string do not split the line (split on \\n only); the text comes back intact",
  checklist: [83],
  spec: ["§13.1"],
  send: [text(line("u2028", { tool_name: "echo_tool", text: "a\u2028b\u2029c" }))],
  expect: [
    ok("u2028", {
      decision: "allow",
      modified_payload: { tool_name: "echo_tool", text: "a\u2028b\u2029c" },
      metadata: { rule: "echo-tool" },
    }),
  ],
});

const unusual = {
  tool_name: "echo_tool",
  quotes: 'say "hi" \\ back',
  newline: "line 1\nline 2\r\nline 3",
  control: "\u0000\u0001\u001f\u007f",
  unicode: "naïve café — 漢字 — עברית",
  emoji: "🙂👍🏽",
  escaped_slash: "a/b",
};
simple("string-escapes", {
  title: "Escapes, control characters, non-ASCII and emoji survive the round trip; every answer is one line",
  checklist: [83],
  spec: ["§13.1", "§3.3"],
  send: [
    eventRequest("esc-1", "pre_action", unusual),
    text(line("esc-2", { tool_name: "echo_tool", raw: "caf\u00e9 \u{1F642}" }).replace("caf\u00e9", "caf\\u00e9")),
  ],
  expect: [
    ok("esc-1", { decision: "allow", modified_payload: unusual, metadata: { rule: "echo-tool" } }),
    ok("esc-2", {
      decision: "allow",
      modified_payload: { tool_name: "echo_tool", raw: "caf\u00e9 \u{1F642}" },
      metadata: { rule: "echo-tool" },
    }),
  ],
});

const MIB = 1024 * 1024;
simple("large-request", {
  title: "A 4 MiB request is read and answered",
  spec: ["§13.1"],
  send: [eventRequest("big-in", "pre_action", { tool_name: "shell", arguments: { content: { $repeat: ["abcdefgh", (4 * MIB) / 8] } } })],
  expect: [ok("big-in", ALLOW)],
});

simple("large-response", {
  title: "A 1 MiB payload comes back in a 1 MiB response line, intact",
  spec: ["§13.1"],
  send: [eventRequest("big-echo", "pre_action", { tool_name: "echo_tool", content: { $repeat: ["0123456789abcdef", MIB / 16] } })],
  expect: [
    ok("big-echo", {
      decision: "allow",
      modified_payload: { tool_name: "echo_tool", content: { $repeat: ["0123456789abcdef", MIB / 16] } },
      metadata: { rule: "echo-tool" },
    }),
  ],
});

simple("many-messages", {
  title: "200 requests written back to back are all answered, each once, matched by id",
  checklist: [1, 85],
  spec: ["§11.7", "§13.1"],
  send: Array.from({ length: 200 }, (_, i) =>
    eventRequest(`many-${i}`, i % 2 === 0 ? "pre_action" : "pre_prompt", { tool_name: i % 5 === 0 ? "defer_tool" : "shell" }),
  ),
  expect: Array.from({ length: 200 }, (_, i) =>
    ok(`many-${i}`, i % 5 === 0 ? { decision: "defer", retry_after_ms: 1500, reason: "try again later [rule: defer-tool]" } : ALLOW),
  ),
});

simple("deep-nesting", {
  title: "A payload nested 64 levels deep is accepted",
  spec: ["§5"],
  send: [
    json(
      request(
        "deep-1",
        "ahp/event",
        event("pre_action", { tool_name: "shell", nested: Array.from({ length: 64 }).reduce<unknown>((inner) => ({ a: inner }), 1) }),
      ),
    ),
  ],
  expect: [ok("deep-1", ALLOW)],
});

export default cases;
