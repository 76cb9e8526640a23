// A real external MCP client over stdio: the official TypeScript SDK spawns
// `<binary> mcp` (as a desktop assistant would), lists the tools and calls
// service_whoami and service_list_monitors.
// Usage: node stdio_client.mjs <binary> [search]
// The server gets SERVICE_API_KEY, SERVICE_API_URL and SERVICE_READ_ONLY from
// this process's environment (plus the SDK's safe default variables).
// It prints one JSON line: {"server", "instructions", "tools", "whoami",
// "monitors", "monitorsMarkdown"}; each call is {"isError", "text"}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";

const [binary, search = ""] = process.argv.slice(2);
const env = getDefaultEnvironment();
for (const name of ["SERVICE_API_KEY", "SERVICE_API_URL", "SERVICE_READ_ONLY"]) {
  if (process.env[name] !== undefined) env[name] = process.env[name];
}
const transport = new StdioClientTransport({ command: binary, args: ["mcp"], env, stderr: "inherit" });
const client = new Client({ name: "uptime-operator-stdio-test", version: "1.0.0" });
await client.connect(transport);

async function call(name, args) {
  const res = await client.callTool({ name, arguments: args });
  const text = res.content.filter((c) => c.type === "text").map((c) => c.text).join("");
  return { isError: res.isError === true, text };
}

const { tools } = await client.listTools();
const result = {
  server: client.getServerVersion(),
  instructions: client.getInstructions(),
  tools: tools.map((t) => t.name),
  whoami: await call("service_whoami", { response_format: "json" }),
  monitors: await call("service_list_monitors", { search, response_format: "json" }),
  monitorsMarkdown: await call("service_list_monitors", { search }),
};
console.log(JSON.stringify(result));
await client.close();
