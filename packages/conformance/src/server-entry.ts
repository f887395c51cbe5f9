/**
 * `@ahp/conformance/server`: the scripted harness without the vitest suite, for harness
 * processes started by a transport's conformance factory (stdio children, ...).
 */
export * from "./types.js";
export * from "./server.js";
export * from "./script.js";
export * from "./log.js";
