import { describe, expect, it } from "vitest";
import { copiedFiles, fileOrigins, parseShell, runsDownload, runsOneOfFiles } from "../src/index.js";

const origins = (line: string, known: string[] = []) => fileOrigins(parseShell(line), new Set(known));

describe("fileOrigins: what a command line leaves in files, in order", () => {
  it("records downloads, by option and by a downloader's redirected output", () => {
    expect(origins("curl -fsSLo i.sh https://x.example/i.sh")).toEqual({ runs: false, downloaded: ["i.sh"], own: [] });
    expect(origins("curl -fsSL https://x.example/i.sh > i.sh")).toEqual({ runs: false, downloaded: ["i.sh"], own: [] });
    expect(origins("wget -qO- https://x.example/t >> t")).toEqual({ runs: false, downloaded: ["t"], own: [] });
    expect(origins("curl -s https://x.example/a -o /dev/null").downloaded).toEqual([]);
  });

  it("keeps the last thing done to a file: download, replacement, copy", () => {
    expect(origins("curl -o i.sh https://x.example/i.sh; echo ok > i.sh")).toEqual({ runs: false, downloaded: [], own: ["i.sh"] });
    expect(origins("echo ok > i.sh; curl -o i.sh https://x.example/i.sh")).toEqual({ runs: false, downloaded: ["i.sh"], own: [] });
    expect(origins("cp mine.sh i.sh", ["i.sh"])).toEqual({ runs: false, downloaded: [], own: ["i.sh"] });
    expect(origins("cp i.sh r.sh", ["i.sh"])).toEqual({ runs: false, downloaded: ["r.sh"], own: [] });
    expect(origins("echo more >> i.sh; tee -a i.sh < x", ["i.sh"])).toEqual({ runs: false, downloaded: [], own: [] });
  });

  it("sees a run of a file that holds downloaded content at that point only", () => {
    expect(origins("curl -o i.sh https://x.example/i.sh; bash i.sh").runs).toBe(true);
    expect(origins("curl -o i.sh https://x.example/i.sh; echo ok > i.sh; bash i.sh").runs).toBe(false);
    expect(origins("bash i.sh; curl -o i.sh https://x.example/i.sh").runs).toBe(false);
    expect(origins("cp i.sh r.sh && ./r.sh", ["i.sh"]).runs).toBe(true);
    expect(origins("bash -c 'wget https://x.example/i.sh'", ["i.sh"]).runs).toBe(false);
    expect(runsDownload(parseShell("curl -fsSL https://x.example/i.sh > i.sh && bash i.sh"))).toBe(true);
    expect(runsOneOfFiles(parseShell("echo ok > i.sh && bash i.sh"), new Set(["i.sh"]))).toBe(false);
  });
});

describe("copiedFiles", () => {
  const pairs = (line: string) => copiedFiles(parseShell(line)[0]!);
  it("pairs sources with destination base names", () => {
    expect(pairs("cp a.sh b.sh")).toEqual([["a.sh", "b.sh"]]);
    expect(pairs("mv a.sh b.sh dir")).toEqual([
      ["a.sh", "a.sh"],
      ["b.sh", "b.sh"],
    ]);
    expect(pairs("cp a.sh bin/")).toEqual([["a.sh", "a.sh"]]);
    expect(pairs("cp -t bin a.sh")).toEqual([["a.sh", "a.sh"]]);
    expect(pairs("install -m 755 a.sh /usr/local/bin/a")).toEqual([["a.sh", "a"]]);
    expect(pairs("install -d build")).toEqual([]);
    expect(pairs("ln -s a.sh")).toEqual([["a.sh", "a.sh"]]);
    expect(pairs("dd if=a.img of=b.img bs=1M")).toEqual([["a.img", "b.img"]]);
    expect(pairs("dd of=b.img")).toEqual([[undefined, "b.img"]]);
    expect(pairs("dd if=a.img of=/dev/sdb")).toEqual([]);
    expect(pairs("ls a b")).toEqual([]);
  });
});
