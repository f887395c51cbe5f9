export * from "./types.js";
export * from "./server.js";
export * from "./script.js";
export * from "./log.js";
export * from "./raw.js";
export * from "./wire.js";
export * from "./fixtures.js";
export { CHECKLIST, SUITE_ITEMS, type ChecklistCoverage, type ChecklistItem } from "./checklist.js";
export { describeConformance, type ConformanceCoverage } from "./suite/describe.js";
export {
  runNode,
  selfSignedCert,
  deferred,
  preAction,
  event,
  listeningHarness,
  type ListeningHarness,
  type RunResult,
  type RunNodeOptions,
  type SelfSignedCert,
} from "./testing.js";
