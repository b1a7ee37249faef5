/*
 * Interop: the official MCP TypeScript SDK as the client of libmcp's servers.
 *
 * The SDK's Client and StdioClientTransport spawn the server binaries over
 * stdio and every check asserts the exact result the SDK hands back: what a
 * real TypeScript host sees, after the SDK's own validation (zod schemas on
 * every message, outputSchema checks on structuredContent).
 *
 * usage: node sdk_client.mjs MCP_TEST_SERVER MCP_EXAMPLE_HELLO
 *
 * Each check prints "ok NAME" or "FAIL NAME: why"; the last line is
 * "sdk_client: N passed, M failed" and the exit status is non-zero when
 * anything failed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { spawn } from 'node:child_process';
import {
    ElicitRequestSchema,
    ErrorCode,
    LATEST_PROTOCOL_VERSION,
    LoggingMessageNotificationSchema,
    McpError,
    ResourceUpdatedNotificationSchema
} from '@modelcontextprotocol/sdk/types.js';

const [testServer, helloServer] = process.argv.slice(2);
if (!testServer || !helloServer) {
    console.error('usage: node sdk_client.mjs MCP_TEST_SERVER MCP_EXAMPLE_HELLO');
    process.exit(2);
}

/* The expected texts below are the 2025-11-25 behaviour (invalid arguments
 * are a tool result there, a -32602 error before it). */
const EXPECTED_VERSION = '2025-11-25';

/* No single check may hang the run; CTest's TIMEOUT is the outer bound. */
const CHECK_TIMEOUT_MS = 30000;

let passed = 0;
let failed = 0;

/* Runs one named check and prints its verdict; a thrown error is a failure. */
async function check(name, fn) {
    let timer;
    const limit = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no verdict after ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
    });
    try {
        await Promise.race([fn(), limit]);
        passed++;
        console.log(`ok ${name}`);
    } catch (e) {
        failed++;
        const why = (e && e.message ? e.message : String(e)).replace(/\n/g, '\n    ');
        console.log(`FAIL ${name}: ${why}`);
    } finally {
        clearTimeout(timer);
    }
}

/* Awaits `promise`, which must reject with an McpError of `code`; returns the error. */
async function expectMcpError(promise, code) {
    let error;
    try {
        const result = await promise;
        assert.fail(`expected McpError ${code}, got result ${JSON.stringify(result)}`);
    } catch (e) {
        error = e;
    }
    if (error instanceof assert.AssertionError)
        throw error;
    assert.ok(error instanceof McpError, `expected McpError, got ${error}`);
    assert.equal(error.code, code, `error code (message: ${error.message})`);
    return error;
}

/*
 * Spawns `command` with `args` and connects an SDK client to it. The
 * server's stderr is collected (to look for sanitizer reports), every error
 * the SDK reports outside a request (an unparseable message, a response for
 * an unknown id, a progress notification for an unknown token) is kept in
 * `errors`, and the protocol version the handshake settled on in `version`.
 */
async function connect(command, args = [], capabilities = {}) {
    const peer = { stderr: '', errors: [], version: null, client: null, transport: null };
    const transport = new StdioClientTransport({ command, args, stderr: 'pipe' });
    transport.stderr.on('data', (chunk) => { peer.stderr += chunk; });
    /* The Client calls this optional Transport hook once initialize has
     * negotiated; stdio itself has no use for it. */
    transport.setProtocolVersion = (v) => { peer.version = v; };
    const client = new Client({ name: 'libmcp-interop', version: '1.0.0' }, { capabilities });
    client.onerror = (e) => peer.errors.push(e.message);
    await client.connect(transport);
    /*
     * The SDK (1.x) handles a response at once but a notification one
     * microtask later. When a progress notification and the response it
     * precedes arrive in the same read from the pipe, the response retires
     * the progress handler first and the SDK reports the notification as
     * "unknown token" (typescript-sdk issue #2580). libmcp sends them in
     * order (fixture.transcript_progress_before_response checks the wire);
     * handing the SDK one message per event-loop turn, as a slower pipe
     * would, keeps the checks about libmcp.
     */
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => setImmediate(() => deliver(message, extra));
    peer.client = client;
    peer.transport = transport;
    return peer;
}

