/** Conformance factories over core's in-process transports: the linked pair and NDJSON streams. */
import { PassThrough } from "node:stream";
import { NdjsonStreamTransport, createLinkedPair, stringifyMessage, type Transport } from "@ahp/core";
import { RawFrameQueue, createConformanceServer, createNdjsonRawChannel, type ConformanceFactory, type RawChannel } from "@ahp/conformance";

/** The harness side of a `createLinkedPair()`; raw frames are injected as text (`message` framing). */
export const memoryFactory: ConformanceFactory = async (config) => {
  const server = createConformanceServer(config);
  return {
    async connect(): Promise<Transport> {
      const [agent, harness] = createLinkedPair();
      await server.connect(harness);
      return agent;
    },
    async connectRaw(): Promise<RawChannel> {
      const [agent, harness] = createLinkedPair();
      await server.connect(harness);
      const frames = new RawFrameQueue();
      agent.onmessage = (message) => frames.push({ text: stringifyMessage(message) });
      agent.onclose = () => frames.close();
      await agent.start();
      return {
        framing: "message",
        send: async (text) => harness.injectText(text),
        next: (timeoutMs) => frames.next(timeoutMs),
        close: async () => {
          frames.close();
          await agent.close();
        },
      };
    },
    close: () => server.close(),
  };
};

/** A pair of NdjsonStreamTransports over two PassThrough streams: real NDJSON bytes, no process. */
export const ndjsonFactory: ConformanceFactory = async (config) => {
  const server = createConformanceServer(config);
  const serve = async () => {
    const toHarness = new PassThrough();
    const toAgent = new PassThrough();
    const harnessSide = new NdjsonStreamTransport({
      readable: toHarness,
      writable: toAgent,
      info: { transport: "ndjson" },
      onClose: () => void toAgent.end(),
    });
    await server.connect(harnessSide);
    return { toHarness, toAgent };
  };
  return {
    async connect(): Promise<Transport> {
      const { toHarness, toAgent } = await serve();
      return new NdjsonStreamTransport({ readable: toAgent, writable: toHarness, onClose: () => void toHarness.end() });
    },
    async connectRaw(): Promise<RawChannel> {
      const { toHarness, toAgent } = await serve();
      return createNdjsonRawChannel({ readable: toAgent, writable: toHarness, close: () => void toHarness.end() });
    },
    close: () => server.close(),
  };
};
