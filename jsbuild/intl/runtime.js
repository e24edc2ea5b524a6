// The sandbox's Intl: FormatJS's implementations of ECMA-402, each loaded on first use together
// with the locale data a call asks for. Bundled by jsbuild/intl.mjs into intl-runtime.js, which
// the prelude (prelude/45-intl.js) evaluates the first time a tool touches Intl or a toLocale*
// method. Every part comes from the host by name (`text(name)`):
//   <chunk>            code: core (plural rules, numbers, dates), relativetimeformat, ...
//   <feature>/<locale> one locale's data for one feature (JSON)
//   tz, tz/<zone>      the time-zone tables, and one zone's packed transitions (JSON)
// Filled in by the build: which locales each feature has data for.
const SHIPPED = __INTL_LOCALES__;
const DEFAULT_LOCALE = "en-US";
const DEFAULT_DATA = "en";
// Regions whose language CLDR writes in another script by default (likely subtags).
const SCRIPT_OF_REGION = { "zh-TW": "zh-Hant", "zh-HK": "zh-Hant", "zh-MO": "zh-Hant" };

// constructor -> [its data's name, the chunk that holds its code]
const FEATURES = {
  PluralRules: ["pluralrules", "core"],
  NumberFormat: ["numberformat", "core"],
  DateTimeFormat: ["datetimeformat", "core"],
  RelativeTimeFormat: ["relativetimeformat", "relativetimeformat"],
  ListFormat: ["listformat", "listformat"],
};

const ALPHANUM = /^[a-z0-9]+$/;

/** A BCP 47 language tag's parts (lower-cased), or a RangeError; UTS 35 structure only. */
function parseTag(tag) {
  const bad = () => new RangeError(`Incorrect locale information provided: ${tag}`);
  const subtags = tag.toLowerCase().split("-");
  if (subtags.some((s) => !ALPHANUM.test(s) || s.length > 8)) throw bad();
  let i = 0;
  const lang = subtags[i++];
  if (!/^(?:[a-z]{2,3}|[a-z]{5,8})$/.test(lang)) throw bad();
  const id = { lang, script: undefined, region: undefined, variants: [], extensions: [], privateUse: [] };
  if (/^[a-z]{4}$/.test(subtags[i] ?? "")) id.script = subtags[i++];
  if (/^(?:[a-z]{2}|[0-9]{3})$/.test(subtags[i] ?? "")) id.region = subtags[i++];
  while (i < subtags.length && /^(?:[a-z0-9]{5,8}|[0-9][a-z0-9]{3})$/.test(subtags[i])) {
    if (id.variants.includes(subtags[i])) throw bad();
    id.variants.push(subtags[i++]);
  }
  const singletons = new Set();
  while (i < subtags.length) {
    const singleton = subtags[i++];
    if (singleton.length !== 1) throw bad();
    if (singleton === "x") {
      id.privateUse = subtags.slice(i);
      if (id.privateUse.length === 0) throw bad();
      break;
    }
    if (singletons.has(singleton)) throw bad();
    singletons.add(singleton);
    const values = [];
    while (i < subtags.length && subtags[i].length > 1) values.push(subtags[i++]);
    if (values.length === 0) throw bad();
    id.extensions.push({ singleton, values });
  }
  return id;
}

/** The `-u-` keywords of an extension's subtags, sorted, with "true" values left out. */
function unicodeExtension(values) {
  const attributes = [];
  const keywords = [];
  let k = 0;
  while (k < values.length && values[k].length > 2) attributes.push(values[k++]);
  while (k < values.length) {
    const key = values[k++];
    const types = [];
    while (k < values.length && values[k].length > 2) types.push(values[k++]);
    if (!keywords.some(([seen]) => seen === key)) keywords.push([key, types.join("-") === "true" ? "" : types.join("-")]);
  }
  keywords.sort(([a], [b]) => (a < b ? -1 : 1));
  return [...attributes, ...keywords.map(([key, type]) => (type ? `${key}-${type}` : key))];
}

