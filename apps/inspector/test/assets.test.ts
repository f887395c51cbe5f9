/** The built page: one self-contained file (no CDN, works offline), small, and found where the package says. */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

describe("inspector assets", () => {
  it("is one HTML file with everything inlined and no remote resource", async () => {
    const html = await readFile(fileURLToPath(new URL("../dist/www/index.html", import.meta.url)), "utf8");
    expect(html).toContain('<script type="module">');
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)="(https?:)?\/\//i);
    expect(html).not.toMatch(/@import|url\(\s*["']?https?:/i);
    // Small: the whole page (script and style) stays under 64 KiB before compression.
    expect(html.length).toBeLessThan(64 * 1024);
  });
});
