/**
 * Regular expressions from policy files: compiled once, refused when they look catastrophic
 * (a quantified group that itself contains a quantifier, such as `(a+)+` or `(\w*)*`, which
 * backtracks exponentially in JavaScript's engine), and always run on input cut to a maximum
 * length.
 */

/**
 * Returns a reason when the pattern has a nested quantifier (star height > 1), else undefined.
 * A heuristic: it may refuse a few safe patterns; rewrite them without the nesting.
 */
export function catastrophicReason(source: string): string | undefined {
  // One frame per open group: did it contain a quantifier or an alternation?
  const stack: { quantified: boolean }[] = [{ quantified: false }];
  let lastGroupQuantified = false;
  let lastWasGroup = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "\\") {
      i++;
      lastWasGroup = false;
      continue;
    }
    if (c === "[") {
      // Skip the character class.
      for (i++; i < source.length && source[i] !== "]"; i++) if (source[i] === "\\") i++;
      lastWasGroup = false;
      continue;
    }
    if (c === "(") {
      stack.push({ quantified: false });
      lastWasGroup = false;
      continue;
    }
    if (c === ")") {
      const frame = stack.length > 1 ? stack.pop()! : { quantified: false };
      lastGroupQuantified = frame.quantified;
      lastWasGroup = true;
      // A group containing a quantifier makes its parent contain one too.
      if (frame.quantified) stack[stack.length - 1]!.quantified = true;
      continue;
    }
    const unbounded =
      c === "*" ||
      c === "+" ||
      (c === "{" && /^\{\d*,\d*\}|^\{\d{2,}\}/.test(source.slice(i)) && !/^\{[01]\}|^\{0?,1\}/.test(source.slice(i)));
    if (unbounded) {
      if (lastWasGroup && lastGroupQuantified) {
        return "nested quantifier (a repeated group that itself repeats) can take exponential time";
      }
      stack[stack.length - 1]!.quantified = true;
    }
    lastWasGroup = false;
  }
  return undefined;
}

/** Compiles a policy regex; throws an Error with a readable message when invalid or unsafe. */
export function compileRegex(source: string, ignoreCase: boolean): RegExp {
  const reason = catastrophicReason(source);
  if (reason !== undefined) throw new Error(`regular expression \`${source}\` refused: ${reason}`);
  try {
    return new RegExp(source, ignoreCase ? "i" : "");
  } catch (error) {
    throw new Error(
      `invalid regular expression \`${source}\`: ${(error as Error).message.replace(/^Invalid regular expression: (?:\/.*\/[a-z]*: )?/s, "")}`,
      { cause: error },
    );
  }
}
