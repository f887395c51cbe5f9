/**
 * The telemetry channel (spec §11): `ahp-otlp://harness/logs{?level}`. Each distinct subscribed
 * URI is its own stream with its own severity floor; every harness decision becomes one OTLP/JSON
 * log record (`otlp/exportLogs`). Tokens, prompts, tool arguments and outputs never appear.
 */
import { TELEMETRY_LOGS_URI } from "../wire/constants.js";
import type { DecidedInfo } from "./approvals.js";
import type { ChannelStore } from "./store.js";

export const SEVERITY = { trace: 1, debug: 5, info: 9, warn: 13, error: 17, fatal: 21 } as const;
export type SeverityName = keyof typeof SEVERITY;

/** The severity floor of a telemetry URI, or undefined when the URI is not a logs channel of this host. */
export function telemetryFloor(uri: string): number | undefined {
  if (uri === TELEMETRY_LOGS_URI) return SEVERITY.trace;
  const prefix = `${TELEMETRY_LOGS_URI}?`;
  if (!uri.startsWith(prefix)) return undefined;
  const params = new URLSearchParams(uri.slice(prefix.length));
  const level = params.get("level");
  if (level === null || [...params.keys()].some((k) => k !== "level")) return undefined;
  return (SEVERITY as Record<string, number>)[level];
}

export class Telemetry {
  /** Subscribed URIs with their floors. */
  readonly #streams = new Map<string, number>();

  constructor(
    readonly store: ChannelStore,
    readonly clock: () => number,
  ) {}

  /** Called when someone subscribes to `uri` (already validated). */
  opened(uri: string): void {
    this.#streams.set(uri, telemetryFloor(uri)!);
  }

  record(info: DecidedInfo, failed = false): void {
    if (this.#streams.size === 0) return;
    const severity = failed
      ? "error"
      : info.decision === "allow" || info.decision === "modify" || info.decision === "approve"
        ? "info"
        : "warn";
    const number = SEVERITY[severity];
    let payload: unknown;
    for (const [uri, floor] of this.#streams) {
      if (this.store.subscriberCount(uri) === 0) {
        this.#streams.delete(uri);
        continue;
      }
      if (number < floor) continue;
      payload ??= this.#payload(info, severity, number);
      this.store.notify(uri, "otlp/exportLogs", { channel: uri, payload });
    }
  }

  #payload(info: DecidedInfo, severity: string, number: number): unknown {
    const attrs: Array<{ key: string; value: { stringValue: string } }> = [];
    const add = (key: string, value: string | undefined) => {
      if (value !== undefined) attrs.push({ key, value: { stringValue: value } });
    };
    add("ahp.session.id", info.session.uri.slice(info.session.uri.indexOf("/") + 1));
    add("ahp.turn.id", info.turnId);
    add("ahp.tool_call.id", info.toolCallId);
    add("harness.event_type", info.eventType);
    add("harness.decision", info.decision);
    add("harness.decided_by", info.decidedBy);
    const nanos = `${BigInt(Math.round(this.clock())) * 1_000_000n}`;
    return {
      resourceLogs: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: "ahp-harness-adapter" } }] },
          scopeLogs: [
            {
              scope: { name: "@ahp/agent-host" },
              logRecords: [
                {
                  timeUnixNano: nanos,
                  observedTimeUnixNano: nanos,
                  severityNumber: number,
                  severityText: severity.toUpperCase(),
                  body: { stringValue: `${info.eventType} -> ${info.decision} (${info.decidedBy})` },
                  attributes: attrs,
                },
              ],
            },
          ],
        },
      ],
    };
  }
}
