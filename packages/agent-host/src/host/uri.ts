/**
 * Deterministic channel URIs (spec §7.1): UUIDv5 over a fixed namespace, so a restarted host
 * serves the same URIs for the same harness session and agent.
 */
import { createHash } from "node:crypto";
import { CHAT_SCHEME, SESSION_SCHEME } from "../wire/constants.js";

/**
 * The UUIDv5 namespace of session and chat URIs (spec §7.1), and the default of {@link uuidV5}. Fixed,
 * so that a restarted adapter serves the same URIs for the same harness session and agent and clients'
 * saved subscriptions keep working.
 */
export const URI_NAMESPACE = "b3f1c9a2-5d4e-4f0a-9c7b-2e8d1a6f4c30";

/** RFC 9562 UUID version 5 of `name` in `namespace`. */
export function uuidV5(name: string, namespace: string = URI_NAMESPACE): string {
  const ns = Buffer.from(namespace.replace(/-/g, ""), "hex");
  if (ns.length !== 16) throw new TypeError(`not a UUID: ${namespace}`);
  const hash = createHash("sha1").update(ns).update(name, "utf8").digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** `ahp-session:/<uuid>` of a harness `session_id`. */
export const sessionUri = (sessionId: string): string => `${SESSION_SCHEME}/${uuidV5(`session:${sessionId}`)}`;

/** `ahp-chat:/<uuid>` of one agent in a harness session. */
export const chatUri = (sessionId: string, agentId: string): string => `${CHAT_SCHEME}/${uuidV5(`chat:${sessionId}\u0000${agentId}`)}`;
