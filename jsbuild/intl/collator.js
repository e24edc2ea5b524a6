// A basic Intl.Collator (FormatJS has none): the CLDR root order for the characters tools sort
// (whitespace < punctuation < symbols < digits < letters, accents second, lower case before
// upper case third), a few language tailorings, and the numeric, sensitivity, caseFirst and
// ignorePunctuation options. Not the full Unicode Collation Algorithm: other scripts sort by
// code point within their block, and contractions (Spanish "ch", Czech "ch") are not applied.

// The root order of the ASCII characters that are neither letters nor digits.
const ASCII_ORDER = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";
// The order of common combining marks at the second level (the accents).
const MARK_ORDER = [
  0x301, 0x300, 0x306, 0x302, 0x30c, 0x30a, 0x308, 0x30b, 0x303, 0x307, 0x338, 0x327, 0x328,
  0x304, 0x335, 0x309, 0x30f, 0x311, 0x31b, 0x323, 0x324, 0x325, 0x326, 0x32d, 0x330, 0x331,
];
const STROKE = 0x338; // ø, ł, đ sort as their base letter with a stroke, after the diaeresis
const BAR = 0x335;
// Letters with no decomposition: [primary letters, second-level mark, third-level weight].
const SPECIAL = {
  ø: ["o", STROKE], ł: ["l", STROKE], đ: ["d", STROKE], ð: ["d", BAR], ħ: ["h", STROKE],
  æ: ["ae", 0, 2], œ: ["oe", 0, 2], ß: ["ss", 0, 2], ĳ: ["ij", 0, 2],
};
// Letters that sort after another in the root order (a primary weight of their own).
const AFTER = { ı: "i", ŋ: "n", þ: "z" };
// Language tailorings: letter -> [letter it follows, rank after it, second-level variant].
const Z_END = (letters) => Object.fromEntries(letters.map(([c, rank, variant]) => [c, ["z", rank, variant]]));
const TAILORINGS = {
  sv: Z_END([["å", 1], ["ä", 2], ["æ", 2, 1], ["ö", 3], ["ø", 3, 1]]),
  fi: Z_END([["å", 1], ["ä", 2], ["æ", 2, 1], ["ö", 3], ["ø", 3, 1]]),
  da: Z_END([["æ", 1], ["ä", 1, 1], ["ø", 2], ["ö", 2, 1], ["å", 3]]),
  nb: Z_END([["æ", 1], ["ä", 1, 1], ["ø", 2], ["ö", 2, 1], ["å", 3]]),
  no: Z_END([["æ", 1], ["ä", 1, 1], ["ø", 2], ["ö", 2, 1], ["å", 3]]),
  es: { ñ: ["n", 1] },
  tr: { ç: ["c", 1], ğ: ["g", 1], ı: ["h", 1], ö: ["o", 1], ş: ["s", 1], ü: ["u", 1] },
  pl: {
    ą: ["a", 1], ć: ["c", 1], ę: ["e", 1], ł: ["l", 1], ń: ["n", 1], ó: ["o", 1], ś: ["s", 1],
    ź: ["z", 1], ż: ["z", 2],
  },
};
// Locales whose collation ICU resolves with their region (they have tailorings of their own).
const REGIONAL = new Set(["fr-CA", "zh-TW", "zh-HK", "zh-MO", "zh-SG"]);
// The languages whose CLDR order this collator gives: those CLDR sorts by the root order
// (for the letters of their alphabet) and those with a tailoring above. supportedLocalesOf
// answers with these only; any other locale sorts by the root order, which is not its own
// (fr-CA sorts accents backwards in CLDR, which this collator does not).
const ROOT_ORDERED = new Set(["en", "de", "fr", "it", "pt", "nl", "id", "ms", "ca"]);
const ordered = (tag) => {
  const base = tag.split("-u-")[0];
  const [language] = base.split("-");
  if (base.split("-").slice(0, 2).join("-") === "fr-CA") return false;
  return ROOT_ORDERED.has(language) || Object.hasOwn(TAILORINGS, language);
};

const IGNORABLE = /[\p{Cc}\p{Cf}]/u; // controls and format characters (other than whitespace)
const SPACE = /\s/u;
const PUNCTUATION = /\p{P}/u;
const SYMBOL = /\p{S}/u;
const MARK = /\p{M}/u;
const DIGIT = /\p{Nd}/u;
const LETTER = /\p{L}/u;

const markWeight = (code) => {
  const rank = MARK_ORDER.indexOf(code);
  return rank < 0 ? 100 + code : 1 + rank;
};