/** Intl.getCanonicalLocales without alias replacement: structure checked, case and order fixed. */
function canonicalTag(tag) {
  if (typeof tag !== "string") throw new TypeError("a locale must be a string or an Intl.Locale");
  const id = parseTag(tag);
  const parts = [id.lang];
  if (id.script) parts.push(id.script[0].toUpperCase() + id.script.slice(1));
  if (id.region) parts.push(id.region.toUpperCase());
  parts.push(...id.variants.sort());
  for (const { singleton, values } of id.extensions.sort((a, b) => (a.singleton < b.singleton ? -1 : 1))) {
    parts.push(singleton, ...(singleton === "u" ? unicodeExtension(values) : values));
  }
  if (id.privateUse.length) parts.push("x", ...id.privateUse);
  return parts.join("-");
}

/**
 * What FormatJS's locale matcher asks of `Intl.Locale` (its parts, `maximize()`), without the
 * likely-subtags data: a requested locale that no data serves then falls back to the default.
 */
class StructuralLocale {
  constructor(tag) {
    this.baseName = canonicalTag(String(tag)).split(/-(?:[0-9a-wy-z]|x)-/)[0];
    const [language, ...rest] = this.baseName.split("-");
    this.language = language;
    this.script = rest.find((s) => /^[A-Z][a-z]{3}$/.test(s));
    this.region = rest.find((s) => /^(?:[A-Z]{2}|[0-9]{3})$/.test(s));
  }
  maximize() {
    return this;
  }
  minimize() {
    return this;
  }
  toString() {
    return this.baseName;
  }
}

/** ECMA-402 CanonicalizeLocaleList. */
function canonicalizeLocaleList(locales) {
  if (locales === undefined) return [];
  const list =
    typeof locales === "string" || (typeof locales === "object" && locales !== null && isLocale(locales))
      ? [locales]
      : Object(locales);
  const seen = [];
  const length = Math.min(Number(list.length) || 0, 2 ** 32);
  for (let k = 0; k < length; k++) {
    if (!(k in list)) continue;
    const value = list[k];
    if (typeof value !== "string" && (typeof value !== "object" || value === null))
      throw new TypeError("a locale must be a string or an Intl.Locale");
    const tag = canonicalTag(typeof value === "string" ? value : String(value));
    if (!seen.includes(tag)) seen.push(tag);
  }
  return seen;
}

let isLocale = () => false;

/** The shipped data locale serving `tag` for a feature (a lookup match), or undefined. */
function shippedFor(feature, tag) {
  const have = SHIPPED[feature];
  const [lang, ...rest] = tag.split(/-(?:[0-9a-wy-z]|x)-/)[0].split("-");
  const script = rest.find((s) => /^[A-Z][a-z]{3}$/.test(s));
  const region = rest.find((s) => /^(?:[A-Z]{2}|[0-9]{3})$/.test(s));
  const candidates = [];
  if (script && region) candidates.push(`${lang}-${script}-${region}`);
  if (region) candidates.push(`${lang}-${region}`);
  if (script) candidates.push(`${lang}-${script}`);
  const scripted = SCRIPT_OF_REGION[`${lang}-${region}`];
  if (scripted) candidates.push(`${scripted}-${region}`, scripted);
  candidates.push(lang);
  return candidates.find((c) => have.includes(c));
}

