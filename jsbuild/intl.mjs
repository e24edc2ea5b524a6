// Intl for the sandbox: FormatJS's ECMA-402 implementations and CLDR data, split so that a call
// loads only what it uses (see intl/runtime.js). Outputs, next to the libraries in libs/:
//   intl-<chunk>.js     one classic script each: `(function (Intl) {...; return exports})`
//   intl-<feature>.jsonl one line per locale: ["<feature>/<locale>", <its FormatJS data>]
//   intl-tz.jsonl       ["tz", {abbrvs, offsets, names}], then ["tz/<IANA name>", "<packed>"]
// and the manifest's "intl" entry. The host serves each line's value by its name, reading only
// the name of every line (sandbox/js/intl_parts.py).
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import vm from "node:vm";

import { RESOLVE } from "./libraries.mjs";

// Locales with data: English variants, then the languages tools are most often asked for.
export const INTL_LOCALES = [
  "en", "en-GB", "en-AU", "en-CA", "en-IN", "en-NZ", "en-IE", "de", "de-AT", "de-CH", "fr", "fr-CA", "es",
  "es-MX", "it", "pt", "pt-PT", "nl", "pl", "sv", "ru", "tr", "ja", "zh", "zh-Hant", "ko", "hi",
];

// chunk -> [entry source, packages whose versions it carries]
const CHUNKS = {
  runtime: ['export { start } from "./intl/runtime.js";', []],
  collator: ['export { Collator } from "./intl/collator.js";', []],
  // plural rules and numbers are used by every formatter, and dates share most of their code
  core: [
    'export { PluralRules } from "@formatjs/intl-pluralrules";\n' +
      'export { NumberFormat } from "@formatjs/intl-numberformat";\n' +
      'export { DateTimeFormat } from "@formatjs/intl-datetimeformat";',
    ["@formatjs/intl-pluralrules", "@formatjs/intl-numberformat", "@formatjs/intl-datetimeformat"],
  ],
  relativetimeformat: [
    'export { default as RelativeTimeFormat } from "@formatjs/intl-relativetimeformat";',
    ["@formatjs/intl-relativetimeformat"],
  ],
  listformat: ['export { default as ListFormat } from "@formatjs/intl-listformat";', ["@formatjs/intl-listformat"]],
  locale: ['export { Locale } from "@formatjs/intl-locale";', ["@formatjs/intl-locale"]],
};
// The features whose data comes per locale, and the constructor each data file registers with.
const FEATURES = {
  pluralrules: "PluralRules",
  numberformat: "NumberFormat",
  datetimeformat: "DateTimeFormat",
  relativetimeformat: "RelativeTimeFormat",
  listformat: "ListFormat",
};

const sha256 = (data) => createHash("sha256").update(data).digest("hex");

/** What a FormatJS data file passes to `Intl.<name>.__add...Data(...)`, captured in a realm. */
function captured(path, name, method) {
  const seen = [];
  const target = { [method]: (...data) => seen.push(...data) };
  vm.runInContext(readFileSync(path, "utf8"), vm.createContext({ Intl: { [name]: target } }));
  if (seen.length !== 1) throw new Error(`${path}: expected one ${method} call, got ${seen.length}`);
  return seen[0];
}

const dataPath = (here, feature, locale) =>
  join(here, "node_modules", "@formatjs", `intl-${feature}`, "locale-data", `${locale}.js`);

/** The locales a feature has data for (plural rules come per language only). */
const localesOf = (here, feature) => INTL_LOCALES.filter((l) => existsSync(dataPath(here, feature, l)));

function localeData(here, feature) {
  const out = [];
  for (const locale of localesOf(here, feature)) {
    const path = dataPath(here, feature, locale);
    const entry = captured(path, FEATURES[feature], "__addLocaleData");
    if (entry.locale !== locale) throw new Error(`${path} holds ${entry.locale}`);
    // the plural rule is code: carried as its source text, evaluated by the runtime
    if (feature === "pluralrules") entry.data.fn = entry.data.fn.toString();
    out.push([`${feature}/${locale}`, entry]);
  }
  return out;
}

/**
 * One locale's DateTimeFormat data as FormatJS's `__addLocaleData` leaves it, computed here once:
 * parsing its ~760 format skeletons takes QuickJS most of a second, on every call. CLDR's
 * interval formats are left out (formatRange falls back to the locale's "{0} – {1}"): they are
 * most of the parsing and would make each locale's data five times larger.
 */
