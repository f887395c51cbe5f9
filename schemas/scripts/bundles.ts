/**
 * The schema bundles of the set and the meta document. A package that contributes wire types
 * exports a `Record<name, zod schema>` and is listed here.
 */
import {
  AHP_METHODS,
  AHP_PROTOCOL_VERSION,
  AHP_SCHEMA_TYPES,
  EVENT_TABLE,
  EVENT_TYPES,
  toJsonSchemaBundle,
  type JsonSchemaObject,
} from "../../packages/core/src/index.js";
import { POLICY_SCHEMA_TYPES } from "../../packages/policy/src/schema.js";
import { POLICY_TEST_SCHEMA_TYPES } from "../../packages/policy/src/policy-test-schema.js";
import { AARTS_SCHEMA_TYPES } from "../../packages/aarts/src/schema/index.js";
import { AARTS_EVENT_VERSION, HOOK_CATALOG, HOOK_POINTS } from "../../packages/aarts/src/catalog.js";
import { ACP_BRIDGE_SCHEMA_TYPES, ACP_BRIDGE_META } from "../../packages/acp-bridge/src/schema.js";
import { applyIntegerWidths } from "./integers.js";

export const SCHEMA_BASE = "urn:ahp:schemas:2.4";

export interface Bundle {
  /** File name inside schemas/. */
  file: string;
  /** `$id` of the document. */
  id: string;
  build(): JsonSchemaObject;
}

export const bundles: Bundle[] = [
  {
    file: "ahp.schema.json",
    id: `${SCHEMA_BASE}:ahp`,
    build: () =>
      applyIntegerWidths(
        toJsonSchemaBundle(AHP_SCHEMA_TYPES, {
          id: `${SCHEMA_BASE}:ahp`,
          title: "Agent Harness Protocol 2.4 wire types",
          description:
            "Generated from the zod schemas of @ahp/core. Each named wire type is under $defs; members follow the presence rules of the AHP 2.4 specification (unknown members are allowed).",
        }),
      ),
  },
  {
    file: "policy.schema.json",
    id: `${SCHEMA_BASE}:policy`,
    build: () =>
      toJsonSchemaBundle(POLICY_SCHEMA_TYPES, {
        id: `${SCHEMA_BASE}:policy`,
        title: "AHP policy file (@ahp/policy)",
        description:
          "Generated from the zod schemas of @ahp/policy. A policy file (YAML or JSON) is a PolicyFile; unknown members are rejected except in PolicyAction, which carries the fields of typed decisions.",
      }),
  },
  {
    file: "policy-test.schema.json",
    id: `${SCHEMA_BASE}:policy-test`,
    build: () =>
      toJsonSchemaBundle(POLICY_TEST_SCHEMA_TYPES, {
        id: `${SCHEMA_BASE}:policy-test`,
        title: "AHP policy test file (ahp policy test)",
        description:
          "Generated from the zod schemas of @ahp/policy. A policy test file (YAML or JSON) is a PolicyTestFile: the policy under test and its cases, run in order with session state carried over. Unknown members are rejected except in a case's event.",
      }),
  },
  {
    file: "aarts.schema.json",
    id: `${SCHEMA_BASE}:aarts`,
    build: () =>
      toJsonSchemaBundle(AARTS_SCHEMA_TYPES, {
        id: `${SCHEMA_BASE}:aarts`,
        title: "AARTS 0.1 data model (@ahp/aarts)",
        description:
          "Generated from the zod schemas of @ahp/aarts: the AARTS hook event envelope, the five standard extensions, the 20 hook events (AartsEvent), Artifact, Verdict, directives and the version check. MUST fields are required, SHOULD/MAY fields optional; unknown members are allowed.",
      }),
  },
  {
    file: "acp-bridge.schema.json",
    id: `${SCHEMA_BASE}:acp-bridge`,
    build: () =>
      toJsonSchemaBundle(ACP_BRIDGE_SCHEMA_TYPES, {
        id: `${SCHEMA_BASE}:acp-bridge`,
        title: "ACP suspend/resume bridge wire types (@ahp/acp-bridge)",
        description:
          "Generated from the zod schemas of @ahp/acp-bridge: session/suspend and session/await_resumption (first-class and _ahpHarness/ tunnel forms), ResumeConditions, resume enrichment and outcome, lifecycle events, capability descriptors, error data and the stored suspension record. ResumeConditions and the suspend requests reject unknown keys (V3, V6); the trigger size limit (V5) and the agent's resume causes (V10) are run-time checks.",
      }),
  },
];

const ref = (file: string, name: string | undefined) => (name === undefined ? undefined : `${file}#/$defs/${name}`);

export function buildMeta(): JsonSchemaObject {
  const ahp = "ahp.schema.json";
  return {
    protocol_version: AHP_PROTOCOL_VERSION,
    bundles: Object.fromEntries(bundles.map((b) => [b.file, { $id: b.id }])),
    methods: {
      [AHP_METHODS.handshake]: { kind: "request", params: ref(ahp, "HandshakeRequest"), result: ref(ahp, "HandshakeResponse") },
      [AHP_METHODS.event]: {
        kind: "request or notification (by event type)",
        params: ref(ahp, "AhpEvent"),
        result: "see event_types[*].decision",
      },
      [AHP_METHODS.query]: { kind: "request", params: ref(ahp, "QueryRequest"), result: ref(ahp, "QueryResponse") },
      [AHP_METHODS.batch]: { kind: "request", params: ref(ahp, "BatchRequest"), result: ref(ahp, "BatchResponse") },
    },
    event_types: Object.fromEntries(
      EVENT_TYPES.map((type) => {
        const info = EVENT_TABLE[type];
        return [
          type,
          {
            blocking: info.blocking,
            batchable: info.batchable,
            specialized: info.specialized,
            form: info.blocking ? "request" : "notification",
            payload_validation: info.payloadCheck,
            ...(info.payloadTypeName === undefined ? {} : { payload: ref(ahp, info.payloadTypeName) }),
            ...(info.decisionTypeName === undefined ? {} : { decision: ref(ahp, info.decisionTypeName) }),
          },
        ];
      }),
    ),
    aarts: {
      bundle: "aarts.schema.json",
      aarts_version: AARTS_EVENT_VERSION,
      hook_points: Object.fromEntries(
        HOOK_POINTS.map((hook) => {
          const info = HOOK_CATALOG[hook];
          return [
            hook,
            {
              number: info.number,
              blocking: info.blocking,
              event: ref("aarts.schema.json", `${hook}Event`),
              ahp: {
                event_type: info.ahp.eventType,
                form: info.ahp.kind,
                ...(info.ahp.discriminator === undefined ? {} : { [info.ahp.discriminator.key]: info.ahp.discriminator.value }),
                capability: info.ahp.capability,
              },
            },
          ];
        }),
      ),
    },
    acp_bridge: ACP_BRIDGE_META,
    error_codes: {
      "-32700": "Parse error",
      "-32600": "Invalid JSON-RPC message",
      "-32601": "Method not found",
      "-32602": "Invalid params / Invalid event / form, batch-size and batchability errors",
      "-32603": "Handler error / Internal error",
      "-32000": "Unsupported protocol version",
      "-32001": "Handshake required (opt-in gating, this implementation)",
      "-32002": "Message too large or nested too deep (this implementation)",
      "-32003": "Server closing (this implementation)",
    },
  };
}
