/** ahp/handshake: versions, required members, the profile's answer (spec §2, §4.1; §17 items 11–19). */
import { aliveRequest, aliveResponse, area, err, eventRequest, handshakeParams, json, ok, request, ALLOW } from "../dsl.js";
import { CAPABILITIES, CONFIG, HARNESS_NAME } from "../profile.js";

/** The profile's handshake answer: version is the harness's own; session_token is not set. */
export const HANDSHAKE_RESULT = {
  protocol_version: "2.4",
  harness_info: { name: HARNESS_NAME, version: { $type: "string" }, capabilities: CAPABILITIES },
  config: CONFIG,
  session_token: { $nullish: true },
};

const { cases, simple } = area("handshake");

const hs = (id: string, overrides: Record<string, unknown> = {}) => json(request(id, "ahp/handshake", handshakeParams(overrides)));

simple("version-2.4", {
  title:
    'protocol_version "2.4" succeeds: "2.4", harness_info {name, version, capabilities}, config (the profile: the reference defaults), no session_token',
  checklist: [11, 17],
  spec: ["§2", "§4.1"],
  send: [hs("h-1")],
  expect: [ok("h-1", HANDSHAKE_RESULT)],
});

simple("versions-2.x-accepted", {
  title: 'Every major-2 version is accepted ("2.0", "2", "2.99", "2.x.y", "2.4.0"); the answer is always "2.4"',
  checklist: [12],
  spec: ["§2"],
  send: [
    hs("h-2.0", { protocol_version: "2.0" }),
    hs("h-2", { protocol_version: "2" }),
    hs("h-2.99", { protocol_version: "2.99" }),
    hs("h-2.x.y", { protocol_version: "2.x.y" }),
    hs("h-2.4.0", { protocol_version: "2.4.0" }),
  ],
  expect: ["h-2.0", "h-2", "h-2.99", "h-2.x.y", "h-2.4.0"].map((id) => ok(id, HANDSHAKE_RESULT)),
});

simple("version-3.0-rejected", {
  title: 'protocol_version "3.0" -> -32000 Unsupported protocol version: 3.0',
  checklist: [13],
  spec: ["§2", "§4.1"],
  send: [hs("h-3", { protocol_version: "3.0" })],
  expect: [err("h-3", -32000, "Unsupported protocol version: 3.0")],
});

const rejected = ["1.9", "", "02.4", " 2.4", "v2.4", "1.0", "22.0"];
simple("versions-other-majors-rejected", {
  title:
    'Versions whose text before the first "." is not "2" -> -32000 with the client\'s string ("1.9", "", "02.4", " 2.4", "v2.4", "1.0", "22.0")',
  checklist: [14],
  spec: ["§2"],
  send: rejected.map((v, i) => hs(`h-bad-${i}`, { protocol_version: v })),
  expect: rejected.map((v, i) => err(`h-bad-${i}`, -32000, `Unsupported protocol version: ${v}`)),
});

simple("missing-capabilities", {
  title: "A handshake without agent_info.capabilities -> -32602 Invalid params: naming capabilities",
  checklist: [15],
  spec: ["§4.1"],
  send: [hs("h-cap", { agent_info: { framework: "curl", version: "8" } })],
  expect: [err("h-cap", -32602, { prefix: "Invalid params:", contains: ["capabilities"] })],
});

const required = ["session_id", "agent_id", "protocol_version", "agent_info"];
simple("missing-required-members", {
  title: "A handshake without session_id, agent_id, protocol_version or agent_info -> -32602 Invalid params: naming the member",
  checklist: [16],
  spec: ["§4.1"],
  send: required.map((member) => {
    const params = handshakeParams();
    delete params[member];
    return json(request(`h-no-${member}`, "ahp/handshake", params));
  }),
  expect: required.map((member) => err(`h-no-${member}`, -32602, { prefix: "Invalid params:", contains: [member] })),
});

simple("malformed-params", {
  title: "Handshake params that are null, a string, or have a numeric protocol_version -> -32602 Invalid params:",
  checklist: [16],
  spec: ["§4.1", "§3.8"],
  send: [
    json(request("h-null", "ahp/handshake", null)),
    json(request("h-str", "ahp/handshake", "2.4")),
    hs("h-num", { protocol_version: 2.4 }),
    hs("h-caps-null", { agent_info: { framework: "f", version: "1", capabilities: null } }),
  ],
  expect: [
    err("h-null", -32602, { prefix: "Invalid params:" }),
    err("h-str", -32602, { prefix: "Invalid params:" }),
    err("h-num", -32602, { prefix: "Invalid params:", contains: ["protocol_version"] }),
    err("h-caps-null", -32602, { prefix: "Invalid params:", contains: ["capabilities"] }),
  ],
});

simple("repeated", {
  title: "A handshake may be repeated; each is answered",
  checklist: [11],
  spec: ["§11.1", "§12.2"],
  send: [hs("h-a"), hs("h-b", { session_id: "another-session" })],
  expect: [ok("h-a", HANDSHAKE_RESULT), ok("h-b", HANDSHAKE_RESULT)],
});

simple("not-required-first", {
  title: "Events, queries and batches are answered without a prior handshake (the profile does not gate)",
  checklist: [19],
  spec: ["§11.1"],
  send: [eventRequest("first", "pre_action", { tool_name: "shell" }), json(request("b-first", "ahp/batch", { events: [] }))],
  expect: [ok("first", ALLOW), ok("b-first", { decisions: [] })],
});

simple("failed-then-ok", {
  title: "A rejected handshake does not stop the harness: a later handshake and events are answered",
  checklist: [13],
  spec: ["§2"],
  send: [hs("h-fail", { protocol_version: "3.0" }), hs("h-ok"), aliveRequest()],
  expect: [err("h-fail", -32000, "Unsupported protocol version: 3.0"), ok("h-ok", HANDSHAKE_RESULT), aliveResponse()],
});

export default cases;