/*
 * Closes the client: stdin reaches EOF and the server must exit by itself
 * (the SDK sends SIGTERM only after 2 s) with no sanitizer report on stderr.
 */
async function closeCleanly(peer) {
    const t0 = Date.now();
    await peer.client.close();
    const took = Date.now() - t0;
    assert.ok(took < 1900, `server took ${took} ms to exit after stdin closed`);
    await new Promise((resolve) => setImmediate(resolve)); /* the last stderr bytes */
    const report = peer.stderr.match(/^.*(Sanitizer|runtime error:).*$/m);
    assert.equal(report, null, `sanitizer output on the server's stderr:\n${peer.stderr}`);
    assert.deepEqual(peer.errors, [], 'errors the SDK reported outside any request');
}

/* Reads the server's --transcript file: one {time, dir, msg} object a line. */
function readTranscript(path) {
    return readFileSync(path, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

const text = (t) => ({ type: 'text', text: t });
const DESCRIPTION = "A fixture tool for libmcp's tests.";
const OBJECT = { type: 'object' };

/* ---- the fixture server (tests/fixture) ---------------------------------- */

async function fixtureChecks() {
    const dir = mkdtempSync(join(tmpdir(), 'libmcp-interop-'));
    const transcriptPath = join(dir, 'transcript.jsonl');
    let peer;
    try {
        await check('fixture.initialize', async () => {
            peer = await connect(testServer, ['--transcript', transcriptPath]);
            assert.equal(LATEST_PROTOCOL_VERSION, EXPECTED_VERSION, 'the SDK offers the version these checks expect');
            assert.equal(peer.version, EXPECTED_VERSION, 'negotiated protocol version');
            assert.deepEqual(peer.client.getServerVersion(), { name: 'fixture', version: '1.0.0' });
            assert.deepEqual(peer.client.getServerCapabilities(), {
                tools: { listChanged: true },
                resources: { subscribe: true, listChanged: true },
                prompts: { listChanged: true },
                completions: {},
                logging: {}
            });
            assert.equal(peer.client.getInstructions(), undefined);
        });
        if (!peer)
            return;
        const c = peer.client;

        await check('fixture.ping', async () => {
            assert.deepEqual(await c.ping(), {});
        });

        let tools = [];
        await check('fixture.tools_list_order', async () => {
            const r = await c.listTools();
            tools = r.tools;
            assert.deepEqual(
                tools.map((t) => t.name),
                ['assessTypology', 'fail', 'crash', 'silent', 'count', 'slow', 'limited', 'progress', 'media', 'stats', 'echo',
                    'askName', 'askMany'],
                'registration order, the disabled tool "hidden" and the unlisted "touch" left out');
            assert.equal(r.nextCursor, undefined, 'one page');
        });

        await check('fixture.tools_list_schemas', async () => {
            const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
            assert.deepEqual(byName.assessTypology, {
                name: 'assessTypology',
                description: DESCRIPTION,
                inputSchema: {
                    type: 'object',
                    properties: {
                        caseId: { type: 'string', pattern: '^C-[0-9]+$' },
                        typologies: { type: 'array', items: { type: 'string' } }
                    },
                    required: ['caseId'],
                    additionalProperties: false
                }
            });
            assert.deepEqual(byName.fail, { name: 'fail', description: DESCRIPTION, inputSchema: OBJECT },
                'no input schema registered: {"type":"object"}');
            assert.deepEqual(byName.count.outputSchema, {
                type: 'object', properties: { count: { type: 'integer' } }, required: ['count']
            });
            assert.deepEqual(byName.stats, {
                name: 'stats',
                description: DESCRIPTION,
                inputSchema: OBJECT,
                outputSchema: { type: 'object', properties: { cases: { type: 'integer' } } }
            });
            assert.deepEqual(byName.slow.inputSchema, {
                type: 'object', properties: { ms: { type: 'integer', minimum: 0 } }, required: ['ms']
            });
        });

        await check('fixture.call_ok', async () => {
            const r = await c.callTool({ name: 'assessTypology', arguments: { caseId: 'C-1' } });
            assert.deepEqual(r, { content: [text('Case C-1: typology T01 (structuring) matched on 4 cash deposits.')] });
        });

        await check('fixture.call_no_finding_is_success', async () => {
            const r = await c.callTool({ name: 'assessTypology', arguments: { caseId: 'C-0' } });
            assert.deepEqual(r, { content: [text('Case C-0 matches no typology.')] });
        });

        await check('fixture.call_tool_error', async () => {
            const r = await c.callTool({ name: 'assessTypology', arguments: { caseId: 'C-404' } });
            assert.deepEqual(r, {
                content: [text('Unknown caseId C-404 : no such case. Use listCases to find open case ids.')],
                isError: true
            });
            const f = await c.callTool({ name: 'fail', arguments: {} });
            assert.deepEqual(f, { content: [text('The case store is unavailable; retry in a minute.')], isError: true });
        });

        await check('fixture.invalid_arguments_missing', async () => {
            const r = await c.callTool({ name: 'assessTypology', arguments: {} });
            assert.deepEqual(r, {
                content: [text('Invalid arguments for tool assessTypology:\n- /caseId: required property missing')],
                isError: true,
                _meta: {
                    validationErrors: [{
                        instancePath: '',
                        keywordPath: '/required',
                        keyword: 'required',
                        message: '/caseId: required property missing'
                    }]
                }
            });
        });

        await check('fixture.invalid_arguments_every_violation', async () => {
            const r = await c.callTool({ name: 'assessTypology', arguments: { caseId: 'X-1', extra: 1 } });
            const pattern = '/caseId: must match the pattern "^C-[0-9]+$"';
            const extra = '/extra: property "extra" is not allowed (allowed: caseId, typologies)';
            assert.deepEqual(r, {
                content: [text(`Invalid arguments for tool assessTypology:\n- ${pattern}\n- ${extra}`)],
                isError: true,
                _meta: {
                    validationErrors: [
                        { instancePath: '/caseId', keywordPath: '/properties/caseId/pattern', keyword: 'pattern',
                          message: pattern },
                        { instancePath: '/extra', keywordPath: '/additionalProperties', keyword: 'additionalProperties',
                          message: extra }
                    ]
                }
            });
        });

        await check('fixture.unknown_tool', async () => {
            const e = await expectMcpError(c.callTool({ name: 'nope', arguments: {} }), ErrorCode.InvalidParams);
            assert.ok(e.message.includes('Unknown tool: nope'), e.message);
        });

        await check('fixture.disabled_tool_is_unknown', async () => {
            const e = await expectMcpError(c.callTool({ name: 'hidden', arguments: {} }), ErrorCode.InvalidParams);
            assert.ok(e.message.includes('Unknown tool: hidden'), e.message);
        });

        await check('fixture.crash_is_internal_error', async () => {
            const crash = await expectMcpError(c.callTool({ name: 'crash', arguments: {} }), ErrorCode.InternalError);
            assert.ok(crash.message.includes('Internal error: tool crash failed'), crash.message);
            const silent = await expectMcpError(c.callTool({ name: 'silent', arguments: {} }), ErrorCode.InternalError);
            assert.ok(silent.message.includes('Internal error: tool silent returned no content'), silent.message);
            assert.deepEqual(await c.ping(), {}, 'the server keeps serving');
        });

        await check('fixture.structured_content', async () => {
            /* listTools() above let the SDK compile the outputSchemas; it
             * validates structuredContent against them here. */
            const r = await c.callTool({ name: 'stats', arguments: {} });
            assert.deepEqual(r, {
                content: [text('{"cases":3,"open":2}')],
                structuredContent: { cases: 3, open: 2 }
            });
            const n = await c.callTool({ name: 'count', arguments: { count: 7 } });
            assert.deepEqual(n.structuredContent, { count: 7 });
        });

        await check('fixture.output_schema_violation_is_internal_error', async () => {
            /* The server checks its own result against the outputSchema and
             * does not send one that fails it. */
            const e = await expectMcpError(c.callTool({ name: 'count', arguments: { count: 'seven' } }),
                ErrorCode.InternalError);
            assert.ok(e.message.includes('does not match its outputSchema'), e.message);
        });

        await check('fixture.progress', async () => {
            const seen = [];
            const r = await c.callTool({ name: 'progress', arguments: {} }, undefined, {
                onprogress: (p) => seen.push(p)
            });
            assert.deepEqual(r, { content: [text('done')] });
            assert.deepEqual(seen, [
                { progress: 1, total: 3, message: 'step 1 of 3' },
                { progress: 2, total: 3, message: 'step 2 of 3' },
                { progress: 3, total: 3, message: 'step 3 of 3' }
            ]);
        });

        await check('fixture.logging', async () => {
            const logs = [];
            c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { logs.push(n.params); });
            assert.deepEqual(await c.setLoggingLevel('info'), {});
            await c.callTool({ name: 'progress', arguments: {} });
            assert.deepEqual(logs, [1, 2, 3].map((i) => ({ level: 'info', logger: 'fixture', data: `step ${i}` })),
                'info and above; the debug line filtered out');
            logs.length = 0;
            await c.setLoggingLevel('debug');
            await c.callTool({ name: 'progress', arguments: {} });
            assert.deepEqual(logs.map((l) => l.level), ['debug', 'info', 'info', 'info']);
            assert.deepEqual(logs[0], { level: 'debug', logger: 'fixture', data: 'starting' });
            logs.length = 0;
            await c.setLoggingLevel('error');
            await c.callTool({ name: 'progress', arguments: {} });
            assert.deepEqual(logs, [], 'nothing below error');
            c.removeNotificationHandler('notifications/message');
        });

        await check('fixture.media_content', async () => {
            const r = await c.callTool({ name: 'media', arguments: {} });
            assert.deepEqual(r.content.map((b) => b.type), ['text', 'image', 'audio', 'resource_link', 'resource', 'resource']);
            assert.deepEqual(r.content, [
                { type: 'text', text: 'media follows',
                  annotations: { audience: ['user', 'assistant'], priority: 0.5, lastModified: '2026-11-30T00:00:00Z' } },
                { type: 'image', data: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).toString('base64'),
                  mimeType: 'image/png' },
                { type: 'audio', data: Buffer.from('RIFF\0\0\0\0WAVE', 'latin1').toString('base64'), mimeType: 'audio/wav' },
                { type: 'resource_link', uri: 'aml://cases/C-1', name: 'C-1', description: 'Case C-1',
                  mimeType: 'application/json' },
                { type: 'resource', resource: { uri: 'aml://typologies', mimeType: 'application/json', text: '["T01"]' } },
                { type: 'resource', resource: { uri: 'file:///x.bin', mimeType: 'application/octet-stream',
                                                blob: Buffer.from([0, 1, 2]).toString('base64') } }
            ]);
            assert.equal(r.isError, undefined);
        });

        await check('fixture.time_limit', async () => {
            const r = await c.callTool({ name: 'limited', arguments: { ms: 3000 } });
            assert.deepEqual(r, { content: [text('Tool limited timed out after 100 ms')], isError: true });
        });

        await check('fixture.cancellation', async () => {
            const abort = new AbortController();
            setTimeout(() => abort.abort('interop test cancels'), 200);
            const t0 = Date.now();
            await assert.rejects(c.callTool({ name: 'slow', arguments: { ms: 10000 } }, undefined, { signal: abort.signal }));
            const took = Date.now() - t0;
            assert.ok(took < 2000, `rejected after ${took} ms`);
            assert.deepEqual(await c.ping(), {}, 'ping after the cancellation');
            const r = await c.callTool({ name: 'echo', arguments: { after: 'cancel' } });
            assert.deepEqual(r, { content: [text('{"after":"cancel"}')] });
        });

        await check('fixture.concurrent_calls', async () => {
            /* Slow calls of decreasing length, so responses come back out of
             * order; the SDK matches them by id. */
            const calls = [];
            for (let i = 0; i < 8; i++) {
                calls.push(c.callTool({ name: 'slow', arguments: { ms: (8 - i) * 20 } }));
                calls.push(c.callTool({ name: 'echo', arguments: { i } }));
            }
            const results = await Promise.all(calls);
            for (let i = 0; i < 8; i++) {
                assert.deepEqual(results[2 * i], { content: [text(`slept ${(8 - i) * 20} ms`)] });
                assert.deepEqual(results[2 * i + 1], { content: [text(`{"i":${i}}`)] });
            }
        });

        await check('fixture.clean_shutdown', async () => {
            await closeCleanly(peer);
        });

        await check('fixture.transcript_cancelled_call_unanswered', async () => {
            const frames = readTranscript(transcriptPath);
            const init = frames.find((f) => f.dir === 'out' && f.msg?.result?.protocolVersion);
            assert.equal(init.msg.result.protocolVersion, EXPECTED_VERSION);
            const slow = frames.filter((f) => f.dir === 'in' && f.msg?.params?.name === 'slow' &&
                                             f.msg.params.arguments?.ms === 10000);
            assert.equal(slow.length, 1);
            const id = slow[0].msg.id;
            const cancel = frames.filter((f) => f.dir === 'in' && f.msg?.method === 'notifications/cancelled');
            assert.deepEqual(cancel.map((f) => f.msg.params), [{ requestId: id, reason: 'interop test cancels' }]);
            const answers = frames.filter((f) => f.dir === 'out' && f.msg && f.msg.id === id);
            assert.deepEqual(answers, [], `no response to cancelled request ${id}`);
        });

        await check('fixture.transcript_progress_before_response', async () => {
            /* On the wire: the progress call's three notifications carry its
             * token and leave before its response. */
            const frames = readTranscript(transcriptPath).filter((f) => f.msg);
            const call = frames.find((f) => f.dir === 'in' && f.msg.params?.name === 'progress' &&
                                            f.msg.params._meta?.progressToken !== undefined);
            const token = call.msg.params._meta.progressToken;
            const out = frames.filter((f) => f.dir === 'out' &&
                (f.msg.id === call.msg.id || f.msg.params?.progressToken === token));
            assert.deepEqual(out.map((f) => f.msg.method ?? 'response'),
                ['notifications/progress', 'notifications/progress', 'notifications/progress', 'response']);
            assert.deepEqual(out.map((f) => f.msg.params?.progress ?? null), [1, 2, 3, null]);
        });
    } finally {
        if (peer)
            await peer.client.close().catch(() => {});
        rmSync(dir, { recursive: true, force: true });
    }
}

