// The driver the guest shim calls: invoke(ns, args), fail(err), tick(budget).
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
      let kind = (typeof err === "object" || typeof err === "function") && err !== null ? _apply(weakGet, kinds, [err]) : undefined;
      if (kind === undefined) {
        kind = "runtime_error";
        if (_InternalError && err instanceof _InternalError && err.message === "out of memory") kind = "memory_limit";
      }
      return answerError(kind, describe(err));
    } catch {
      return answerError("runtime_error", "uncaught exception (not describable)");
    }
  };
  // The answer is decided: any inner tool call made after it is refused (47-tools.js: a
  // detached promise chain may still run jobs in this pump), and the host refuses every one
  // after the call returns. No host crossing: the flag is the prelude's own.
  const invoke = async (ns, argsJson) => {
    try {
      return await outcome(ns, argsJson);
    } finally {
      decide();
    }
  };
  const outcome = async (ns, argsJson) => {
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
        // Encoding a large result can exhaust the memory cap: that is the cap's kind, not a bug.
        if (_InternalError && e instanceof _InternalError && e.message === "out of memory")
          return answerError("memory_limit", "out of memory while encoding the result");
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