// Other punctuation sorts after the ASCII punctuation, other symbols before "$" and other
// currency signs after it (the root order's groups), each group by code point.
const CURRENCY = /\p{Sc}/u;
const weightOfMark = (c, code) => {
  const ascii = ASCII_ORDER.indexOf(c);
  if (ascii >= 0) return 1e4 + ascii;
  const before = PUNCTUATION.test(c) ? "`" : CURRENCY.test(c) ? null : "$";
  const at = before === null ? ASCII_ORDER.length : ASCII_ORDER.indexOf(before);
  return 1e4 + at - 0.5 + code / 1e7;
};

const LETTER_BASE = 1e6;
const weightOfLetter = (c) => {
  const code = c.codePointAt(0);
  if (code >= 0x61 && code <= 0x7a) return LETTER_BASE + (code - 0x61) * 100;
  if (AFTER[c]) return weightOfLetter(AFTER[c]) + 50;
  // Katakana sorts with the hiragana of the same sound.
  if (code >= 0x30a1 && code <= 0x30f6) return LETTER_BASE + 1e5 + code - 0x60;
  return LETTER_BASE + 1e5 + code;
};

/** A collator over resolved options: compare(a, b) by sort keys, cached per string. */
function makeCompare({ numeric, sensitivity, caseFirst, ignorePunctuation, tailoring }) {
  const tertiaryOf = (isUpper, special) => {
    const upperFirst = caseFirst === "upper";
    const cased = upperFirst ? (isUpper ? 0 : 1) : isUpper ? 1 : 0;
    return special ? 2 + cased : cased;
  };
  const keyOf = (text) => {
    const primary = [];
    const secondary = [];
    const tertiary = [];
    const push = (p, s, t) => {
      primary.push(p);
      secondary.push(s);
      tertiary.push(t);
    };
    const chars = Array.from(text.normalize("NFC"));
    for (let i = 0; i < chars.length; i++) {
      const c = chars[i];
      const lower = c.toLowerCase();
      const isUpper = lower !== c;
      const tailored = tailoring[lower];
      if (tailored) {
        const [after, rank, variant] = tailored;
        push(weightOfLetter(after) + rank, 0, tertiaryOf(isUpper, false));
        if (variant) push(0, variant, 0);
        continue;
      }
      const special = SPECIAL[lower];
      if (special) {
        const [letters, mark, third] = special;
        for (const l of letters) push(weightOfLetter(l), 0, tertiaryOf(isUpper, third === 2));
        if (mark) push(0, markWeight(mark), 0);
        continue;
      }
      if (DIGIT.test(c)) {
        if (numeric) {
          let digits = "";
          while (i < chars.length && DIGIT.test(chars[i])) digits += digitValue(chars[i++]);
          i--;
          digits = digits.replace(/^0+(?=\d)/, "");
          push(5e5, 0, 0);
          push(5e5 + digits.length, 0, 0);
          for (const d of digits) push(5e5 + Number(d), 0, 0);
        } else push(5e5 + digitValue(c), 0, 0);
        continue;
      }
      for (const part of lower.normalize("NFD")) {
        const code = part.codePointAt(0);
        if (MARK.test(part)) {
          push(0, markWeight(code), 0); // an accent weighs only at the second level
        } else if (SPACE.test(part)) {
          if (!ignorePunctuation) push(1e3 + (code === 0x20 ? 0 : code === 0xa0 ? 1 : code), 0, 0);
        } else if (IGNORABLE.test(part)) {
          // no weight at any level
        } else if (PUNCTUATION.test(part) || SYMBOL.test(part)) {
          if (ignorePunctuation && PUNCTUATION.test(part)) continue;
          push(weightOfMark(part, code), 0, 0);
        } else if (LETTER.test(part) || code > 0x7f) {
          push(weightOfLetter(part), 0, tertiaryOf(isUpper, false));
        } else push(4e5 + code, 0, 0);
      }
    }
    // The first level ignores the elements that carry only an accent; case alone (sensitivity
    // "case") compares the case of the letters, not the accents' placeholders.
    const cased = tertiary.filter((_, i) => primary[i] !== 0);
    return [primary.filter((w) => w !== 0), secondary, tertiary, cased];
  };
  const levels = { base: [0], accent: [0, 1], case: [0, 3], variant: [0, 1, 2] }[sensitivity];
  const cache = new Map();
  const key = (text) => {
    let k = cache.get(text);
    if (k === undefined) {
      k = keyOf(text);
      if (cache.size < 10000) cache.set(text, k);
    }
    return k;
  };
  return (a, b) => {
    const x = key(String(a));
    const y = key(String(b));
    for (const level of levels) {
      const p = x[level];
      const q = y[level];
      const n = Math.min(p.length, q.length);
      for (let i = 0; i < n; i++) if (p[i] !== q[i]) return p[i] < q[i] ? -1 : 1;
      if (p.length !== q.length) return p.length < q.length ? -1 : 1;
    }
    return 0;
  };
}

