// TextEncoder / TextDecoder for UTF-8 only, following the WHATWG Encoding Standard: lone
// surrogates encode as U+FFFD, invalid byte sequences decode to one U+FFFD per maximal
// subpart, `fatal` turns those into a TypeError, `stream` carries a partial sequence over.

const UTF8_LABELS = [
  "unicode-1-1-utf-8",
  "unicode11utf8",
  "unicode20utf8",
  "utf-8",
  "utf8",
  "x-unicode20utf8",
];
const CHUNK = 0x2000;

function bytesOf(input) {
  if (input === undefined) return new Uint8Array(0);
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (typeof SharedArrayBuffer === "function" && input instanceof SharedArrayBuffer) {
    return new Uint8Array(input);
  }
  if (ArrayBuffer.isView(input)) {
    return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  }
  throw new TypeError(
    "TextDecoder.decode: input must be an ArrayBuffer, a typed array or a DataView",
  );
}

function encodeUtf8(string) {
  const out = new Uint8Array(string.length * 3);
  let n = 0;
  for (let i = 0; i < string.length; i++) {
    let c = string.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < string.length ? string.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        i++;
      } else {
        c = 0xfffd;
      }
    }
    if (c < 0x80) {
      out[n++] = c;
    } else if (c < 0x800) {
      out[n++] = 0xc0 | (c >> 6);
      out[n++] = 0x80 | (c & 0x3f);
    } else if (c < 0x10000) {
      out[n++] = 0xe0 | (c >> 12);
      out[n++] = 0x80 | ((c >> 6) & 0x3f);
      out[n++] = 0x80 | (c & 0x3f);
    } else {
      out[n++] = 0xf0 | (c >> 18);
      out[n++] = 0x80 | ((c >> 12) & 0x3f);
      out[n++] = 0x80 | ((c >> 6) & 0x3f);
      out[n++] = 0x80 | (c & 0x3f);
    }
  }
  return out.slice(0, n);
}

class TextEncoder {
  get encoding() {
    return "utf-8";
  }

  encode(input = "") {
    return encodeUtf8(String(input));
  }

  encodeInto(source, destination) {
    if (!(destination instanceof Uint8Array)) {
      throw new TypeError("TextEncoder.encodeInto: destination must be a Uint8Array");
    }
    const string = String(source);
    let read = 0;
    let written = 0;
    while (read < string.length) {
      const c = string.codePointAt(read);
      const units = c > 0xffff ? 2 : 1;
      const bytes = encodeUtf8(string.slice(read, read + units));
      if (written + bytes.length > destination.length) break;
      destination.set(bytes, written);
      written += bytes.length;
      read += units;
    }
    return { read, written };
  }
}

class TextDecoder {
  #fatal;
  #ignoreBOM;
  #pending = [];
  #bomSeen = false;

  constructor(label = "utf-8", options = {}) {
    const normalised = String(label).trim().toLowerCase();
    if (!UTF8_LABELS.includes(normalised)) {
      throw new RangeError(`TextDecoder: the encoding "${label}" is not supported (only utf-8)`);
    }
    this.#fatal = Boolean(options?.fatal);
    this.#ignoreBOM = Boolean(options?.ignoreBOM);
  }

  get encoding() {
    return "utf-8";
  }

  get fatal() {
    return this.#fatal;
  }

  get ignoreBOM() {
    return this.#ignoreBOM;
  }

  decode(input, options = {}) {
    const stream = Boolean(options?.stream);
    const fresh = bytesOf(input);
    const bytes = this.#pending.length ? Uint8Array.from([...this.#pending, ...fresh]) : fresh;
    this.#pending = [];
    const units = [];
    let i = 0;
    while (i < bytes.length) {
      const start = i;
      const b0 = bytes[i++];
      let needed = 0;
      let cp = 0;
      let lower = 0x80;
      let upper = 0xbf;
      if (b0 < 0x80) {
        cp = b0;
      } else if (b0 >= 0xc2 && b0 <= 0xdf) {
        needed = 1;
        cp = b0 & 0x1f;
      } else if (b0 >= 0xe0 && b0 <= 0xef) {
        needed = 2;
        cp = b0 & 0x0f;
        if (b0 === 0xe0) lower = 0xa0;
        if (b0 === 0xed) upper = 0x9f;
      } else if (b0 >= 0xf0 && b0 <= 0xf4) {
        needed = 3;
        cp = b0 & 0x07;
        if (b0 === 0xf0) lower = 0x90;
        if (b0 === 0xf4) upper = 0x8f;
      } else {
        cp = -1;
      }
      let invalid = cp === -1;
      while (!invalid && needed > 0) {
        if (i >= bytes.length) {
          if (stream) {
            this.#pending = Array.from(bytes.subarray(start));
            return this.#finish(units, stream);
          }
          invalid = true;
          break;
        }
        const b = bytes[i];
        if (b < lower || b > upper) {
          invalid = true;
          break;
        }
        lower = 0x80;
        upper = 0xbf;
        cp = (cp << 6) | (b & 0x3f);
        needed--;
        i++;
      }
      if (invalid) {
        if (this.#fatal) {
          this.#pending = [];
          this.#bomSeen = false;
          throw new TypeError("TextDecoder.decode: the encoded data was not valid utf-8");
        }
        cp = 0xfffd;
      }
      if (cp > 0xffff) {
        cp -= 0x10000;
        units.push(0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
      } else {
        units.push(cp);
      }
    }
    return this.#finish(units, stream);
  }

  #finish(units, stream) {
    let from = 0;
    if (!this.#bomSeen && units.length > 0) {
      this.#bomSeen = true;
      if (!this.#ignoreBOM && units[0] === 0xfeff) from = 1;
    }
    if (!stream) this.#bomSeen = false;
    let text = "";
    for (let i = from; i < units.length; i += CHUNK) {
      text += String.fromCharCode.apply(null, units.slice(i, Math.min(i + CHUNK, units.length)));
    }
    return text;
  }
}

for (const [name, value] of [
  ["TextEncoder", TextEncoder],
  ["TextDecoder", TextDecoder],
]) {
  if (typeof globalThis[name] !== "function") {
    Object.defineProperty(globalThis, name, { value, writable: true, configurable: true });
  }
}
