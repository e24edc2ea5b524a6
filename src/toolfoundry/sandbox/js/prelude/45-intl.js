// Intl and the locale-sensitive built-ins, loaded from the host's bundles on first use.
  // ---- Intl (QuickJS-NG has none): FormatJS + CLDR data, loaded lazily ----
  // Only this veneer is in the memory image: the first touch of an Intl member or of a
  // toLocale* method evaluates the runtime (intl-runtime.js), which loads each constructor's
  // code and each locale's data as they are asked for (jsbuild/intl/runtime.js).
  const _eval = G.eval;
  const intlText = (name) => {
    const text = host("intl", name);
    if (text === "") throw new _Error(`Intl: the sandbox has no ${name} bundle (run \`make jslibs\`)`);
    return text;
  };
  const IntlObject = {};
  let intlRuntime = null;
  const intl = () =>
    (intlRuntime ??= _eval(intlText("runtime"))(IntlObject).start({
      text: intlText,
      evaluate: _eval,
      Intl: IntlObject,
    }));
  const INTL_MEMBERS = ["Collator", "DateTimeFormat", "ListFormat", "Locale", "NumberFormat", "PluralRules",
    "RelativeTimeFormat", "getCanonicalLocales"];
  for (const name of INTL_MEMBERS) {
    defineProperty(IntlObject, name, {
      get: () => intl().member(name),
      set(value) {
        defineProperty(IntlObject, name, { value, writable: true, configurable: true, enumerable: false });
      },
      configurable: true,
      enumerable: false,
    });
  }
  defineProperty(IntlObject, Symbol.toStringTag, { value: "Intl", configurable: true });
  define("Intl", IntlObject);

  const numberValue = Number.prototype.valueOf;
  const bigintValue = BigInt.prototype.valueOf;
  const dateValue = Date.prototype.getTime;
  const localeMethod = (proto, name, length, fn) => {
    defineProperty(fn, "name", { value: name, configurable: true });
    defineProperty(fn, "length", { value: length, configurable: true });
    defineProperty(proto, name, { value: fn, writable: true, configurable: true, enumerable: false });
  };
  const dateMethod = (name, required, defaults) =>
    localeMethod(Date.prototype, name, 0, function (locales, options) {
      return intl().date(dateValue.call(this), locales, options, required, defaults);
    });
  localeMethod(Number.prototype, "toLocaleString", 0, function (locales, options) {
    return intl().number(numberValue.call(this), locales, options);
  });
  localeMethod(BigInt.prototype, "toLocaleString", 0, function (locales, options) {
    return intl().number(bigintValue.call(this), locales, options);
  });
  dateMethod("toLocaleString", "any", "all");
  dateMethod("toLocaleDateString", "date", "date");
  dateMethod("toLocaleTimeString", "time", "time");
  localeMethod(String.prototype, "localeCompare", 1, function (that, locales, options) {
    if (this === null || this === undefined)
      throw new _TypeError("String.prototype.localeCompare called on null or undefined");
    return intl().compare(String(this), String(that), locales, options);
  });
