// fetch, Headers, Request, Response: a veneer; every check is made by the host.
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
