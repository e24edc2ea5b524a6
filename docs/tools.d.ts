// The `tools` global of toolfoundry's code mode, for run_js snippets and tool handlers.
// Generated from the tools' declarations by toolfoundry; do not edit.
//
//   const n = await tools.word_count({ text });                 // current active version
//   const m = await tools.call("word_count", { text }, { version: 2 });
//   try { ... } catch (e) { if (e instanceof ToolError && e.kind === "not_active") ... }
// 7 tools.

/** Why a tool call failed: `ToolError.kind`. */
type ToolErrorKind =
  | "invalid_arguments"
  | "timeout"
  | "memory_limit"
  | "capability_denied"
  | "runtime_error"
  | "not_found"
  | "not_active"
  | "output_too_large"
  | "invalid_output"
  | "sandbox_unavailable"
  | "overloaded"
  | "depth_limit"
  | "call_limit"
  | "unavailable"
  | (string & {});

/** What a failed tool call throws; catch it and branch on `kind`. */
declare class ToolError extends Error {
  constructor(message: string, kind?: ToolErrorKind, tool?: string | null);
  /** Why the call failed. */
  readonly kind: ToolErrorKind;
  /** What went wrong, in words. */
  readonly message: string;
  /** The tool that was called. */
  readonly tool: string | null;
}

/** The third argument of `tools.call`. */
interface ToolCallOptions {
  /** An active version of the tool to call instead of its current one. */
  version?: number;
}

