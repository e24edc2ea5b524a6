// The `tools` global of toolfoundry's code mode, for run_js snippets and tool handlers.
// Generated from the tools' declarations by toolfoundry; do not edit.
//
//   const n = await tools.word_count({ text });                 // current active version
//   const m = await tools.call("word_count", { text }, { version: 2 });
//   try { ... } catch (e) { if (e instanceof ToolError && e.kind === "not_active") ... }
// 9 tools.

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
  | "dependency_unavailable"
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
  /** Classify an item; its parameters are named like JSON Schema keywords. */
  classify_item(args: {
    type: "book" | "film";
    /** Title */
    title: string;
    /** default: null */
    description?: string | null;
    /** maxItems: 5 */
    ratings?: number[];
    [key: string]: unknown;
  }): Promise<unknown>;
  /** Create a contact record with an address, tags and free-form metadata. */
  create_record(args: {
    name: string;
    address: {
      street: string;
      /** pattern: "^[0-9]{5}$" */
      zip?: string;
    };
    /** uniqueItems: true */
    tags?: string[];
    metadata?: { [key: string]: string };
    [key: string]: unknown;
  }): Promise<unknown>;
  /** Find a user by id or by email. */
  lookup_user(args?: {
    /** integer */
    id?: number;
    /** format: "email" */
    email?: string;
    [key: string]: unknown;
  } & ({
    id: unknown;
    [key: string]: unknown;
  } | {
    email: unknown;
    [key: string]: unknown;
  })): Promise<unknown>;
  /** Sum the values of a tree of nodes. */
  tree_sum(args: {
    root: ToolTypes.tree_sum.Node;
    [key: string]: unknown;
  }): Promise<number>;
  /** Collect figures for a date range, render a report and publish it. */
  publish_report(args: {
    /**
     * Start and end dates
     *
     * prefixItems[0]: format: "date"; prefixItems[1]: format: "date"
     */
    period: [string?, string?];
    /** default: false */
    dry_run?: boolean;
    [key: string]: unknown;
  }): Promise<unknown>;
  /** Turn text into a URL slug. */
  slugify(args: {
    /**
     * Text to convert
     *
     * minLength: 1
     */
    text: string;
    /** default: "-"; maxLength: 3 */
    separator?: string;
    /**
     * Cut the slug to this many characters
     *
     * default: null; anyOf[0]: integer, minimum: 1
     */
    max_length?: number | null;
    /** default: true */
    lowercase?: boolean;
    [key: string]: unknown;
  }): Promise<string>;
  /** Wrap text to a fixed width. */
  wrap_text(args: {
    text: string;
    /** default: 80 */
    width?: 40 | 80 | 120;
    /** default: "word" */
    mode?: "word" | "char";
    /** Only two spaces are supported */
    indent?: "  ";
    [key: string]: unknown;
  }): Promise<unknown>;
  /** Fetch the current weather for a city. */
  fetch_weather(args: {
    /** City name, e.g. Lisbon */
    city: string;
    /** default: null */
    units?: "metric" | "imperial" | null;
    /** default: 1; integer; minimum: 1; maximum: 7 */
    days?: number;
    [key: string]: unknown;
  }): Promise<{
    temperature: number;
    summary?: string;
    [key: string]: unknown;
  }>;
  /** List the boards this instance knows. */
  list_boards(args?: { [key: string]: unknown }): Promise<unknown>;
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

declare namespace ToolTypes.tree_sum {
  type Node = {
    value: number;
    children?: Node[];
    [key: string]: unknown;
  };
}
