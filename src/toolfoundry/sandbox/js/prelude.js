// toolfoundry prelude: the web APIs a tool sees, as a thin veneer over one host hook.
// Evaluated once before the memory snapshot. Every check that matters is made by the host;
// this file only serialises. Its completion value is the driver's hooks {invoke, fail, tick}.
(() => {
  "use strict";
  const G = globalThis;
  const host = G.__host;
  delete G.__host;

  // Intrinsics captured now, so a tool that overwrites globals cannot break the driver.
  const { parse: jsonParse, stringify: jsonStringify } = JSON;
  const { defineProperty, freeze, keys: objectKeys } = Object;
  const fromCharCode = String.fromCharCode;
  const isView = ArrayBuffer.isView;
  const _Error = Error;
  const _TypeError = TypeError;
  const _DOMException = G.DOMException;
  const _Promise = Promise;
  const _WeakMap = WeakMap;
  const _Uint8Array = Uint8Array;
  const _ArrayBuffer = ArrayBuffer;
  const _InternalError = G.InternalError;
  const kinds = new _WeakMap(); // error object -> CallResult error kind

  const call = (op, payload) => jsonParse(host(op, jsonStringify(payload)));
  const marked = (err, kind) => {
    kinds.set(err, kind);
    return err;
  };
  const hostError = (answer) => {
    const e = answer.error;
    return marked(new _TypeError(String(e.message)), String(e.kind));
  };
  const define = (name, value) =>
    defineProperty(G, name, { value, writable: true, configurable: true, enumerable: false });

  // ---- bytes: UTF-8, hex, base64 (the polyfill bundle may be absent or overwritten) ----
  const utf8Encode = (str) => {
    const s = String(str);
    const out = [];
    for (let i = 0; i < s.length; i++) {
      let c = s.charCodeAt(i);
      if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) {
        const d = s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d < 0xe000) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          i++;
        }
      }
      if (c >= 0xd800 && c < 0xe000) c = 0xfffd;
      if (c < 0x80) out.push(c);
      else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
      else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
      else
        out.push(
          0xf0 | (c >> 18),
          0x80 | ((c >> 12) & 63),
          0x80 | ((c >> 6) & 63),
          0x80 | (c & 63),
        );
    }
    return new _Uint8Array(out);
  };
  const utf8Decode = (bytes) => {
    let out = "";
    let chunk = [];
    for (let i = 0; i < bytes.length; ) {
      const b = bytes[i];
      let c = 0xfffd;
      let n = 1;
      if (b < 0x80) c = b;
      else if (b >= 0xc2 && b < 0xe0 && (bytes[i + 1] & 0xc0) === 0x80) {
        c = ((b & 31) << 6) | (bytes[i + 1] & 63);
        n = 2;
      } else if (b >= 0xe0 && b < 0xf0 && (bytes[i + 1] & 0xc0) === 0x80 && (bytes[i + 2] & 0xc0) === 0x80) {
        c = ((b & 15) << 12) | ((bytes[i + 1] & 63) << 6) | (bytes[i + 2] & 63);
        n = 3;
        if (c < 0x800 || (c >= 0xd800 && c < 0xe000)) c = 0xfffd;
      } else if (
        b >= 0xf0 && b < 0xf5 && (bytes[i + 1] & 0xc0) === 0x80 &&
        (bytes[i + 2] & 0xc0) === 0x80 && (bytes[i + 3] & 0xc0) === 0x80
      ) {
        c = ((b & 7) << 18) | ((bytes[i + 1] & 63) << 12) | ((bytes[i + 2] & 63) << 6) | (bytes[i + 3] & 63);
        n = 4;
        if (c < 0x10000 || c > 0x10ffff) c = 0xfffd;
      }
      i += n;
      if (c >= 0x10000) {
        c -= 0x10000;
        chunk.push(0xd800 + (c >> 10), 0xdc00 + (c & 1023));
      } else chunk.push(c);
      if (chunk.length >= 4096) {
        out += fromCharCode(...chunk);
        chunk = [];
      }
    }
    return out + fromCharCode(...chunk);
  };
  const HEX = "0123456789abcdef";
  const toHex = (bytes) => {
    let s = "";
    for (let i = 0; i < bytes.length; i++) s += HEX[bytes[i] >> 4] + HEX[bytes[i] & 15];
    return s;
  };
  const fromHex = (s) => {
    const out = new _Uint8Array(s.length >> 1);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(s.substr(i * 2, 2), 16);
    return out;
  };
  const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const toBase64 = (bytes) => {
    let s = "";
    let i = 0;
    for (; i + 2 < bytes.length; i += 3) {
      const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
      s += B64[n >> 18] + B64[(n >> 12) & 63] + B64[(n >> 6) & 63] + B64[n & 63];
    }
    if (i < bytes.length) {
      const n = (bytes[i] << 16) | ((i + 1 < bytes.length ? bytes[i + 1] : 0) << 8);
      s += B64[n >> 18] + B64[(n >> 12) & 63];
      s += i + 1 < bytes.length ? B64[(n >> 6) & 63] + "=" : "==";
    }
    return s;
  };
  const fromBase64 = (s) => {
    const clean = s.replace(/=+$/, "");
    const out = new _Uint8Array((clean.length * 3) >> 2);
    let bits = 0;
    let acc = 0;
    let j = 0;
    for (let i = 0; i < clean.length; i++) {
      acc = (acc << 6) | B64.indexOf(clean[i]);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out[j++] = (acc >> bits) & 255;
      }
    }
    return out;
  };
  const bufferBytes = (data, what) => {
    if (data instanceof _ArrayBuffer) return new _Uint8Array(data);
    if (isView(data)) return new _Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    throw new _TypeError(`${what}: expected an ArrayBuffer or a typed array`);
  };
  const copyBuffer = (bytes) => {
    const out = new _Uint8Array(bytes.length);
    out.set(bytes);
    return out.buffer;
  };

  // ---- console ----
  let logsOpen = true;
  const show = (v) => {
    if (typeof v === "string") return v;
    if (v instanceof _Error) return `${v.name}: ${v.message}`;
    if (typeof v === "object" && v !== null) {
      try {
        const s = jsonStringify(v);
        if (s !== undefined) return s;
      } catch {}
    }
    try {
      return String(v);
    } catch {
      return Object.prototype.toString.call(v);
    }
  };
  const logger = (level) =>
    function (...args) {
      if (!logsOpen) return;
      // raw protocol (no JSON): "level\ntext" -> "1" while the log has room
      logsOpen = host("log", `${level}\n${args.map(show).join(" ")}`) === "1";
    };
  define("console", {
    log: logger("log"),
    info: logger("info"),
    warn: logger("warn"),
    error: logger("error"),
    debug: logger("debug"),
  });

  // ---- timers: a virtual clock run by the guest's job loop ----
  let clock = 0;
  let timerSeq = 0;
  const timers = new Map(); // id -> {due, fn, args, every}
  const addTimer = (fn, ms, args, repeat) => {
    if (typeof fn !== "function") throw new _TypeError("setTimeout: the callback must be a function");
    const delay = Math.max(0, Number(ms) || 0);
    const id = ++timerSeq;
    timers.set(id, { due: clock + delay, fn, args, every: repeat ? Math.max(1, delay) : 0 });
    return id;
  };
  define("setTimeout", (fn, ms, ...args) => addTimer(fn, ms, args, false));
  define("setInterval", (fn, ms, ...args) => addTimer(fn, ms, args, true));
  define("clearTimeout", (id) => void timers.delete(id));
  define("clearInterval", (id) => void timers.delete(id));
  define("queueMicrotask", (fn) => void _Promise.resolve().then(fn));
  const tick = (budgetMs) => {
    let nextId = 0;
    let next = null;
    for (const [id, t] of timers) {
      if (next === null || t.due < next.due) {
        next = t;
        nextId = id;
      }
    }
    if (next === null) return 0;
    if (next.due > budgetMs) return 2;
    clock = next.due;
    if (next.every) next.due += next.every;
    else timers.delete(nextId);
    try {
      next.fn(...next.args);
    } catch (e) {
      G.console.error("uncaught in timer:", e);
    }
    return 1;
  };

  // ---- crypto (computed on the host) ----
  const domError = (message, name) => new _DOMException(message, name);
  const INTEGER_ARRAYS = ["Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array",
    "Int32Array", "Uint32Array", "BigInt64Array", "BigUint64Array"];
  const integerTags = new Set(INTEGER_ARRAYS);
  const typedArrayTag = Object.getOwnPropertyDescriptor(
    Object.getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag).get;
  const getRandomValues = (array) => {
    if (!integerTags.has(typedArrayTag.call(array)))
      throw domError("getRandomValues: an integer typed array is required", "TypeMismatchError");
    if (array.byteLength > 65536)
      throw domError(
        `getRandomValues: ${array.byteLength} bytes requested; the limit is 65536`,
        "QuotaExceededError",
      );
    // raw protocol (no JSON): byte count -> hex
    const hex = host("random", `${array.byteLength}`);
    new _Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(fromHex(hex));
    return array;
  };
  const randomUUID = () => {
    const b = getRandomValues(new _Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = toHex(b);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  };
  const hashName = (alg) => {
    const name = String(typeof alg === "object" && alg !== null ? alg.name : alg).toUpperCase();
    if (!["SHA-1", "SHA-256", "SHA-384", "SHA-512"].includes(name))
      throw domError(`unsupported algorithm ${name}`, "NotSupportedError");
    return name;
  };
  const keyBytes = new _WeakMap(); // CryptoKey -> raw key bytes, never a visible property
  class CryptoKey {
    constructor() {
      throw new _TypeError("Illegal constructor");
    }
  }
  const makeKey = (bytes, hash, extractable, usages) => {
    const key = Object.create(CryptoKey.prototype);
    defineProperty(key, "type", { value: "secret", enumerable: true });
    defineProperty(key, "extractable", { value: !!extractable, enumerable: true });
    defineProperty(key, "algorithm", {
      value: freeze({ name: "HMAC", hash: freeze({ name: hash }), length: bytes.length * 8 }),
      enumerable: true,
    });
    defineProperty(key, "usages", { value: freeze([...usages]), enumerable: true });
    keyBytes.set(key, bytes);
    return key;
  };
  const hmacKey = (alg, key, usage) => {
    const name = String(typeof alg === "object" && alg !== null ? alg.name : alg).toUpperCase();
    if (name !== "HMAC") throw domError(`unsupported algorithm ${name}`, "NotSupportedError");
    const bytes = keyBytes.get(key);
    if (bytes === undefined) throw new _TypeError("the key is not a CryptoKey");
    if (!key.usages.includes(usage)) throw domError(`the key does not allow ${usage}`, "InvalidAccessError");
    return bytes;
  };
  const hostDigest = (op, payload) => {
    const answer = call(op, payload);
    if (answer.error) throw hostError(answer);
    return answer;
  };
  const subtle = freeze({
    async digest(alg, data) {
      const bytes = bufferBytes(data, "digest");
      return fromHex(hostDigest("digest", { alg: hashName(alg), data: toHex(bytes) }).hex).buffer;
    },
    async importKey(format, keyData, alg, extractable, usages) {
      if (format !== "raw") throw domError(`unsupported key format ${format}`, "NotSupportedError");
      const name = String(alg && alg.name).toUpperCase();
      if (name !== "HMAC") throw domError(`unsupported algorithm ${name}`, "NotSupportedError");
      const bytes = new _Uint8Array(bufferBytes(keyData, "importKey"));
      if (bytes.length === 0) throw domError("the HMAC key is empty", "DataError");
      for (const u of usages || []) {
        if (u !== "sign" && u !== "verify") throw new SyntaxError(`usage ${u} is not valid for HMAC`);
      }
      return makeKey(bytes, hashName(alg.hash), extractable, usages || []);
    },
    async sign(alg, key, data) {
      const k = hmacKey(alg, key, "sign");
      const payload = { hash: key.algorithm.hash.name, key: toHex(k), data: toHex(bufferBytes(data, "sign")) };
      return fromHex(hostDigest("hmac", payload).hex).buffer;
    },
    async verify(alg, key, signature, data) {
      const k = hmacKey(alg, key, "verify");
      const payload = {
        hash: key.algorithm.hash.name,
        key: toHex(k),
        data: toHex(bufferBytes(data, "verify")),
        signature: toHex(bufferBytes(signature, "verify")),
      };
      return hostDigest("hmac", payload).valid === true;
    },
  });
  define("CryptoKey", CryptoKey);
  define("crypto", freeze({ getRandomValues, randomUUID, subtle }));
  // Math.random is reseeded from host entropy by the guest on every call.

  // ---- localStorage (Web Storage over the host's storage hook) ----
  const storageOp = (payload) => {
    const answer = call("storage", payload);
    if (answer.error) {
      if (answer.error.kind === "quota") throw domError(String(answer.error.message), "QuotaExceededError");
      throw hostError(answer);
    }
    return answer.value;
  };
  class Storage {
    constructor() {
      throw new _TypeError("Illegal constructor");
    }
    get length() {
      return storageOp({ op: "length" });
    }
    key(index) {
      return storageOp({ op: "key", index: Number(index) >>> 0 });
    }
    getItem(key) {
      return storageOp({ op: "get", key: `${key}` });
    }
    setItem(key, value) {
      storageOp({ op: "set", key: `${key}`, value: `${value}` });
    }
    removeItem(key) {
      storageOp({ op: "remove", key: `${key}` });
    }
    clear() {
      storageOp({ op: "clear" });
    }
  }
  const storageMethods = new Set(["length", "key", "getItem", "setItem", "removeItem", "clear"]);
  const storageTarget = Object.create(Storage.prototype);
  const isItem = (p) => typeof p === "string" && !storageMethods.has(p);
  define(
    "localStorage",
    new Proxy(storageTarget, {
      get(t, p, r) {
        if (!isItem(p) || p in Object.prototype) return Reflect.get(t, p, r);
        const v = storageOp({ op: "get", key: p });
        return v === null ? undefined : v;
      },
      set(t, p, v) {
        if (!isItem(p)) return false;
        storageOp({ op: "set", key: p, value: `${v}` });
        return true;
      },
      deleteProperty(t, p) {
        if (isItem(p)) storageOp({ op: "remove", key: p });
        return true;
      },
      has(t, p) {
        if (!isItem(p)) return p in t;
        return storageOp({ op: "get", key: p }) !== null;
      },
      ownKeys() {
        return storageOp({ op: "keys" });
      },
      getOwnPropertyDescriptor(t, p) {
        if (!isItem(p)) return undefined;
        const v = storageOp({ op: "get", key: p });
        return v === null ? undefined : { value: v, writable: true, enumerable: true, configurable: true };
      },
      defineProperty() {
        return false;
      },
      setPrototypeOf() {
        return false;
      },
    }),
  );
  define("Storage", Storage);

  // ---- fetch veneer ----
  const normName = (name) => {
    const n = String(name).toLowerCase();
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(n)) throw new _TypeError(`invalid header name ${name}`);
    return n;
  };
  const headerList = new _WeakMap();
  class Headers {
    constructor(init) {
      headerList.set(this, []);
      if (init instanceof Headers) for (const [k, v] of init) this.append(k, v);
      else if (Array.isArray(init)) for (const [k, v] of init) this.append(k, v);
      else if (init && typeof init === "object") for (const k of objectKeys(init)) this.append(k, init[k]);
    }
    append(name, value) {
      headerList.get(this).push([normName(name), String(value).trim()]);
    }
    set(name, value) {
      this.delete(name);
      this.append(name, value);
    }
    get(name) {
      const n = normName(name);
      const found = headerList.get(this).filter(([k]) => k === n).map(([, v]) => v);
      return found.length ? found.join(", ") : null;
    }
    has(name) {
      const n = normName(name);
      return headerList.get(this).some(([k]) => k === n);
    }
    delete(name) {
      const n = normName(name);
      headerList.set(this, headerList.get(this).filter(([k]) => k !== n));
    }
    forEach(fn, thisArg) {
      for (const [k, v] of this) fn.call(thisArg, v, k, this);
    }
    *entries() {
      const names = [...new Set(headerList.get(this).map(([k]) => k))].sort();
      for (const n of names) yield [n, this.get(n)];
    }
    *keys() {
      for (const [k] of this.entries()) yield k;
    }
    *values() {
      for (const [, v] of this.entries()) yield v;
    }
    [Symbol.iterator]() {
      return this.entries();
    }
  }
  const bodyBytes = (body, headers) => {
    if (body === undefined || body === null) return null;
    if (typeof body === "string") {
      if (!headers.has("content-type")) headers.set("content-type", "text/plain;charset=UTF-8");
      return utf8Encode(body);
    }
    if (G.URLSearchParams && body instanceof G.URLSearchParams) {
      if (!headers.has("content-type"))
        headers.set("content-type", "application/x-www-form-urlencoded;charset=UTF-8");
      return utf8Encode(body.toString());
    }
    if (body instanceof _ArrayBuffer || isView(body)) return new _Uint8Array(bufferBytes(body, "body"));
    throw new _TypeError("unsupported body type: use a string, ArrayBuffer or typed array");
  };
  const bodies = new _WeakMap(); // Request/Response -> {bytes, used}
  class Body {
    get bodyUsed() {
      return bodies.get(this).used;
    }
    get body() {
      return null;
    }
    _take() {
      const b = bodies.get(this);
      if (b.used) throw new _TypeError("body has already been consumed");
      b.used = true;
      return b.bytes || new _Uint8Array(0);
    }
    async arrayBuffer() {
      return copyBuffer(this._take());
    }
    async bytes() {
      return new _Uint8Array(this._take());
    }
    async text() {
      return utf8Decode(this._take());
    }
    async json() {
      return jsonParse(utf8Decode(this._take()));
    }
  }
  const METHODS = ["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"];
  class Request extends Body {
    constructor(input, init = {}) {
      super();
      const base = input instanceof Request ? input : null;
      this.url = base ? base.url : String(input);
      let method = String(init.method || (base ? base.method : "GET"));
      if (METHODS.includes(method.toUpperCase())) method = method.toUpperCase();
      this.method = method;
      this.headers = new Headers(init.headers || (base ? base.headers : undefined));
      this.redirect = "manual";
      this.signal = init.signal || null;
      let bytes = base ? bodies.get(base).bytes : null;
      if (init.body !== undefined) bytes = bodyBytes(init.body, this.headers);
      if (bytes && (method === "GET" || method === "HEAD"))
        throw new _TypeError("a GET or HEAD request cannot have a body");
      bodies.set(this, { bytes, used: false });
    }
    clone() {
      return new Request(this);
    }
  }
  class Response extends Body {
    constructor(body = null, init = {}) {
      super();
      this.status = init.status === undefined ? 200 : Number(init.status);
      this.statusText = init.statusText === undefined ? "" : String(init.statusText);
      this.headers = new Headers(init.headers);
      this.ok = this.status >= 200 && this.status < 300;
      this.url = "";
      this.redirected = false;
      this.type = "default";
      bodies.set(this, { bytes: bodyBytes(body, this.headers), used: false });
    }
    clone() {
      const b = bodies.get(this);
      if (b.used) throw new _TypeError("body has already been consumed");
      const r = new Response(b.bytes, this);
      r.url = this.url;
      return r;
    }
    static json(data, init = {}) {
      const headers = new Headers(init.headers);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
      return new Response(jsonStringify(data), { ...init, headers });
    }
  }
  const fetch = async (input, init = {}) => {
    const req = new Request(input, init);
    const bytes = bodies.get(req).bytes;
    const answer = call("fetch", {
      url: req.url,
      method: req.method,
      headers: [...headerList.get(req.headers)],
      body: bytes ? toBase64(bytes) : null,
    });
    if (answer.error) throw hostError(answer);
    const res = new Response(null, {
      status: answer.status,
      statusText: answer.statusText,
      headers: answer.headers,
    });
    bodies.set(res, { bytes: fromBase64(String(answer.body || "")), used: false });
    res.url = String(answer.url || req.url);
    res.type = "basic";
    return res;
  };
  define("Headers", Headers);
  define("Request", Request);
  define("Response", Response);
  define("fetch", fetch);

  // ---- the driver, called by the guest shim ----
  const describe = (err) => {
    if (err instanceof _Error) {
      const stack = typeof err.stack === "string"
        ? err.stack.split("\n").slice(0, 6).map((l) => "  " + l.trim()).filter((l) => l.length > 2).join("\n")
        : "";
      const head = `${err.name}: ${err.message}`;
      return stack ? `${head}\n${stack}` : head;
    }
    return `uncaught ${show(err)}`;
  };
  const answerError = (kind, message) => jsonStringify({ ok: false, kind, message: String(message) });
  const fail = (err) => {
    try {
      if (err === -1)
        return answerError(
          "runtime_error",
          "the module's promise never settled: nothing left to wait for (no timers, no host calls)",
        );
      if (err === -2) return answerError("timeout", "a pending timer is due after the time budget");
      let kind = (typeof err === "object" || typeof err === "function") && err !== null ? kinds.get(err) : undefined;
      if (kind === undefined) {
        kind = "runtime_error";
        if (_InternalError && err instanceof _InternalError && err.message === "out of memory") kind = "memory_limit";
      }
      return answerError(kind, describe(err));
    } catch {
      return answerError("runtime_error", "uncaught exception (not describable)");
    }
  };
  const invoke = async (ns, argsJson) => {
    try {
      const args = jsonParse(argsJson);
      let value;
      if (typeof ns.handler === "function") value = await ns.handler(args);
      else if ("default" in ns) {
        value = ns.default;
        if (typeof value === "function") value = await value(args);
        else value = await value;
      } else throw new _TypeError("the module exports neither handler() nor a default value");
      let json;
      try {
        json = value === undefined ? "null" : jsonStringify(value);
      } catch (e) {
        return answerError("runtime_error", `the result is not JSON-serialisable: ${describe(e)}`);
      }
      if (json === undefined)
        return answerError("runtime_error", `the result is not JSON-serialisable (${typeof value})`);
      return `{"ok":true,"value":${json}}`;
    } catch (err) {
      return fail(err);
    }
  };
  return freeze({ invoke, fail, tick });
})();
