/** Parses Prometheus text exposition into samples (enough for assertions). */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line.length === 0 || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (match === null) throw new Error(`unparseable exposition line: ${line}`);
    const labels: Record<string, string> = {};
    if (match[2] !== undefined && match[2].length > 0) {
      for (const pair of match[2].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
        labels[pair[1]!] = pair[2]!.replace(/\\(.)/g, "$1");
    }
    const raw = match[3]!;
    samples.push({ name: match[1]!, labels, value: raw === "+Inf" ? Infinity : Number(raw) });
  }
  return samples;
}

/** The value of the one sample matching name and labels (undefined when none). */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples match ${name} ${JSON.stringify(labels)}`);
  return found[0]?.value;
}
