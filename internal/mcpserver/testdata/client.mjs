// A real external MCP client: the official TypeScript SDK connects to the
// tool server over Streamable HTTP, lists the tools and calls
// service_whoami. Usage: node client.mjs <endpoint> <api-key>
// It prints one JSON line: {"protocolVersion", "tools": [...], "whoami": {...}}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [endpoint, key] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(endpoint), {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
});
const client = new Client({ name: "uptime-operator-node-test", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const who = await client.callTool({ name: "service_whoami", arguments: { response_format: "json" } });
const text = who.content.filter((c) => c.type === "text").map((c) => c.text).join("");
console.log(JSON.stringify({
  server: client.getServerVersion(),
  tools: tools.map((t) => t.name),
  isError: who.isError === true,
  whoami: JSON.parse(text),
}));
await client.close();
