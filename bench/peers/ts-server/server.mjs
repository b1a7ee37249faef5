// The reference server for bench/stdio: the official MCP TypeScript SDK
// (McpServer + StdioServerTransport, pinned in package.json) serving the same
// `echo` tool as bench/stdio/bench_server.c, with the same input schema
// ({type: object, properties: {text: {type: string}}, required: [text]}).
// The SDK validates the arguments against it before the handler runs.
//
// usage: node server.mjs    (bench/stdio/run.sh starts it through loadgen)
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'ts-bench', version: '1.0.0' });

server.registerTool(
  'echo',
  {
    description: 'Returns its text argument.',
    inputSchema: { text: z.string() },
  },
  async ({ text }) => ({ content: [{ type: 'text', text }] }),
);

await server.connect(new StdioServerTransport());