function processedDates(chunk, entry) {
  const { locale } = entry;
  const fallback = entry.data.intervalFormats.intervalFormatFallback;
  const stripped = { ...entry, data: { ...entry.data, intervalFormats: { intervalFormatFallback: fallback } } };
  const { DateTimeFormat } = vm.runInNewContext(chunk)({});
  const before = new Set(DateTimeFormat.availableLocales);
  DateTimeFormat.__addLocaleData(stripped);
  const processed = DateTimeFormat.localeData[locale];
  const tags = [...DateTimeFormat.availableLocales].filter((t) => !before.has(t));
  const own = tags.filter((t) => t === locale || DateTimeFormat.localeData[t] === processed);
  const { formats, calendarData, ...rest } = processed;
  if (Object.keys(formats).sort().join() !== "gregory,iso8601") throw new Error(`${locale}: calendars?`);
  if (calendarData && Object.keys(calendarData).length) throw new Error(`${locale}: calendar data`);
  // FormatJS keeps the first of equally good formats; a skeleton written as a pattern ("y年M月d日
  // Hms") would then win over the plain one ("yMd Hms") that ICU's pattern generator picks.
  const plain = (format) => (/^[A-Za-z]+(?:,? [A-Za-z]+)?$/.test(format.skeleton) ? 0 : 1);
  const gregory = formats.gregory
    .map(({ rangePatterns, rangePatterns12, ...format }) => format)
    .sort((a, b) => plain(a) - plain(b));
  const connectors = AT_TIME[locale.split("-")[0]];
  if (connectors) rest.dateTimeFormat = { ...rest.dateTimeFormat, ...connectors };
  // as columns and rows: a third smaller, and faster to parse, than 760 objects' keys
  const columns = [...new Set(gregory.flatMap((format) => Object.keys(format)))];
  const rows = gregory.map((format) => columns.map((c) => format[c] ?? null));
  const data = JSON.parse(JSON.stringify({ ...rest, formats: { columns, rows } }));
  return { locale, own, fallbacks: tags.filter((t) => !own.includes(t)), data };
}

// CLDR's "atTime" date-time connectors, which ICU uses for dateStyle full/long with a time style
// and FormatJS's data does not carry.
const AT_TIME = {
  en: { full: "{1} at {0}", long: "{1} at {0}" },
  de: { full: "{1} um {0}", long: "{1} um {0}" },
  fr: { full: "{1} à {0}", long: "{1} à {0}" },
};

function timeZones(here) {
  const path = join(here, "node_modules", "@formatjs", "intl-datetimeformat", "add-all-tz.js");
  const packed = captured(path, "DateTimeFormat", "__addTZData");
  const zones = packed.zones.map((zone) => [`tz/${zone.slice(0, zone.indexOf("|"))}`, zone]);
  const names = zones.map(([name]) => name.slice(3));
  return [["tz", { abbrvs: packed.abbrvs, offsets: packed.offsets, names }], ...zones];
}

/** Build the Intl chunks and data into `files` (rel path -> Buffer); return the manifest entry. */
export async function buildIntl(esbuild, { here, files, checkClean }) {
  const entry = { chunks: {}, data: {}, packages: {} };
  const shipped = Object.fromEntries(Object.keys(FEATURES).map((f) => [f, localesOf(here, f)]));
  for (const [feature, locales] of Object.entries(shipped)) {
    if (!locales.includes("en")) throw new Error(`${feature} has no data for en, the default`);
  }
  for (const [chunk, [source, packages]] of Object.entries(CHUNKS)) {
    const result = await esbuild.build({
      ...RESOLVE,
      define: { ...RESOLVE.define, __INTL_LOCALES__: JSON.stringify(shipped) },
      stdin: { contents: source, resolveDir: here, sourcefile: `intl-${chunk}-entry.mjs` },
      bundle: true,
      format: "iife",
      globalName: "chunk",
      minify: true,
      legalComments: "eof",
      write: false,
      logLevel: "warning",
    });
    // `Intl` inside is the parameter: the runtime's own registry, never a global
    const text = `(function (Intl) {\n${result.outputFiles[0].text}return chunk;\n})\n`;
    const file = `intl-${chunk}.js`;
    checkClean(`libs/${file}`, text);
    if (typeof vm.runInNewContext(text) !== "function") throw new Error(`${file} is not a function`);
    files.set(`libs/${file}`, Buffer.from(text));
    entry.chunks[chunk] = { file, sha256: sha256(text) };
    for (const name of packages) {
      const pkg = JSON.parse(readFileSync(join(here, "node_modules", name, "package.json")));
      entry.packages[name] = pkg.version;
    }
  }
  const data = Object.fromEntries(Object.keys(FEATURES).map((f) => [f, localeData(here, f)]));
  data.datetimeformat = data.datetimeformat.map(([name, part]) => [
    name,
    processedDates(files.get("libs/intl-core.js").toString(), part),
  ]);
  data.tz = timeZones(here);
  for (const [name, parts] of Object.entries(data)) {
    const text = parts.map((part) => `${JSON.stringify(part)}\n`).join("");
    const file = `intl-${name}.jsonl`;
    files.set(`libs/${file}`, Buffer.from(text));
    entry.data[name] = { file, sha256: sha256(text), parts: parts.length };
  }
  entry.locales = shipped;
  entry.packages = Object.fromEntries(Object.entries(entry.packages).sort());
  return entry;
}