/** Every tool by its full name, as `tools.call` takes it. */
interface ToolsByName {
  /**
   * Call any active tool by name, for a tool created after your tool list was read.
   *
   * The same call as by the tool's own name: its arguments are validated against its parameters, it runs under that tool's own capabilities (network, storage: whatever it was approved for) and limits, and the call is recorded. Meta-tools are called directly, never through call_tool.
   */
  call_tool(args: {
    /**
     * the tool's name, e.g. one create_tool just made
     *
     * pattern: "^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$"
     */
    name: string;
    /** the tool's arguments, as its parameters schema describes them */
    arguments: { [key: string]: unknown };
  }): Promise<unknown>;
  /**
   * Create a new tool, or the next version of an existing one, from code and tests.
   *
   * The code is checked statically, its tests run in a sandbox with the network cut, and the capability policy decides: a pure tool becomes active at once; one asking for network, credentials, shared storage or system access waits for a human's approval. A new version must also pass every earlier version's tests (named ``v3:name`` after the version that added them), except those it retires in ``changes_tests`` with a reason. An identical resubmission creates nothing (``unchanged: true``). On refusal, read ``findings`` and ``test_results``, fix the code and call again.
   *
   * JavaScript code is an ES module exporting handler(args) (sync or async) that returns JSON. It may import only these bundled libraries, by npm name, default or named: decimal.js 10.6.0, js-yaml 5.5.0, dayjs 1.11.23 (+ dayjs/esm, dayjs/esm/plugin/*, dayjs/plugin/*), papaparse 5.7.1, marked 18.2.1, fast-xml-parser 5.12.1, diff 9.0.0, jsonpath-plus 10.4.0, date-fns 4.4.0 (+ date-fns/*, date-fns/locale/*), lodash 4.18.1 (+ lodash/*), lodash-es 4.18.1 (+ lodash-es/*), zod 4.6.7 (+ zod/v4), uuid 14.0.3, nanoid 5.1.12 (+ nanoid/non-secure).
   * Globals besides the language: console, setTimeout, setInterval, clearTimeout, clearInterval, queueMicrotask, CryptoKey, crypto (getRandomValues, randomUUID, subtle.digest/importKey/sign/verify), localStorage, Storage, Headers, Request, Response, fetch, Intl (Collator, DateTimeFormat, ListFormat, Locale, NumberFormat, PluralRules, RelativeTimeFormat, getCanonicalLocales), tools, ToolError, TextEncoder, TextDecoder, DOMException, atob, btoa, URLSearchParams, URL, structuredClone. No Node built-ins (fs, node:crypto, Buffer, process): use the globals.
   * Intl has locale data for de, de-AT, de-CH, en, en-AU, en-CA, en-GB, en-IE, en-IN, en-NZ, es, es-MX, fr, fr-CA, hi, it, ja, ko, nl, pl, pt, pt-PT, ru, sv, tr, zh, zh-Hant (and their regions: de-LU uses de); any other locale formats as en-US, and Intl.*.supportedLocalesOf answers which are served.
   * capabilities (each optional) network: ["api.example.com", "*.example.com"]; credentials: ["api.example.com"] (a configured header is added); storage: true | "tool" | "shared"; system: true (Python tier); fetch reaches only the network hosts.
   */
  create_tool(args: {
    /** tool name: a letter or '_', then letters, digits, '_' or '-' (max 64) */
    name: string;
    /** what the tool does and when to use it, for other models */
    description: string;
    /**
     * JSON Schema (type object) of the tool's arguments; by default the tool takes none
     *
     * default: {"type": "object", "properties": {}}
     */
    parameters?: { [key: string]: unknown };
    /**
     * an ES module exporting ``handler(args)`` (sync or async) that returns JSON; only fetch, localStorage, crypto, ``tools`` and the bundled npm libraries exist. Required unless from_run or patch is given
     *
     * default: null
     */
    code?: string | null;
    /**
     * in place of code: the run_id a successful run_js returned. Its module becomes the code and the run the first test (its arguments, result, and the answers its tools calls and fetches got, as that test's fixtures)
     *
     * default: null
     */
    from_run?: string | null;
    /**
     * with patch: the version of this tool whose code the patch is against (tool_history lists them)
     *
     * default: null; anyOf[0]: integer, minimum: 1
     */
    base_version?: number | null;
    /**
     * in place of code: a unified diff of base_version's code (hunks such as ``@@ -3,2 +3,2 \@@`` with ' ', '-' and '+' lines). Each hunk must match that code exactly where its header says, or the draft is refused naming it
     *
     * default: null
     */
    patch?: string | null;
    /**
     * ``javascript`` (in-process WebAssembly sandbox) or ``python``
     *
     * default: "javascript"
     */
    language?: "javascript" | "python";
    /**
     * examples the tool must pass: ``{"input": {...}, "expected": value}`` or ``{"input": {...}, "error": "substring of the error"}``; at least one (with from_run, the run is the first)
     *
     * default: null; anyOf[0]: items: One example the tool must satisfy before it can become active
     */
    tests?: {
      name?: string;
      input: { [key: string]: unknown };
      expected?: unknown;
      error?: string;
      /** Every way a call can fail; a model branches on these, so they are a public contract */
      error_kind?: "invalid_arguments" | "timeout" | "memory_limit" | "capability_denied" | "runtime_error" | "not_found" | "not_active" | "output_too_large" | "invalid_output" | "sandbox_unavailable" | "overloaded" | "depth_limit" | "call_limit" | "unavailable";
      /**
       * items: anyOf[0]: What the host's fetch answers to one request while tests run (the network is cut), anyOf[1]: What one inner call ``tools.NAME(args)`` answers while the tests run (code mode)
       */
      fixtures?: ({
        url: string;
        method?: string;
        /** integer */
        status?: number;
        headers?: { [key: string]: string };
        body?: unknown;
      } | {
        tool: string;
        args?: { [key: string]: unknown };
        /** integer */
        version?: number;
        value?: unknown;
        /** How a tool fixture's inner call fails: the kind its ToolError carries, its message */
        error?: {
          /** Every way a call can fail; a model branches on these, so they are a public contract */
          kind: "invalid_arguments" | "timeout" | "memory_limit" | "capability_denied" | "runtime_error" | "not_found" | "not_active" | "output_too_large" | "invalid_output" | "sandbox_unavailable" | "overloaded" | "depth_limit" | "call_limit" | "unavailable";
          message: string;
        };
      })[];
    }[] | null;
    /**
     * what the tool needs beyond computation, e.g. ``{"network": ["api.example.com"]}``
     *
     * default: null; anyOf[0]: Capabilities beyond computation; any of them makes the tool wait for human approval
     */
    capabilities?: {
      network?: string[];
      credentials?: string[];
      /**
       * anyOf[1]: Where a tool's localStorage lives: none, its own namespace, or one shared across tools
       */
      storage?: boolean | "none" | "tool" | "shared";
      system?: boolean;
    } | null;
    /**
     * canned HTTP answers that fetch returns while the tests run
     *
     * default: null; anyOf[0]: items: What the host's fetch answers to one request while tests run (the network is cut)
     */
    fixtures?: {
      url: string;
      method?: string;
      /** integer */
      status?: number;
      headers?: { [key: string]: string };
      body?: unknown;
    }[] | null;
    /**
     * JSON Schema of the value the tool returns; every expected value must match it
     *
     * default: null
     */
    returns?: { [key: string]: unknown } | null;
    /**
     * tests of earlier versions this version deliberately retires (they no longer gate it): {"test": "name" or "v3:name", "reason": "..."}, or a bare name (every earlier test of that name) or 0-based index into the current version's tests
     *
     * default: null; anyOf[0]: items: anyOf[1]: integer, anyOf[2]: One retired test and why
     */
    changes_tests?: (string | number | {
      /** a test name, or "v3:name" for version 3's */
      test: string;
      /** why the test no longer holds (required) */
      reason: string;
    })[] | null;
    /**
     * who wrote this version, kept in its record (default: the caller)
     *
     * default: null
     */
    author?: string | null;
    /**
     * when an active tool already passes every test of this draft, the draft is refused as its duplicate unless it names that tool here and says why it differs: {"name": "...", "why": "..."}
     *
     * default: null; anyOf[0]: The active tool a draft differs from although that tool passes the draft's tests
     */
    distinct_from?: {
      /** the active tool's name */
      name: string;
      /** how this tool differs (shown to reviewers) */
      why: string;
    } | null;
  }): Promise<{ [key: string]: unknown }>;
  /** Make an earlier version of a tool the current one (nothing is deleted). */
  rollback_tool(args: {
    /** the tool's name */
    name: string;
    /**
     * the version number to restore; see tool_history
     *
     * integer; maximum: 2147483647; minimum: 1
     */
    version: number;
  }): Promise<{ [key: string]: unknown }>;
  /**
   * Run a one-off JavaScript ES module in the sandbox, where ``tools`` calls your tools.
   *
   * The module exports ``handler(args)`` or a default value. It cannot fetch or store by itself; ``await tools.NAME(args)`` runs NAME's current active version with what that tool was approved for (network, storage), ``tools["my-tool"](args)`` for a name with ``-``, ``await tools.call(name, args, { version })`` any active version. Make many calls in one run and return only what you need: the results in between stay in the sandbox. A failed call throws a ``ToolError`` with ``kind`` (``not_found``, ``not_active``, ``invalid_arguments``, ``timeout``...), ``message`` and ``tool``, which the code can catch. Types: each search_tools hit's ``signature``, or the resource ``toolfoundry://types/tools.d.ts``. The answer has ``value``, ``logs`` and ``run_id``: create_tool with ``from_run`` set to it keeps a working run as a tool.
   */
  run_js(args: {
    /** the ES module source */
    code: string;
    /**
     * the arguments passed to ``handler``
     *
     * default: null
     */
    args?: { [key: string]: unknown } | null;
  }): Promise<{ [key: string]: unknown }>;
  /**
   * Find existing tools by what they do, best match first; look here before creating one.
   *
   * Each hit has a ``strength``: ``strong`` when the tool shares enough of the need, in its words or in meaning; ``weak`` when it is only the closest there is (``matched`` lists the query's words it has): read a weak hit's description, or show_tool, before relying on it, and create the tool when none fits. Strong hits come first. An empty list means no tool shares a word or a meaning with the need: none does it yet. The first hit carries its ``parameters`` (JSON Schema): call it with them directly. Each hit's ``signature`` types it as ``tools.NAME(args)`` for run_js (TypeScript).
   */
  search_tools(args: {
    /** words describing the need, e.g. "convert markdown to html" */
    query: string;
    /**
     * how many tools to return at most
     *
     * default: 5; integer; maximum: 100; minimum: 1
     */
    k?: number;
  }): Promise<{ [key: string]: unknown }[]>;
  /**
   * Read a tool before improving it: description, parameters, code, capabilities, status, and its TypeScript ``signature`` as ``tools.NAME`` in run_js.
   *
   * Also the whole test suite the version was gated by (earlier versions' tests, named ``v3:name``, then its own), each with input, expected value and fixtures; the tests it retired and why; how often it was called and its last error. A next version must pass that suite, except what it retires in ``changes_tests``.
   */
  show_tool(args: {
    /**
     * the tool's name
     *
     * pattern: "^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$"
     */
    name: string;
    /**
     * which version; the current one when left out (see tool_history)
     *
     * default: null; anyOf[0]: integer, maximum: 2147483647, minimum: 1
     */
    version?: number | null;
  }): Promise<{ [key: string]: unknown }>;
  /**
   * List every version of a tool with its status, author and creation time, and what it changed from the version it was made from (``changes``: which of code, description, parameters, returns, capabilities differ; tests added or retired).
   */
  tool_history(args: {
    /** the tool's name */
    name: string;
  }): Promise<{ [key: string]: unknown }[]>;
}

/**
 * The registry's tools: `await tools.NAME(args)` calls NAME's current active version;
 * `await tools.call(name, args, { version })` any tool by name.
 */
declare const tools: Omit<ToolsByName, "call" | "then"> & {
  /**
   * Call a tool by name: its current active version, or the active `version` given.
   * Same call as `tools.NAME(args)`; resolves to the tool's result, or throws a ToolError.
   */
  call<N extends keyof ToolsByName>(
    name: N,
    args: Parameters<ToolsByName[N]>[0],
    options?: ToolCallOptions,
  ): ReturnType<ToolsByName[N]>;
};
