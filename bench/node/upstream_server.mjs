// An upstream MCP server written with the official TypeScript SDK, over stdio: what
// toolfoundry's [[upstream]] tests (tests/upstream/) and bench/bench_upstream.py connect to.
//   node upstream_server.mjs            (npm ci --prefix bench/node first: scripts/setup.sh)
// Tools: word_stats(text) -> { words, chars } (read-only, structured content), hostile(kind)
// answering a lone surrogate (JSON.stringify writes it as the escape "\ud800") or 200-deep
// nesting, and lookup(key) -> a fixed record, the bench's trivial call.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "words", version: "1.0.0" });

server.registerTool(
  "word_stats",
  {
    description: "Count the words and characters of a text.",
    inputSchema: { text: z.string() },
    outputSchema: { words: z.number().int(), chars: z.number().int() },
    annotations: { readOnlyHint: true },
  },
  async ({ text }) => {
    const stats = { words: text.split(/\s+/).filter(Boolean).length, chars: text.length };
    return { content: [{ type: "text", text: JSON.stringify(stats) }], structuredContent: stats };
  },
);

server.registerTool(
  "lookup",
  {
    description: "Look a key up in a small fixed table.",
    inputSchema: { key: z.string() },
    annotations: { readOnlyHint: true },
  },
  async ({ key }) => ({ content: [{ type: "text", text: `${key}=${key.length}` }] }),
);

server.registerTool(
  "hostile",
  {
    description: "Answer something the host must refuse.",
    inputSchema: { kind: z.enum(["surrogate", "deep"]) },
    annotations: { readOnlyHint: true },
  },
  async ({ kind }) => {
    if (kind === "surrogate") return { content: [{ type: "text", text: "bad \ud800 text" }] };
    let deep = "bottom";
    for (let i = 0; i < 200; i++) deep = [deep];
    return { content: [{ type: "text", text: "deep" }], structuredContent: { v: deep } };
  },
);

await server.connect(new StdioServerTransport());
