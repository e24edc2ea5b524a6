// The npm libraries the sandbox offers by name. Versions are pinned in package.json and
// package-lock.json; this table only says how each one's default export is shaped.
//
// default:
//   "package"   - the package's own default export (ESM `export default` or CJS module.exports)
//   "namespace" - a plain object holding every named export, for packages whose ES module has
//                 no default although `import x from "pkg"` is what most code out there writes
//   { export: "name" } - one named export serves as the default (e.g. marked's callable `marked`)
// aliases: extra names (named and on the default object) that point at an existing export,
//   for APIs that models still write from older major versions.
// subpaths: importable files inside the package (`<name>/<subpath>`), each bundled on its own
//   with the file's default export.
// forms: other specifiers that name the library or one of its subpaths, as models write them
//   (the package's ES module build, a file name with its extension): `<form>` -> `<importable>`.
//   Each must be a file the real package has; the sandbox serves it as a re-export of its target,
//   so both specifiers give the same module instance.

// dayjs's plugins, all but devHelper (console warnings for development); timezone uses Intl.
const DAYJS_PLUGINS = [
  "advancedFormat",
  "arraySupport",
  "badMutable",
  "bigIntSupport",
  "buddhistEra",
  "calendar",
  "customParseFormat",
  "dayOfYear",
  "duration",
  "isBetween",
  "isLeapYear",
  "isSameOrAfter",
  "isSameOrBefore",
  "isToday",
  "isTomorrow",
  "isYesterday",
  "isMoment",
  "isoWeek",
  "isoWeeksInYear",
  "localeData",
  "localizedFormat",
  "minMax",
  "negativeYear",
  "objectSupport",
  "pluralGetSet",
  "preParsePostFormat",
  "quarterOfYear",
  "relativeTime",
  "timezone",
  "toArray",
  "toObject",
  "updateLocale",
  "utc",
  "weekOfYear",
  "weekYear",
  "weekday",
];

export const LIBRARIES = [
  { name: "decimal.js", default: "package" },
  {
    name: "js-yaml",
    default: "namespace",
    aliases: { safeLoad: "load", safeLoadAll: "loadAll", safeDump: "dump" },
  },
  {
    name: "dayjs",
    default: "package",
    subpaths: DAYJS_PLUGINS.map((p) => `plugin/${p}`),
    forms: {
      "dayjs/esm": "dayjs",
      "dayjs/esm/index.js": "dayjs",
      "dayjs/dayjs.min.js": "dayjs",
      ...Object.fromEntries(
        DAYJS_PLUGINS.flatMap((p) => [
          [`dayjs/plugin/${p}.js`, `dayjs/plugin/${p}`],
          [`dayjs/esm/plugin/${p}`, `dayjs/plugin/${p}`],
          [`dayjs/esm/plugin/${p}/index.js`, `dayjs/plugin/${p}`],
        ]),
      ),
    },
  },
  { name: "papaparse", default: "package" },
  { name: "marked", default: { export: "marked" } },
  { name: "fast-xml-parser", default: "namespace" },
  { name: "diff", default: "namespace" },
  { name: "jsonpath-plus", default: "namespace" },
];

// How esbuild resolves packages for a bare QuickJS: no Node built-ins, browser-flavoured
// builds where a package offers one (jsonpath-plus's Node build imports `vm`, papaparse's
// `stream`).
export const RESOLVE = {
  platform: "neutral",
  mainFields: ["browser", "module", "main"],
  conditions: ["browser", "module"],
  target: "es2022",
  // Environment probes fold at build time to "bare engine": no Node, no DOM.
  define: {
    "process.env.NODE_ENV": '"production"',
    process: "undefined",
    Buffer: "undefined",
    global: "undefined",
    window: "undefined",
    document: "undefined",
  },
};

/** Every importable name: each library, then its subpaths (which share its package version). */
export function importables() {
  return LIBRARIES.flatMap((lib) => [
    { ...lib, package: lib.name },
    ...(lib.subpaths ?? []).map((sub) => ({
      name: `${lib.name}/${sub}`,
      package: lib.name,
      default: "package",
    })),
  ]);
}

/** Every other specifier a library accepts, `{form: importable name}`, sorted by form. */
export function forms() {
  const all = LIBRARIES.flatMap((lib) => Object.entries(lib.forms ?? {}));
  return Object.fromEntries(all.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The file name a library's bundle gets: its npm name with anything unusual replaced. */
export function bundleFileName(name) {
  return `${name.replace(/^@/, "").replace(/[^A-Za-z0-9_-]/g, "_")}.mjs`;
}