/** The runtime, given the prelude's loader; returns what the prelude's hooks call. */
export function start({ text, evaluate, Intl: publicIntl }) {
  const parseJson = JSON.parse;
  const chunks = Object.create(null);
  // What the FormatJS code sees as `Intl`: the constructors (wrapped), a structural
  // getCanonicalLocales and no Locale, so their locale matcher never loads Intl.Locale.
  const internal = { Locale: StructuralLocale };
  const loadChunk = (name) => (chunks[name] ??= evaluate(text(name))(internal));
  const loaded = Object.create(null); // feature -> Set of data locales added
  const members = Object.create(null);

  const addData = (feature, impl, locale) => {
    const done = (loaded[feature] ??= new Set());
    if (done.has(locale)) return;
    done.add(locale);
    const data = parseJson(text(`${feature}/${locale}`));
    if (feature === "pluralrules") data.data.fn = evaluate(`(${data.data.fn})`);
    if (feature === "datetimeformat") addProcessedDates(impl, data, done);
    else impl.__addLocaleData(data);
  };

  // Dates come processed by the build (jsbuild/intl.mjs: processedDates); registered here as
  // FormatJS's registerLocaleData would: explicitly loaded locales win over fallbacks.
  const noRanges = Object.freeze(Object.create(null)); // formatRange uses the locale's fallback
  const addProcessedDates = (impl, { locale, own, fallbacks, data }, explicit) => {
    const { columns, rows } = data.formats;
    const gregory = rows.map((row) => {
      const format = { rangePatterns: noRanges, rangePatterns12: noRanges };
      for (let i = 0; i < columns.length; i++) if (row[i] !== null) format[columns[i]] = row[i];
      return format;
    });
    data.formats = { gregory };
    Object.defineProperty(data.formats, "iso8601", { enumerable: true, get: () => gregory });
    for (const tag of own) {
      if (tag === locale || !explicit.has(tag) || impl.localeData[tag] === undefined) impl.localeData[tag] = data;
      impl.availableLocales.add(tag);
    }
    for (const tag of fallbacks) {
      if (impl.localeData[tag] === undefined) impl.localeData[tag] = data;
      impl.availableLocales.add(tag);
    }
  };

  /**
   * Load the data the request resolves to: FormatJS only knows locales it has been given. A
   * requested locale served by another's data (de-LU by de) is registered under its own name, so
   * FormatJS matches it exactly and reports it, as ICU does.
   */
  const ensureLocales = (feature, impl, locales) => {
    for (const tag of canonicalizeLocaleList(locales)) {
      const match = shippedFor(feature, tag);
      if (!match) continue;
      addData(feature, impl, match);
      const base = tag.split(/-(?:[0-9a-wy-z]|x)-/)[0];
      // plural rules are per language in CLDR, and ICU reports them so (en-GB -> en)
      if (feature !== "pluralrules" && !impl.availableLocales.has(base)) {
        impl.availableLocales.add(base);
        impl.localeData[base] = impl.localeData[match];
      }
      return locales;
    }
    addData(feature, impl, DEFAULT_DATA);
    return DEFAULT_LOCALE; // nothing requested is served: the default locale, as ICU falls back
  };

  const supportedLocalesOf = (feature) =>
    function supportedLocalesOf(locales, options) {
      if (options !== undefined) {
        const matcher = Object(options).localeMatcher;
        if (matcher !== undefined && !["lookup", "best fit"].includes(String(matcher)))
          throw new RangeError(`invalid localeMatcher: ${String(matcher)}`);
      }
      return canonicalizeLocaleList(locales).filter((tag) => shippedFor(feature, tag) !== undefined);
    };

  const lazyZones = (impl) => {
    const tables = parseJson(text("tz"));
    const zones = {};
    for (const name of tables.names) {
      Object.defineProperty(zones, name, {
        configurable: true,
        enumerable: true,
        get() {
          const packed = parseJson(text(`tz/${name}`));
          impl.__addTZData({ abbrvs: tables.abbrvs, offsets: tables.offsets, zones: [packed] });
          const transitions = impl.tzData[name];
          impl.tzData = zones;
          Object.defineProperty(zones, name, { value: transitions, enumerable: true });
          return transitions;
        },
      });
    }
    impl.tzData = zones;
  };

  const wrap = (name) => {
    const [feature, chunk] = FEATURES[name];
    const impl = loadChunk(chunk)[name];
    impl.__defaultLocale = DEFAULT_LOCALE;
    Object.defineProperty(impl, "name", { value: name, configurable: true }); // minified away
    if (name === "DateTimeFormat") {
      lazyZones(impl);
      spacedFormat(impl.prototype);
    }
    const own = { supportedLocalesOf: supportedLocalesOf(feature) };
    Object.defineProperty(own.supportedLocalesOf, "length", { value: 1 });
    return new Proxy(impl, {
      construct(target, [locales, options], newTarget) {
        return Reflect.construct(target, [ensureLocales(feature, target, locales), options], newTarget);
      },
      apply(target, thisArg, [locales, options]) {
        return Reflect.apply(target, thisArg, [ensureLocales(feature, target, locales), options]);
      },
      get(target, key, receiver) {
        return key in own ? own[key] : Reflect.get(target, key, receiver);
      },
    });
  };

  const getCanonicalLocales = {
    getCanonicalLocales(locales) {
      return canonicalizeLocaleList(locales);
    },
  }.getCanonicalLocales;

  const build = {
    getCanonicalLocales: () => getCanonicalLocales,
    Collator: () => loadChunk("collator").Collator(internal, canonicalizeLocaleList, shippedFor),
    Locale: () => {
      const { Locale } = loadChunk("locale");
      isLocale = (value) => value instanceof Locale;
      return Locale;
    },
  };
  for (const name of Object.keys(FEATURES)) build[name] = () => wrap(name);

  const member = (name) => (members[name] ??= build[name]());
  for (const name of Object.keys(build)) {
    if (name === "Locale") continue; // the matcher's needs are met by StructuralLocale
    Object.defineProperty(internal, name, { get: () => member(name), enumerable: true });
  }

  /** The value of an Intl member, installed on the public object as a data property. */
  const publish = (name) => {
    const value = member(name);
    Object.defineProperty(publicIntl, name, { value, writable: true, configurable: true, enumerable: false });
    return value;
  };

  // toLocaleString(locales) with no options is what loops call: one formatter per locale.
  const formatters = new Map();
  const formatter = (kind, locales, options, make) => {
    const plain = options === undefined && (locales === undefined || typeof locales === "string");
    if (!plain) return make();
    const key = `${kind}\0${locales ?? ""}`;
    let made = formatters.get(key);
    if (made === undefined) formatters.set(key, (made = make()));
    return made;
  };

  return {
    member: publish,
    number(x, locales, options) {
      const make = () => new (member("NumberFormat"))(locales, options).format;
      return formatter("number", locales, options, make)(x);
    },
    date(x, locales, options, required, defaults) {
      if (Number.isNaN(x)) return "Invalid Date";
      const make = () => {
        const opts = toDateTimeOptions(options, required, defaults);
        return new (member("DateTimeFormat"))(locales, opts).format;
      };
      return formatter(required, locales, options, make)(x);
    },
    compare(a, b, locales, options) {
      const make = () => new (member("Collator"))(locales, options).compare;
      return formatter("compare", locales, options, make)(a, b);
    },
  };
}

