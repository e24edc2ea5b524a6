// localStorage: Web Storage semantics over the host's storage hook.
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
