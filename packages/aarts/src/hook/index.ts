/**
 * `@ahp/aarts/hook`: the hook command without the zod schemas (small import graph for CLIs
 * that spawn per tool call).
 */
export { runHookCommand, MAX_HOOK_INPUT_BYTES, type HookCommandIo } from "./command.js";
export { parseConnect, openTransport, type ConnectSpec, type ConnectKind, type OpenOptions } from "./connect.js";
export { installPlan, INSTALL_HOSTS, type InstallHost, type InstallOptions, type InstallPlan } from "./install.js";
