// The TM Dev Lab workload's four tools on the official TypeScript SDK (a benchmark peer):
//   node ts_server.mjs PORT      (0: any free port; prints "PORT n" once listening)
// Streamable HTTP at /mcp on 127.0.0.1, a new McpServer and a stateless transport per request,
// as the workload's own Node.js server does; node:http (no web framework).
import http from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

function fib(x) { return x <= 1 ? x : fib(x - 1) + fib(x - 2); }
function upper(o) {
  if (Array.isArray(o)) return o.map(upper);
  if (o !== null && typeof o === "object") return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, upper(v)]));
  return typeof o === "string" ? o.toUpperCase() : o;
}
const text = (obj) => ({ content: [{ type: "text", text: JSON.stringify(obj) }] });

function build() {
  const server = new McpServer({ name: "tmdevlab-ts", version: "1.0.0" });
  server.tool("calculate_fibonacci", "Compute the n-th Fibonacci number recursively", { n: z.number() }, async ({ n }) => {
    if (n < 0 || n > 40) throw new Error("n must be between 0 and 40");
    return text({ input: n, result: fib(n), server_type: "nodejs" });
  });
  server.tool("fetch_external_data", "GET an HTTP endpoint", { endpoint: z.string() }, async ({ endpoint }) => {
    const start = performance.now();
    try {
      const r = await fetch(endpoint); await r.arrayBuffer();
      return text({ url: endpoint, status_code: r.status, response_time_ms: performance.now() - start, server_type: "nodejs" });
    } catch (e) {
      return text({ url: endpoint, status_code: 0, response_time_ms: performance.now() - start, error: String(e), server_type: "nodejs" });
    }
  });
  server.tool("process_json_data", "Upper-case every string field", { data: z.object({}).passthrough() }, async ({ data }) =>
    text({ original_keys: Object.keys(data), transformed_data: upper(data), server_type: "nodejs" }));
  server.tool("simulate_database_query", "Simulate a query with a delay", { query: z.string(), delay_ms: z.number().default(0) },
    async ({ query, delay_ms = 0 }) => {
      if (delay_ms < 0 || delay_ms > 5000) throw new Error("delay_ms must be between 0 and 5000");
      await new Promise((r) => setTimeout(r, delay_ms));
      return text({ query, delay_ms, timestamp: new Date().toISOString(), server_type: "nodejs" });
    });
  return server;
}

const httpServer = http.createServer(async (req, res) => {
  if (req.url !== "/mcp") { res.writeHead(404).end(); return; }
  if (req.method !== "POST") { res.writeHead(405).end(); return; }
  const chunks = [];
  for await (const c of req) chunks.push(c);
  let body;
  try { body = JSON.parse(Buffer.concat(chunks).toString("utf8")); } catch { res.writeHead(400).end(); return; }
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  const server = build();
  res.on("close", () => { transport.close(); server.close(); });
  try {
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  } catch (e) {
    if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: String(e) }));
  }
});
httpServer.keepAliveTimeout = 65000;
httpServer.listen(Number(process.argv[2] || 0), "127.0.0.1", () => {
  console.log(`PORT ${httpServer.address().port}`);
});
