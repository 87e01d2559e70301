// An independent legacy-era client: the official TypeScript MCP SDK.
// usage: node ts_client.mjs '<json plan>' COMMAND [ARGS...]
// The plan is {"calls": [{"name": ..., "arguments": {...}}], "elicit": "accept"|"decline"|null}.
// Prints one JSON object on stdout: {serverVersion, protocolTools, results, elicited}.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [planText, command, ...args] = process.argv.slice(2);
const plan = JSON.parse(planText);
const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: 'inherit' });
const capabilities = plan.elicit ? { elicitation: { form: {} } } : {};
const client = new Client({ name: 'engram-ts-test', version: '1.0.0' }, { capabilities });
const elicited = [];
if (plan.elicit) {
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    elicited.push(request.params.message);
    return plan.elicit === 'accept'
      ? { action: 'accept', content: plan.content ?? {} }
      : { action: plan.elicit };
  });
}
await client.connect(transport);
const { tools } = await client.listTools();
const results = [];
for (const call of plan.calls ?? []) {
  try {
    results.push(await client.callTool({ name: call.name, arguments: call.arguments ?? {} }));
  } catch (error) {
    results.push({ protocolError: error.code ?? null });
  }
}
const resources = client.getServerCapabilities()?.resources ? (await client.listResources()).resources : [];
console.log(JSON.stringify({
  serverVersion: client.getServerVersion(),
  tools: tools.map((tool) => tool.name),
  resources: resources.map((resource) => resource.uri),
  results,
  elicited,
}));
await client.close();