/* ---- the hello example (examples/hello_server.c) ------------------------- */

/*
 * The same checks over stdio, over Streamable HTTP with sessions (the
 * default), and over HTTP without sessions (`--stateless`: every POST
 * stands alone, as in the SDK's own stateless server mode).
 */
async function helloChecks(mode) {
    const p = mode === 'stdio' ? 'hello' : `hello.${mode}`;
    let peer, server;
    try {
        await check(`${p}.initialize`, async () => {
            if (mode === 'stdio') {
                peer = await connect(helloServer);
            } else {
                server = await startHttp(helloServer,
                    ['--http', '127.0.0.1:0', ...(mode === 'http_stateless' ? ['--stateless'] : [])]);
                const transport = new StreamableHTTPClientTransport(new URL(server.url));
                peer = { client: new Client({ name: 'libmcp-interop', version: '1.0.0' }), transport, errors: [] };
                peer.client.onerror = (e) => peer.errors.push(e.message);
                await peer.client.connect(transport);
                peer.version = transport.protocolVersion;
                if (mode === 'http')
                    assert.match(transport.sessionId, /^[0-9a-f]{32}$/, 'a session id of 128 random bits');
                else
                    assert.equal(transport.sessionId, undefined, 'no session without sessions');
            }
            assert.equal(peer.version, EXPECTED_VERSION);
            assert.deepEqual(peer.client.getServerVersion(), { name: 'hello', version: '1.0.0' });
        });
        if (!peer)
            return;
        const c = peer.client;

        await check(`${p}.tools_list`, async () => {
            const r = await c.listTools();
            assert.deepEqual(r, {
                tools: [{
                    name: 'greet',
                    title: 'Greet someone',
                    description: 'Says hello to a person by name.',
                    inputSchema: {
                        type: 'object',
                        properties: { name: { type: 'string', description: 'Who to greet' } },
                        required: ['name'],
                        additionalProperties: false
                    },
                    annotations: { readOnlyHint: true }
                }]
            });
        });

        await check(`${p}.greet`, async () => {
            const r = await c.callTool({ name: 'greet', arguments: { name: 'Ada' } });
            assert.deepEqual(r, { content: [text('Hello, Ada!')] });
        });

        await check(`${p}.greet_concurrent`, async () => {
            const names = Array.from({ length: 20 }, (_, i) => `n${i}`);
            const rs = await Promise.all(names.map((name) => c.callTool({ name: 'greet', arguments: { name } })));
            assert.deepEqual(rs, names.map((n) => ({ content: [text(`Hello, ${n}!`)] })));
        });

        await check(`${p}.greet_empty_name_is_tool_error`, async () => {
            const r = await c.callTool({ name: 'greet', arguments: { name: '' } });
            assert.deepEqual(r, { content: [text("name must not be empty; pass the person's name")], isError: true });
        });

        await check(`${p}.greet_wrong_type`, async () => {
            const r = await c.callTool({ name: 'greet', arguments: { name: 42 } });
            assert.equal(r.isError, true);
            assert.equal(r._meta.validationErrors.length, 1);
            assert.equal(r._meta.validationErrors[0].instancePath, '/name');
            assert.equal(r._meta.validationErrors[0].keyword, 'type');
            assert.ok(r.content[0].text.startsWith('Invalid arguments for tool greet:\n- /name: '), r.content[0].text);
        });

        await check(`${p}.unknown_tool_is_protocol_error`, async () => {
            const e = await expectMcpError(c.callTool({ name: 'nope', arguments: {} }), ErrorCode.InvalidParams);
            assert.ok(e.message.includes('Unknown tool: nope'), e.message);
        });

        await check(`${p}.clean_shutdown`, async () => {
            if (mode === 'stdio') {
                await closeCleanly(peer);
                return;
            }
            if (mode === 'http')
                await peer.transport.terminateSession(); /* DELETE */
            await peer.client.close();
            assert.deepEqual(peer.errors, [], 'errors the SDK reported outside any request');
            const s = server;
            server = null;
            await stopHttp(s);
        });
    } finally {
        if (peer)
            await peer.client.close().catch(() => {});
        if (server)
            await stopHttp(server).catch(() => {});
    }
}


