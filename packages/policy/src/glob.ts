/**
 * Globs compiled to regular expressions once, at policy load time.
 *
 * Syntax: `*` any run of characters except `/`; `**` any run including `/`; `?` one character
 * except `/`; `[abc]`, `[a-z]`, `[!abc]` / `[^abc]` character classes; `{a,b}` alternatives
 * (nestable); `\x` the character x literally. The whole string must match.
 */

const SPECIAL = /[.*+?^${}()|[\]\\/]/g;
const escapeChar = (c: string) => c.replace(SPECIAL, "\\$&");

/** Regular-expression source (without anchors) for one glob. Throws on an unbalanced `{`; a lone `}` is literal. */
export function globSource(glob: string): string {
  let i = 0;
  const parse = (inBraces: boolean): string => {
    let out = "";
    while (i < glob.length) {
      const c = glob[i]!;
      if (inBraces && (c === "," || c === "}")) return out;
      i++;
      switch (c) {
        case "\\": {
          const next = glob[i];
          if (next === undefined) out += "\\\\";
          else {
            out += escapeChar(next);
            i++;
          }
          break;
        }
        case "*":
          if (glob[i] === "*") {
            while (glob[i] === "*") i++;
            out += ".*";
          } else out += "[^/]*";
          break;
        case "?":
          out += "[^/]";
          break;
        case "[": {
          const end = classEnd(glob, i);
          if (end < 0) {
            out += "\\[";
            break;
          }
          let body = glob.slice(i, end);
          i = end + 1;
          let negate = false;
          if (body.startsWith("!") || body.startsWith("^")) {
            negate = true;
            body = body.slice(1);
          }
          // Keep ranges (a-z); escape what is special inside a class.
          const cls = body.replace(/[\\\]^[]/g, "\\$&");
          out += negate ? `[^/${cls}]` : `[${cls}]`;
          break;
        }
        case "{": {
          const alternatives: string[] = [];
          for (;;) {
            alternatives.push(parse(true));
            const stop = glob[i];
            if (stop === undefined) throw new SyntaxError(`unbalanced \`{\` in glob \`${glob}\``);
            i++;
            if (stop === "}") break;
          }
          out += `(?:${alternatives.join("|")})`;
          break;
        }
        default:
          out += escapeChar(c);
      }
    }
    return out;
  };
  return parse(false);
}

function classEnd(glob: string, from: number): number {
  let i = from;
  if (glob[i] === "!" || glob[i] === "^") i++;
  if (glob[i] === "]") i++; // a leading ] is literal
  for (; i < glob.length; i++) {
    if (glob[i] === "\\") i++;
    else if (glob[i] === "]") return i;
  }
  return -1;
}

/** One anchored regular expression matching any of the globs. */
export function compileGlobs(globs: readonly string[], options: { ignoreCase?: boolean } = {}): RegExp {
  const body = globs.map(globSource).join("|");
  return new RegExp(`^(?:${body})$`, options.ignoreCase ? "is" : "s");
}

/** True when the string contains glob syntax (otherwise a plain comparison is enough). */
export const hasGlobSyntax = (s: string): boolean => /[*?[{\\]/.test(s);
