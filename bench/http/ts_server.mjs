// The reference server for bench/http: the official MCP TypeScript SDK
// (McpServer + StreamableHTTPServerTransport) serving the same `echo` tool as
// bench/http/bench_http_server.c, with the same input schema
// ({type: object, properties: {text: {type: string}}, required: [text]}),
// over Streamable HTTP on node:http (no express: the lighter path).
//
// The SDK is the one bench/stdio pins: bench/peers/ts-server/package.json and
// its package-lock.json (npm ci --prefix bench/peers/ts-server), loaded from
// there, so both benchmarks measure the same SDK build.
//
// Both modes follow the SDK's own examples, with enableJsonResponse: true so
// that every answer is one application/json body (JSON-to-JSON with libmcp,
// which answers application/json whenever the result comes first):
//   stateful   a transport with sessionIdGenerator: randomUUID and its own
//              McpServer per session (created by initialize, found again by
//              Mcp-Session-Id);
//   stateless  sessionIdGenerator: undefined; the SDK forbids reusing a
//              stateless transport, so every POST gets a fresh McpServer and
//              transport, closed when the response ends.
//
// It binds 127.0.0.1 on a free port, prints "port N" on stdout, and serves
// until SIGTERM or SIGINT.
//
// usage: node ts_server.mjs stateful|stateless    (bench/http/run.sh starts it)
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, '..', 'peers', 'ts-server', 'package.json'));
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StreamableHTTPServerTransport } = require('@modelcontextprotocol/sdk/server/streamableHttp.js');
const { isInitializeRequest } = require('@modelcontextprotocol/sdk/types.js');
const { z } = require('zod');

const mode = process.argv[2];
if (mode !== 'stateful' && mode !== 'stateless') {
  process.stderr.write('usage: node ts_server.mjs stateful|stateless\n');
  process.exit(2);
}

function makeServer() {
  const server = new McpServer({ name: 'ts-bench', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Returns its text argument.', inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function fail(res, status, message) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

const sessions = new Map(); // Mcp-Session-Id -> transport (stateful)

async function handle(req, res) {
  if (req.url !== '/mcp') return fail(res, 404, 'Not Found');
  let body;
  if (req.method === 'POST') {
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return fail(res, 400, 'Parse error');
    }
  }
  if (mode === 'stateless') {
    const server = makeServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    return transport.handleRequest(req, res, body);
  }
  const sid = req.headers['mcp-session-id'];
  let transport = sid ? sessions.get(sid) : undefined;
  if (!transport) {
    if (sid || req.method !== 'POST' || !isInitializeRequest(body)) return fail(res, 400, 'Bad Request: no valid session');
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => sessions.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await makeServer().connect(transport);
  }
  return transport.handleRequest(req, res, body);
}

const httpServer = http.createServer((req, res) => {
  handle(req, res).catch((e) => {
    if (!res.headersSent) fail(res, 500, String(e));
  });
});
httpServer.keepAliveTimeout = 60000;
httpServer.listen(0, '127.0.0.1', () => {
  process.stdout.write(`port ${httpServer.address().port}\n`);
});
for (const s of ['SIGTERM', 'SIGINT']) process.on(s, () => process.exit(0));