/* ---- resources, prompts, completion, subscriptions, elicitation ------------ */

async function surfaceChecks() {
    let peer;
    try {
        await check('surface.connect_with_elicitation', async () => {
            peer = await connect(testServer, [], { elicitation: {} });
            /* The client answers elicitation/create the way a person would. */
            peer.client.setRequestHandler(ElicitRequestSchema, async (req) => {
                assert.equal(req.params.message, 'What is your name?');
                return { action: 'accept', content: { name: 'Ada' } };
            });
        });
        if (!peer)
            return;
        const c = peer.client;

        await check('surface.resources_list', async () => {
            assert.deepEqual(await c.listResources(), {
                resources: [
                    { uri: 'fixture://readme', name: 'readme', title: 'Read me', mimeType: 'text/plain', size: 19 },
                    { uri: 'fixture://logo', name: 'logo', mimeType: 'image/png', size: 4 }
                ]
            });
        });

        await check('surface.templates_list', async () => {
            assert.deepEqual(await c.listResourceTemplates(), {
                resourceTemplates: [{
                    uriTemplate: 'fixture://cases/{caseId}', name: 'case', description: 'One case as JSON',
                    mimeType: 'application/json'
                }]
            });
        });

        await check('surface.read_template', async () => {
            assert.deepEqual(await c.readResource({ uri: 'fixture://cases/C-7' }), {
                contents: [{ uri: 'fixture://cases/C-7', mimeType: 'application/json', text: '{"caseId":"C-7","status":"open"}' }]
            });
        });

        await check('surface.read_blob', async () => {
            const r = await c.readResource({ uri: 'fixture://logo' });
            assert.equal(Buffer.from(r.contents[0].blob, 'base64').toString('latin1'), '\x89PNG');
        });

        await check('surface.read_not_found_is_-32002', async () => {
            const e = await expectMcpError(c.readResource({ uri: 'fixture://cases/C-404' }), -32002);
            assert.deepEqual(e.data, { uri: 'fixture://cases/C-404' });
        });

        await check('surface.prompt', async () => {
            const r = await c.getPrompt({ name: 'review', arguments: { caseId: 'C-1', tone: 'formal' } });
            assert.equal(r.description, 'Reviews one case');
            assert.deepEqual(r.messages[0], { role: 'user', content: text('Review case C-1 in a formal tone.') });
            assert.equal(r.messages[1].content.type, 'resource');
        });

        await check('surface.prompt_missing_argument_is_-32602', async () => {
            const e = await expectMcpError(c.getPrompt({ name: 'review', arguments: {} }), ErrorCode.InvalidParams);
            assert.ok(e.message.includes('missing required argument caseId'), e.message);
        });

        await check('surface.complete_with_context', async () => {
            const r = await c.complete({
                ref: { type: 'ref/resource', uri: 'fixture://cases/{caseId}' },
                argument: { name: 'caseId', value: 'C-1' },
                context: { arguments: { region: 'eu' } }
            });
            assert.deepEqual(r.completion, { values: ['C-1', 'C-10'], total: 2, hasMore: false });
        });

        await check('surface.subscribe_and_update', async () => {
            const updated = new Promise((resolve) => {
                c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri));
            });
            assert.deepEqual(await c.subscribeResource({ uri: 'fixture://cases/C-1' }), {});
            await c.callTool({ name: 'touch', arguments: {} });
            assert.equal(await updated, 'fixture://cases/C-1');
        });

        await check('surface.elicitation_round_trip', async () => {
            const r = await c.callTool({ name: 'askName', arguments: {} });
            assert.deepEqual(r, { content: [text('Hello, Ada!')] });
        });

        await check('surface.clean_shutdown', async () => {
            await closeCleanly(peer);
            peer = null;
        });
    } finally {
        if (peer)
            await peer.client.close().catch(() => {});
    }
}