/**
 * V8 (Node, Chrome) writes U+0020 where CLDR puts U+202F (before "AM"/"PM") in the strings
 * `format` and the toLocale* methods return, though not in formatToParts or formatRange; so
 * does the sandbox, so that tools written against Node's output keep working.
 */
function spacedFormat(prototype) {
  const { get } = Object.getOwnPropertyDescriptor(prototype, "format");
  const bound = new WeakMap();
  Object.defineProperty(prototype, "format", {
    configurable: true,
    enumerable: false,
    get() {
      let format = bound.get(this);
      if (format === undefined) {
        const inner = get.call(this);
        format = { format: (date) => inner(date).replace(/\u202f/g, " ") }.format;
        Object.defineProperty(format, "name", { value: "" });
        bound.set(this, format);
      }
      return format;
    },
  });
}

/** ECMA-402 ToDateTimeOptions: which fields toLocale{Date,Time,}String show by default. */
function toDateTimeOptions(options, required, defaults) {
  const opts = Object.create(options === undefined ? null : Object(options));
  let needDefaults = true;
  if (required === "date" || required === "any") {
    for (const p of ["weekday", "year", "month", "day"]) if (opts[p] !== undefined) needDefaults = false;
  }
  if (required === "time" || required === "any") {
    for (const p of ["dayPeriod", "hour", "minute", "second", "fractionalSecondDigits"])
      if (opts[p] !== undefined) needDefaults = false;
  }
  const dateStyle = opts.dateStyle;
  const timeStyle = opts.timeStyle;
  if (dateStyle !== undefined || timeStyle !== undefined) needDefaults = false;
  if (required === "date" && timeStyle !== undefined)
    throw new TypeError("toLocaleDateString: timeStyle cannot be used");
  if (required === "time" && dateStyle !== undefined)
    throw new TypeError("toLocaleTimeString: dateStyle cannot be used");
  if (needDefaults && (defaults === "date" || defaults === "all"))
    for (const p of ["year", "month", "day"]) opts[p] = "numeric";
  if (needDefaults && (defaults === "time" || defaults === "all"))
    for (const p of ["hour", "minute", "second"]) opts[p] = "numeric";
  return opts;
}
