// What `ahp acp-proxy -- node acp-agent.mjs` wires, as a bench peer: the bridge on this
// process's stdin/stdout, the agent as a child, an in-process harness with the default policy
// (gates and reports), suspensions in a file store under ACP_STORE. ACP_BRIDGE_MODULE, when set,
// names another build of the bridge to load (the suite's baseline case).
import { fileURLToPath } from "node:url";
import { AhpClient, AhpServer, createLinkedPair } from "@ahp/core";
import { composeHandlers, DEFAULT_POLICY, PolicyEngine } from "@ahp/policy";

const { createAcpBridge, FileSuspensionStore, serveStdio, spawnAgent } = await import(process.env.ACP_BRIDGE_MODULE || "@ahp/acp-bridge");

const server = new AhpServer({ handlers: composeHandlers(new PolicyEngine(DEFAULT_POLICY)) });
const [agentSide, harnessSide] = createLinkedPair();
await server.connect(harnessSide);
const ahp = new AhpClient();
await ahp.connect(agentSide);
const agent = spawnAgent(process.execPath, [fileURLToPath(new URL("./acp-agent.mjs", import.meta.url))], { stderr: "inherit" });
const bridge = await createAcpBridge({ agent: agent.connector, harness: ahp, store: new FileSuspensionStore(process.env.ACP_STORE) });
await serveStdio(bridge);
await bridge.close();
agent.kill();
await ahp.close();
await server.close();
