// crypto: getRandomValues, randomUUID, subtle.digest and HMAC, computed on the host.
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
    // bytes as bytes: the byte count (as text) in, the random bytes out
    const bytes = new _Uint8Array(host("random", utf8Encode(`${array.byteLength}`)));
    new _Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(bytes);
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
  // Bytes as bytes (host/crypto.py): one Uint8Array of a JSON header, a NUL and the fields back
  // to back crosses in place; the answer is "=" and the result's bytes, or "!" and a JSON error.
  const hostBytes = (op, header, fields) => {
    const sizes = [];
    let total = 0;
    for (let i = 0; i < fields.length; i++) {
      sizes[i] = fields[i].length;
      total += sizes[i];
    }
    header.sizes = sizes;
    const head = utf8Encode(jsonStringify(header));
    const frame = new _Uint8Array(head.length + 1 + total);
    frame.set(head);
    let at = head.length + 1;
    for (let i = 0; i < fields.length; i++) {
      frame.set(fields[i], at);
      at += sizes[i];
    }
    const answer = new _Uint8Array(host(op, frame));
    if (answer[0] === 0x3d) return answer.slice(1);
    const error = jsonParse(utf8Decode(answer.subarray(1))).error;
    if (error.kind === "quota") throw domError(String(error.message), "QuotaExceededError");
    throw hostError({ error });
  };
  const subtle = freeze({
    async digest(alg, data) {
      return hostBytes("digest", { alg: hashName(alg) }, [bufferBytes(data, "digest")]).buffer;
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
      const fields = [k, bufferBytes(data, "sign")];
      return hostBytes("hmac", { hash: key.algorithm.hash.name }, fields).buffer;
    },
    async verify(alg, key, signature, data) {
      const k = hmacKey(alg, key, "verify");
      const fields = [k, bufferBytes(data, "verify"), bufferBytes(signature, "verify")];
      return hostBytes("hmac", { hash: key.algorithm.hash.name }, fields)[0] === 1;
    },
  });
  define("CryptoKey", CryptoKey);
  define("crypto", freeze({ getRandomValues, randomUUID, subtle }));
  // Math.random is reseeded from host entropy by the guest on every call.
