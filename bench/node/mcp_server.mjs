// The official TypeScript MCP SDK server the throughput bench (bench/bench_serve.py) compares
// `toolfoundry serve` with: one tool, add_one(x) -> x + 1, whose JavaScript runs in a fresh
// node `vm` context per call (a sandbox of node's own, as ours runs it in a pristine QuickJS
// instance). Streamable HTTP at /mcp with JSON responses and sessions, on node's http module.
//   node mcp_server.mjs PORT        (npm ci --prefix bench/node first)
import http from "node:http";
import { randomUUID } from "node:crypto";
import vm from "node:vm";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const CODE = "(function handler(a) { return a.x + 1 })(args)";
const transports = new Map();

function session() {
  const server = new McpServer({ name: "ts-sdk-baseline", version: "1.0.0" });
  server.registerTool(
    "add_one",
    { description: "Add one to an integer.", inputSchema: { x: z.number().int() } },
    async ({ x }) => {
      const value = vm.runInNewContext(CODE, { args: { x } }, { timeout: 10000 });
      return { content: [{ type: "text", text: JSON.stringify(value) }] };
    },
  );
  return server;
}

async function handle(req, res) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
  const id = req.headers["mcp-session-id"];
  let transport = id ? transports.get(id) : undefined;
  if (!transport && req.method === "POST" && isInitializeRequest(body)) {
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (sid) => transports.set(sid, transport),
    });
    transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
    await session().connect(transport);
  }
  if (!transport) {
    res.writeHead(400).end(JSON.stringify({ error: "no session" }));
    return;
  }
  await transport.handleRequest(req, res, body);
}

const port = Number(process.argv[2]);
http
  .createServer((req, res) => {
    if (!req.url.startsWith("/mcp")) return res.writeHead(404).end();
    handle(req, res).catch((err) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  })
  .listen(port, "127.0.0.1", () => console.log("ready"));
