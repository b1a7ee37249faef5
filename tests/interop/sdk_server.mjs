/*
 * The official TypeScript SDK as a server, for libmcp's client interop
 * test (client_peers.c): McpServer with tools (one with an outputSchema,
 * one reporting progress, one asking the client through elicitation, one
 * tool error), a resource, a resource template, a prompt with completion.
 *
 * usage: node sdk_server.mjs                    stdio
 *        node sdk_server.mjs --http [--stateless]  Streamable HTTP on a free
 *                                               loopback port; prints
 *                                               "listening on URL" on stdout
 */
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { z } from 'zod';

function build() {
    const server = new McpServer({ name: 'sdk-reference', version: '1.0.0' });
    server.registerTool('add', {
        description: 'Adds two numbers.',
        inputSchema: { a: z.number(), b: z.number() },
        outputSchema: { sum: z.number() }
    }, async ({ a, b }) => ({
        content: [{ type: 'text', text: String(a + b) }],
        structuredContent: { sum: a + b }
    }));
    server.registerTool('count', {
        description: 'Reports progress 1..3, then answers.',
        inputSchema: {}
    }, async (_args, extra) => {
        const token = extra._meta?.progressToken;
        for (let i = 1; i <= 3; i++)
            if (token !== undefined)
                await extra.sendNotification({
                    method: 'notifications/progress',
                    params: { progressToken: token, progress: i, total: 3, message: `step ${i}` }
                });
        return { content: [{ type: 'text', text: 'counted' }] };
    });
    server.registerTool('whoami', {
        description: 'Asks the user for a name (elicitation).',
        inputSchema: {}
    }, async () => {
        const r = await server.server.elicitInput({
            message: 'Your name?',
            requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }
        });
        return { content: [{ type: 'text', text: r.action === 'accept' ? `hello ${r.content.name}` : r.action }] };
    });
    server.registerTool('fail', { description: 'Always a tool error.', inputSchema: {} },
        async () => ({ content: [{ type: 'text', text: 'it failed' }], isError: true }));
    server.registerResource('readme', 'doc://readme', { mimeType: 'text/plain' },
        async (uri) => ({ contents: [{ uri: uri.href, text: 'read me' }] }));
    server.registerResource('case', new ResourceTemplate('case://{id}', { list: undefined }), {},
        async (uri, { id }) => ({ contents: [{ uri: uri.href, text: `case ${id}` }] }));
    server.registerPrompt('review', {
        description: 'Review a case.',
        argsSchema: { caseId: completable(z.string(), (v) => ['C-1', 'C-2', 'D-9'].filter((x) => x.startsWith(v))) }
    }, ({ caseId }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Review ${caseId}` } }] }));
    return server;
}

const args = process.argv.slice(2);
if (!args.includes('--http')) {
    await build().connect(new StdioServerTransport());
} else {
    const stateless = args.includes('--stateless');
    const sessions = new Map();
    const http = createServer(async (req, res) => {
        let body = '';
        for await (const chunk of req)
            body += chunk;
        const parsed = body ? JSON.parse(body) : undefined;
        if (stateless) {
            const server = build();
            const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
            res.on('close', () => { transport.close(); server.close(); });
            await server.connect(transport);
            await transport.handleRequest(req, res, parsed);
            return;
        }
        const sid = req.headers['mcp-session-id'];
        let transport = sid ? sessions.get(sid) : undefined;
        if (!transport) {
            if (sid || req.method !== 'POST' || parsed?.method !== 'initialize') {
                res.writeHead(sid ? 404 : 400, { 'Content-Type': 'application/json' });
                res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'no session' } }));
                return;
            }
            transport = new StreamableHTTPServerTransport({
                sessionIdGenerator: () => randomUUID(),
                onsessioninitialized: (id) => sessions.set(id, transport)
            });
            transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); };
            await build().connect(transport);
        }
        await transport.handleRequest(req, res, parsed);
    });
    http.listen(0, '127.0.0.1', () => {
        console.log(`listening on http://127.0.0.1:${http.address().port}/mcp`);
    });
    process.on('SIGTERM', () => process.exit(0));
}
