import { readdirSync } from "node:fs";
import { join } from "node:path";

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
//   with the file's default export, or `{ path, default }` to shape that default as above.
// forms: other specifiers that name the library or one of its subpaths, as models write them
//   (the package's ES module build, a file name with its extension): `<form>` -> `<importable>`.
//   Each must be a file the real package has; the sandbox serves it as a re-export of its target,
//   so both specifiers give the same module instance.
// exportForms: (exports, packageDir) -> [[form, export]]: specifiers that name one export of the
//   library, as per-function files do (`lodash/get`, `date-fns/format`); served as a module whose
//   default and same-named export are that export. Each must also be a real file.
// replace: {filter (a path regex), contents}: a module of the package replaced while bundling,
//   to leave out what tools do not use (zod's error messages in 40 languages).

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

const DATE_FNS_LOCALES = [
  "en-US", "en-GB", "en-AU", "en-CA", "en-IN", "en-NZ", "en-IE", "en-ZA", "de", "de-AT", "fr",
  "fr-CA", "fr-CH", "es", "it", "pt", "pt-BR", "nl", "pl", "sv", "da", "nb", "fi", "cs", "ru",
  "uk", "tr", "ja", "zh-CN", "zh-TW", "zh-HK", "ko", "hi", "ar", "he",
];

/** Forms for the exports that the package also ships as `<package>/<name>.js` files. */
const fileForms = (pkg, { subdir = "", exportOf = (file) => file } = {}) =>
  function exportForms(exports, packageDir) {
    const dir = join(packageDir, subdir);
    const names = new Set(exports);
    return readdirSync(dir)
      .filter((f) => f.endsWith(".js") && f !== "index.js" && !f.startsWith("_"))
      .map((f) => f.slice(0, -3))
      .filter((file) => names.has(exportOf(file)))
      .flatMap((file) => {
        const base = `${pkg}/${subdir ? `${subdir}/` : ""}${file}`;
        return [[base, exportOf(file)], [`${base}.js`, exportOf(file)]];
      });
  };

export const LIBRARIES = [
  {
    name: "decimal.js",
    default: "package",
    forms: { "decimal.js/decimal.mjs": "decimal.js", "decimal.js/decimal.js": "decimal.js" },
  },
  {
    name: "js-yaml",
    default: "namespace",
    aliases: { safeLoad: "load", safeLoadAll: "loadAll", safeDump: "dump" },
    forms: { "js-yaml/dist/js-yaml.mjs": "js-yaml" },
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
  {
    name: "papaparse",
    default: "package",
    forms: { "papaparse/papaparse.js": "papaparse", "papaparse/papaparse.min.js": "papaparse" },
  },
  {
    name: "marked",
    default: { export: "marked" },
    forms: { "marked/lib/marked.esm.js": "marked" },
  },
  { name: "fast-xml-parser", default: "namespace" },
  { name: "diff", default: "namespace" },
  { name: "jsonpath-plus", default: "namespace" },
  // The libraries models reach for first that were missing (docs/js-libraries.md says how this
  // was measured).
  {
    name: "date-fns",
    default: "namespace",
    subpaths: [{ path: "locale", default: "namespace" }],
    exportForms: fileForms("date-fns"),
  },
  {
    name: "date-fns/locale",
    part: true, // its forms: date-fns/locale/de (file de.js) -> the `de` export
    exportForms: fileForms("date-fns", { subdir: "locale", exportOf: (f) => f.replace(/-/g, "") }),
    // All 96 locales are 780 KB; these cover the languages tools are usually asked for.
    replace: [
      {
        filter: /date-fns[\\/]locale\.js$/,
        contents: DATE_FNS_LOCALES.map((l) => `export * from "./locale/${l}.js";`).join("\n"),
      },
    ],
  },
  { name: "lodash", default: "package", exportForms: fileForms("lodash") },
  { name: "lodash-es", default: "package", exportForms: fileForms("lodash-es") },
  {
    name: "zod",
    default: "package",
    forms: { "zod/v4": "zod", "zod/v4/index.js": "zod", "zod/index.js": "zod" },
    replace: [{ filter: /zod[\\/]v4[\\/]locales[\\/]index\.js$/, contents: 'export { default as en } from "./en.js";' }],
  },
  { name: "uuid", default: "namespace" },
  {
    name: "nanoid",
    default: { export: "nanoid" },
    subpaths: [{ path: "non-secure", default: { export: "nanoid" } }],
  },
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
  const parts = Object.fromEntries(LIBRARIES.filter((l) => l.part).map((l) => [l.name, l]));
  return LIBRARIES.filter((lib) => !lib.part).flatMap((lib) => [
    { ...lib, package: lib.name },
    ...(lib.subpaths ?? []).map((sub) => {
      const { path, default: shape = "package" } = typeof sub === "string" ? { path: sub } : sub;
      const name = `${lib.name}/${path}`;
      return { ...parts[name], name, package: lib.name, default: shape };
    }),
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
