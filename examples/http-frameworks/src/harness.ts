/**
 * The harness every recipe mounts: one AhpServer, shared by all the frameworks. It blocks a
 * recursive delete and allows the rest; a real one would use `@ahp/policy`.
 */
import { AhpServer } from "@ahp/core";

/** The API key the example's agents send (in real use: from the environment or a secret store). */
export const API_KEY = "example-key-0123456789";

export function createHarness(): AhpServer {
  return new AhpServer({
    harnessInfo: { name: "example-http-harness", version: "1.0.0" },
    handlerFailure: "decision",
    handlers: {
      onEvent: (event) => {
        const command = (event.payload as { arguments?: { command?: unknown } }).arguments?.command;
        if (typeof command === "string" && /\brm\s+-\w*r\w*\b/.test(command)) return { decision: "block", reason: "recursive delete" };
        return { decision: "allow" };
      },
    },
  });
}

/** What each recipe returns: where the agent connects, and how to stop it. */
export interface Mounted {
  /** The AHP endpoint (`http://…/ahp` or `ws://…/ahp`). */
  url: string;
  /** The framework's own base URL, where its other routes answer. */
  base: string;
  close(): Promise<void>;
}
