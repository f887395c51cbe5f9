/** ahp/query (spec §4.3; §17 items 51–53). The profile has no query handler. */
import { area, err, json, queryParams, request } from "../dsl.js";

const { cases, simple } = area("query");

const NOT_SUPPORTED = "Handler error: Capability not supported: Query not supported";

simple("no-handler", {
  title:
    "A valid ahp/query without a query handler -> -32603 Handler error: Capability not supported: Query not supported (payload may be null)",
  checklist: [52],
  spec: ["§4.3", "§7.9"],
  send: [
    json(request("q-1", "ahp/query", queryParams())),
    json(request("q-2", "ahp/query", queryParams({ query_type: "anything", payload: null }))),
  ],
  expect: [err("q-1", -32603, NOT_SUPPORTED), err("q-2", -32603, NOT_SUPPORTED)],
});

const members = ["query_type", "payload", "session_id", "agent_id"];
simple("missing-members", {
  title: "ahp/query without query_type, payload, session_id or agent_id -> -32602 Invalid params: naming it (decoded before the handler)",
  checklist: [53],
  spec: ["§4.3", "§11.3"],
  send: members.map((m) => {
    const params = queryParams();
    delete params[m];
    return json(request(`q-no-${m}`, "ahp/query", params));
  }),
  expect: members.map((m) => err(`q-no-${m}`, -32602, { prefix: "Invalid params:", contains: [m] })),
});

simple("malformed-params", {
  title: "ahp/query params null or with a numeric query_type -> -32602 Invalid params:",
  checklist: [53],
  spec: ["§4.3"],
  send: [json(request("q-null", "ahp/query", null)), json(request("q-num", "ahp/query", queryParams({ query_type: 7 })))],
  expect: [
    err("q-null", -32602, { prefix: "Invalid params:" }),
    err("q-num", -32602, { prefix: "Invalid params:", contains: ["query_type"] }),
  ],
});

export default cases;
