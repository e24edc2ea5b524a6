// tools (code mode): the registry's tools, each call a real call the host makes; ToolError.
  // ---- tools ----
  // `await tools.NAME(args)` calls NAME's current active version, `await tools.call(name, args,
  // { version })` any name or version. The host does everything that matters (the callee's own
  // schema, capabilities, limits, usage and audit); this is only the call's shape. A failed call
  // rejects with a ToolError whose kind the host answered, so an uncaught one ends this call
  // with that kind (wasm_engine.py:_decided_kind). Calls are synchronous host calls behind a
  // promise: `Promise.all` over tools runs them one after the other.
  class ToolError extends _Error {
    constructor(message, kind = "runtime_error", tool = null) {
      super(String(message));
      this.kind = String(kind);
      this.tool = tool === null || tool === undefined ? null : String(tool);
    }
  }
  defineProperty(ToolError.prototype, "name", { value: "ToolError", writable: true, configurable: true });
  // Set by the driver once the call's answer is decided (50-driver.js): a `tools` call made
  // after that (a detached promise chain's, in the same job pump) is refused here, before any
  // request; the host refuses everything once the call has returned (CallHost.close). Only the
  // prelude reaches the raw hook (00-core.js deletes it from the global), so this closure's
  // flag is the one way in. It lives in guest memory: a kept instance is put back to the
  // snapshot's bytes, where it is false.
  let decided = false;
  const decide = () => {
    decided = true;
  };
  const toolError = (e, name) =>
    marked(new ToolError(String(e.message), String(e.kind), e.tool === undefined ? name : e.tool), String(e.kind));
  const callTool = async (name, args, options) => {
    if (typeof name !== "string") throw new _TypeError("tools.call: the tool's name must be a string");
    const request = { name, args: args === undefined ? {} : args };
    if (options !== undefined && options !== null) {
      if (typeof options !== "object") throw new _TypeError("tools.call: options must be an object such as { version: 2 }");
      if (options.version !== undefined) request.version = options.version;
    }
    if (decided) {
      const message = `tools.${name}: the call has already answered: an inner call after that is refused`;
      throw marked(new ToolError(message, "runtime_error", name), "runtime_error");
    }
    const answer = call("tool", request);
    if (answer.error) throw toolError(answer.error, name);
    return answer.value;
  };
  // `tools.NAME` is a function calling NAME (a tool named `call` is `tools.call("call", args)`,
  // a hyphenated one `tools["word-count"](args)`), and a namespace too: `tools.UPSTREAM.TOOL`
  // calls "UPSTREAM.TOOL", an upstream MCP server's tool. The host alone knows which names
  // exist, so every name is both; the call says which was meant.
  const namespaceOf = (prefix) =>
    new Proxy(function tool() {}, {
      apply(t, self, argv) {
        return callTool(prefix, argv[0]);
      },
      get(t, p) {
        if (typeof p !== "string" || p === "then") return undefined;
        return (args) => callTool(prefix + "." + p, args);
      },
      set() {
        return false;
      },
      defineProperty() {
        return false;
      },
      deleteProperty() {
        return false;
      },
      setPrototypeOf() {
        return false;
      },
    });
  const toolsTarget = freeze(Object.create(null));
  const tools = new Proxy(toolsTarget, {
    get(t, p) {
      if (p === "call") return callTool;
      // not a tool: symbols, and `then` (so `await tools` is the object, not a call)
      if (typeof p !== "string" || p === "then") return undefined;
      return namespaceOf(p);
    },
    has(t, p) {
      return typeof p === "string";
    },
    ownKeys() {
      return [];
    },
    getOwnPropertyDescriptor() {
      return undefined;
    },
    set() {
      return false;
    },
    defineProperty() {
      return false;
    },
    deleteProperty() {
      return false;
    },
    setPrototypeOf() {
      return false;
    },
  });
  define("tools", tools);
  define("ToolError", ToolError);
