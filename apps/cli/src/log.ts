/** The CLI's own log lines: JSON on stderr (stdout may carry the protocol under --stdio). */
export type Level = "debug" | "info" | "warn" | "error";

export function createCliLog(stream: NodeJS.WritableStream, minLevel: Level = "info") {
  const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
  const write = (level: Level, msg: string, fields: Record<string, unknown> = {}) => {
    if (order[level] < order[minLevel]) return;
    stream.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);
  };
  return {
    debug: (msg: string, fields?: Record<string, unknown>) => write("debug", msg, fields),
    info: (msg: string, fields?: Record<string, unknown>) => write("info", msg, fields),
    warn: (msg: string, fields?: Record<string, unknown>) => write("warn", msg, fields),
    error: (msg: string, fields?: Record<string, unknown>) => write("error", msg, fields),
  };
}
export type CliLog = ReturnType<typeof createCliLog>;
