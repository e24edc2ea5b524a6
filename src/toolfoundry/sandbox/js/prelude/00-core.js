// toolfoundry prelude: the web APIs a tool sees, as a thin veneer over one host hook.
// Evaluated once, before the memory snapshot; every check that matters is made by the host.
// The parts in this folder are joined, in name order, inside one closure (wasm_engine.py):
// this first one captures what they share.
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
  // error object -> the kind the prelude suggests; the host decides the kind from its own facts
  // (wasm_engine.py:_decided_kind), so these are only read through captured methods for accuracy
  const kinds = new _WeakMap();
  const _apply = Reflect.apply;
  const weakGet = _WeakMap.prototype.get;
  const weakSet = _WeakMap.prototype.set;

  const call = (op, payload) => jsonParse(host(op, jsonStringify(payload)));
  const marked = (err, kind) => {
    _apply(weakSet, kinds, [err, kind]);
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
