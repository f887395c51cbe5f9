/**
 * ACP v2 draft carriage (§6.7), as pure mappings: in the v2 draft, unions are open, so a parked
 * session is an idle `state_update` with the custom stop reason `_ahpHarness/suspended`, and a
 * resumed one is the post-resume snapshot; both carry the lifecycle event in `_meta`. The
 * bridge's faces speak v1; a v2 host uses these to report the same lifecycle.
 */
import { META, V2_SUSPENDED_STOP_REASON } from "./constants.js";

/** The v2 `session/update` payload for a lifecycle event of the bridge. */
export function toV2StateUpdate(lifecycle: Record<string, unknown>, snapshot: "idle" | "running" = "idle"): Record<string, unknown> {
  if (lifecycle.event === "suspended") {
    return { sessionUpdate: "state_update", state: "idle", stopReason: V2_SUSPENDED_STOP_REASON, _meta: { [META.lifecycle]: lifecycle } };
  }
  return { sessionUpdate: "state_update", state: snapshot, _meta: { [META.lifecycle]: lifecycle } };
}