/* ---- over Streamable HTTP ---------------------------------------------------- */

/*
 * Starts an HTTP server program (ARGS include --http 127.0.0.1:0) and waits
 * for the "listening on URL" line it prints (mcp-test-server on stdout,
 * mcp_http_serve() programs on stderr); resolves to {url, proc, stderr}.
 */
function startHttp(program, args) {
    return new Promise((resolve, reject) => {
        const proc = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '', err = '';
        const look = () => {
            const m = (out + err).match(/listening on (\S+)/);
            if (m)
                resolve({ url: m[1], proc, stderr: () => err });
        };
        proc.stdout.on('data', (d) => { out += d; look(); });
        proc.stderr.on('data', (d) => { err += d; look(); });
        proc.on('exit', (code) => reject(new Error(`server exited (${code}): ${err}`)));
    });
}

async function stopHttp(server) {
    const done = new Promise((resolve) => server.proc.on('exit', (code, signal) => resolve({ code, signal })));
    server.proc.kill('SIGTERM');
    const { code, signal } = await done;
    assert.equal(code, 0, `the HTTP server exits 0 on SIGTERM (signal ${signal}; stderr: ${server.stderr()})`);
    assert.equal(server.stderr().match(/Sanitizer|runtime error:/), null, server.stderr());
}

