// A static scan of a bundle for constructs a bare QuickJS sandbox cannot satisfy: module
// loading, Node globals. tests/jslibs repeats the same checks on its own.
const ALWAYS = [
  ["require() call", /(?<![\w$.])require\s*\(/],
  ["esbuild require shim", /__require\b/],
  ["dynamic import()", /(?<![\w$.])import\s*\(/],
  ["import.meta", /(?<![\w$.])import\s*\.\s*meta\b/],
  ["import statement", /(?<![\w$.])import\s*(?:["'{*]|[A-Za-z_$][\w$]*\s*(?:,|from\b))/],
  ["process global", /(?<![\w$.])process\s*\.\s*[A-Za-z]/],
  ["Buffer global", /(?<![\w$.])Buffer\s*\.\s*[A-Za-z]|new\s+Buffer\b/],
  ["__dirname / __filename", /(?<![\w$.])__(?:dirname|filename)\b/],
];
const CLASSIC_ONLY = [
  ["export statement", /(?<![\w$.])export\s*(?:\{|\*|default\b|const\b|let\b|var\b|function\b|class\b)/],
];

/** Descriptions of the forbidden constructs found in `text` (empty when clean). */
export function forbiddenConstructs(text, { module }) {
  const rules = module ? ALWAYS : [...ALWAYS, ...CLASSIC_ONLY];
  const found = [];
  for (const [what, pattern] of rules) {
    const match = pattern.exec(text);
    if (match) {
      const at = match.index;
      found.push(`${what} at offset ${at}: ${JSON.stringify(text.slice(Math.max(0, at - 40), at + 40))}`);
    }
  }
  return found;
}
