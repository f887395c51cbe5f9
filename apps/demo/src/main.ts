/**
 * Demo: an agent and a harness talking AHP 2.4 through the in-memory transport. The harness
 * runs embedded in this process; nothing has to be started by hand.
 */
import { runDemo } from "./session.js";

const code = await runDemo({ out: process.stdout });
process.exitCode = code;