async function httpChecks() {
    let server;
    try {
        server = await startHttp(testServer, ['--http', '127.0.0.1:0', '--legacy-sse']);
    } catch (e) {
        await check('http.start', async () => { throw e; });
        return;
    }
    const base = new URL(server.url);
    try {
        /* Stateful: the SDK's Streamable HTTP client opens a session. */
        await check('http.session', async () => {
            const transport = new StreamableHTTPClientTransport(base);
            const client = new Client({ name: 'libmcp-interop', version: '1.0.0' }, { capabilities: { elicitation: {} } });
            client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Grace' } }));
            await client.connect(transport);
            assert.match(transport.sessionId, /^[0-9a-f]{32}$/);
            assert.deepEqual(client.getServerVersion(), { name: 'fixture', version: '1.0.0' });
            const tools = await client.listTools();
            assert.equal(tools.tools[0].name, 'assessTypology');
            const missing = await client.callTool({ name: 'assessTypology', arguments: {} });
            assert.equal(missing.isError, true);
            assert.equal(missing._meta.validationErrors[0].message, '/caseId: required property missing');
            assert.deepEqual(await client.callTool({ name: 'assessTypology', arguments: { caseId: 'C-1' } }),
                { content: [text('Case C-1: typology T01 (structuring) matched on 4 cash deposits.')] });
            const seen = [];
            await client.callTool({ name: 'progress', arguments: {} }, undefined, { onprogress: (p) => seen.push(p.progress) });
            assert.deepEqual(seen, [1, 2, 3], 'progress travels on the call\'s SSE stream');
            /* A server-to-client request on the POST stream, answered by a second POST. */
            assert.deepEqual(await client.callTool({ name: 'askName', arguments: {} }), { content: [text('Hello, Grace!')] });
            const e = await expectMcpError(client.callTool({ name: 'nope', arguments: {} }), ErrorCode.InvalidParams);
            assert.ok(e.message.includes('Unknown tool: nope'));
            await transport.terminateSession(); /* DELETE */
            await client.close();
        });

        /* The deprecated HTTP+SSE transport (2024-11-05 clients). */
        await check('http.legacy_sse_transport', async () => {
            const transport = new SSEClientTransport(new URL('/sse', base));
            const client = new Client({ name: 'libmcp-interop', version: '1.0.0' });
            await client.connect(transport);
            assert.deepEqual(await client.callTool({ name: 'assessTypology', arguments: { caseId: 'C-0' } }),
                { content: [text('Case C-0 matches no typology.')] });
            await client.close();
        });

        /* Stateless 2026-07-28 requests, as a modern client sends them. */
        const modern = async (id, method, params, extraHeaders = {}) => {
            const res = await fetch(base, {
                method: 'POST',
                headers: {
                    'Content-Type': 'application/json',
                    Accept: 'application/json, text/event-stream',
                    'MCP-Protocol-Version': '2026-07-28',
                    'Mcp-Method': method,
                    ...extraHeaders
                },
                body: JSON.stringify({
                    jsonrpc: '2.0', id, method,
                    params: { ...params, _meta: {
                        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
                        'io.modelcontextprotocol/clientCapabilities': {}
                    } }
                })
            });
            const body = await res.text();
            const frames = res.headers.get('content-type').startsWith('text/event-stream')
                ? body.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)))
                : [JSON.parse(body)];
            return { status: res.status, frames, sessionId: res.headers.get('mcp-session-id') };
        };
        await check('http.stateless_call', async () => {
            const r = await modern(1, 'tools/call', { name: 'assessTypology', arguments: { caseId: 'C-1' } },
                { 'Mcp-Name': 'assessTypology' });
            assert.equal(r.status, 200);
            assert.equal(r.sessionId, null, 'no session in 2026-07-28');
            assert.equal(r.frames.at(-1).result.resultType, 'complete');
            assert.deepEqual(r.frames.at(-1).result.content,
                [text('Case C-1: typology T01 (structuring) matched on 4 cash deposits.')]);
        });
        await check('http.stateless_founding_pair', async () => {
            const r = await modern(2, 'tools/call', { name: 'assessTypology', arguments: {} }, { 'Mcp-Name': 'assessTypology' });
            assert.equal(r.frames.at(-1).result.isError, true);
            assert.equal(r.frames.at(-1).result._meta.validationErrors[0].message, '/caseId: required property missing');
        });
        await check('http.stateless_errors_and_status', async () => {
            assert.equal((await modern(3, 'ping', {})).status, 404);
            const wrongName = await modern(4, 'tools/call', { name: 'assessTypology', arguments: {} }, { 'Mcp-Name': 'other' });
            assert.equal(wrongName.status, 400);
            assert.equal(wrongName.frames[0].error.code, -32020);
        });
    } finally {
        await check('http.graceful_stop', async () => stopHttp(server));
    }
}

await fixtureChecks();
await surfaceChecks();
await httpChecks();
await helloChecks('stdio');
await helloChecks('http');
await helloChecks('http_stateless');
console.log(`sdk_client: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
