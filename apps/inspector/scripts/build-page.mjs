/**
 * Builds the inspector page into dist/www/index.html: the TypeScript bundled and minified by
 * esbuild, inlined with the stylesheet into one HTML file (the page then needs one request,
 * the one that carries the token; no CDN, works offline).
 */
import { readFile, mkdir, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));

const result = await build({
  entryPoints: [here("../src/page/main.ts")],
  bundle: true,
  minify: true,
  format: "esm",
  target: ["es2022", "chrome111", "firefox113", "safari16"],
  platform: "browser",
  write: false,
  legalComments: "none",
  logLevel: "warning",
});
const script = result.outputFiles[0].text.replaceAll("</script", "<\\/script");
const style = (await readFile(here("../src/page/style.css"), "utf8")).trim();
const html = (await readFile(here("../src/page/index.html"), "utf8")).replace("/*STYLE*/", () => style).replace("/*SCRIPT*/", () => script);
await mkdir(here("../dist/www"), { recursive: true });
await writeFile(here("../dist/www/index.html"), html);
process.stdout.write(`dist/www/index.html: ${html.length} bytes\n`);
