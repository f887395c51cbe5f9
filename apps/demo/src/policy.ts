/**
 * The demo's policy: the built-in default policy of @ahp/policy, plus one rate limit in front
 * of it (web fetches: 2 per 1.5 s per session) so that the session shows a deferral.
 */
import { DEFAULT_POLICY, type PolicyFileInput } from "@ahp/policy";

export const DEMO_RATE_LIMIT_RULE = {
  id: "demo-rate-limit-web-fetch",
  description: "Web fetches: at most 2 per 1.5 s per session (the demo's only addition to the default policy)",
  events: "pre_action",
  match: { tool: "web_fetch" },
  rate_limit: { scope: "session", rate: 2, interval_ms: 1500 },
} as const;

export const DEMO_POLICY: PolicyFileInput = {
  ...DEFAULT_POLICY,
  name: "ahp-default+demo",
  rules: [DEMO_RATE_LIMIT_RULE, ...DEFAULT_POLICY.rules],
};