const digitValue = (c) => {
  const code = c.codePointAt(0);
  // every Unicode decimal digit block is ten consecutive code points starting at a zero
  for (let zero = code; zero > code - 10; zero--) {
    if (!DIGIT.test(String.fromCodePoint(zero - 1))) return code - zero;
  }
  return 0;
};

const option = (options, name, allowed, fallback) => {
  const value = options[name];
  if (value === undefined) return fallback;
  const text = typeof value === "boolean" ? value : String(value);
  if (allowed && !allowed.includes(text))
    throw new RangeError(`Value ${String(value)} out of range for Intl.Collator options property ${name}`);
  return text;
};

/** The Intl.Collator class, given the runtime's locale-list canonicalisation. */
export function Collator(internal, canonicalizeLocaleList) {
  const slots = new WeakMap();
  const resolveLocale = (locales) => {
    for (const tag of canonicalizeLocaleList(locales)) {
      const [base, ext] = tag.split("-u-");
      const [language] = base.split("-");
      if (!/^[a-z]{2,3}$/.test(language)) continue;
      const keep = ext ? ext.match(/(?:^|-)(co-[a-z0-9]+|kn(?:-[a-z]+)?|kf-[a-z]+)/g) : null;
      const region = REGIONAL.has(base.split("-").slice(0, 2).join("-")) ? base : language;
      return { locale: keep ? `${region}-u-${keep.map((k) => k.replace(/^-/, "")).join("-")}` : region, ext };
    }
    return { locale: "en-US", ext: undefined };
  };
  class IntlCollator {
    constructor(locales, options) {
      const opts = options === undefined ? Object.create(null) : Object(options);
      const usage = option(opts, "usage", ["sort", "search"], "sort");
      option(opts, "localeMatcher", ["lookup", "best fit"], "best fit");
      const { locale, ext } = resolveLocale(locales);
      const keyword = (k) => (ext ? new RegExp(`(?:^|-)${k}(?:-([a-z]+))?(?:-|$)`).exec(ext) : null);
      const kn = keyword("kn");
      const kf = keyword("kf");
      const numericOption = opts.numeric === undefined ? undefined : Boolean(opts.numeric);
      const numeric = numericOption ?? (kn ? kn[1] !== "false" : false);
      const caseFirst = option(opts, "caseFirst", ["upper", "lower", "false"], kf ? kf[1] : "false");
      const sensitivity = option(opts, "sensitivity", ["base", "accent", "case", "variant"], "variant");
      const ignorePunctuation = opts.ignorePunctuation === undefined ? false : Boolean(opts.ignorePunctuation);
      const language = locale.split("-")[0];
      const resolved = { locale, usage, sensitivity, ignorePunctuation, collation: "default", numeric, caseFirst };
      const compare = makeCompare({ numeric, sensitivity, caseFirst, ignorePunctuation, tailoring: TAILORINGS[language] ?? {} });
      slots.set(this, { resolved, compare: (a, b) => compare(a, b) });
    }
    get compare() {
      const slot = slots.get(this);
      if (!slot) throw new TypeError("Intl.Collator.prototype.compare called on an incompatible receiver");
      return slot.compare;
    }
    resolvedOptions() {
      const slot = slots.get(this);
      if (!slot) throw new TypeError("Intl.Collator.prototype.resolvedOptions called on an incompatible receiver");
      return { ...slot.resolved };
    }
    static supportedLocalesOf(locales, options) {
      if (options !== undefined) option(Object(options), "localeMatcher", ["lookup", "best fit"], "best fit");
      return canonicalizeLocaleList(locales).filter(ordered);
    }
  }
  Object.defineProperty(IntlCollator, "name", { value: "Collator" });
  Object.defineProperty(IntlCollator.prototype, Symbol.toStringTag, { value: "Intl.Collator", configurable: true });
  // Callable without `new`, like the other Intl constructors.
  return new Proxy(IntlCollator, {
    apply: (target, thisArg, args) => Reflect.construct(target, args),
  });
}
