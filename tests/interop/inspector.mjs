/*
 * Interop: the MCP Inspector's command-line mode against libmcp's servers.
 *
 * Runs `mcp-inspector-cli --cli SERVER --method ...` non-interactively, the
 * way people script it, parses the JSON it prints on stdout and asserts the
 * exact result. Over stdio the inspector spawns the server, initializes,
 * sets the log level to debug (the server declares logging), runs the one
 * method and closes. Over Streamable HTTP (`--transport http`) it talks to
 * the hello example started here, with sessions and without
 * (`--stateless`).
 *
 * usage: node inspector.mjs MCP_TEST_SERVER MCP_EXAMPLE_HELLO
 *
 * Each check prints "ok NAME" or "FAIL NAME: why"; the last line is
 * "inspector: N passed, M failed" and the exit status is non-zero when
 * anything failed.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

if (process.argv.length !== 4) {
    console.error('usage: node inspector.mjs MCP_TEST_SERVER MCP_EXAMPLE_HELLO');
    process.exit(2);
}
/* Absolute, since the CLI runs in another working directory (below). */
const [testServer, helloServer] = process.argv.slice(2).map((p) => resolve(p));

/* The CLI as its package declares it ("bin"), not a guessed file name. */
const here = dirname(fileURLToPath(import.meta.url));
const pkgDir = join(here, 'node_modules', '@modelcontextprotocol', 'inspector-cli');
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
const cli = join(pkgDir, pkg.bin['mcp-inspector-cli']);

/*
 * Runs the CLI once. Its working directory is the CLI's own folder: the
 * CLI (1.0.3) looks for its package.json with a path relative to the
 * working directory but loads it relative to its module, and fails unless
 * the two agree (the check from modelcontextprotocol/inspector PR #839;
 * see issue #1503).
 */
function inspect(server, ...args) {
    const r = spawnSync(process.execPath, [cli, '--cli', server, ...args], {
        cwd: dirname(cli),
        encoding: 'utf8',
        timeout: 60000
    });
    if (r.error)
        throw r.error;
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/* Runs the CLI, which must succeed, and returns the JSON it printed. */
function inspectJson(server, ...args) {
    const r = inspect(server, ...args);
    assert.equal(r.status, 0, `inspector exited ${r.status}:\n${r.stderr}`);
    try {
        return JSON.parse(r.stdout);
    } catch (e) {
        assert.fail(`stdout is not JSON (${e.message}):\n${r.stdout}`);
    }
}

let passed = 0;
let failed = 0;

/* Runs one named check and prints its verdict; a thrown error is a failure. */
function check(name, fn) {
    try {
        fn();
        passed++;
        console.log(`ok ${name}`);
    } catch (e) {
        failed++;
        const why = (e && e.message ? e.message : String(e)).replace(/\n/g, '\n    ');
        console.log(`FAIL ${name}: ${why}`);
    }
}

const text = (t) => ({ type: 'text', text: t });

check('hello.tools_list', () => {
    assert.deepEqual(inspectJson(helloServer, '--method', 'tools/list'), {
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

check('hello.tools_call_greet', () => {
    const r = inspectJson(helloServer, '--method', 'tools/call', '--tool-name', 'greet', '--tool-arg', 'name=Ada');
    assert.deepEqual(r, { content: [text('Hello, Ada!')] });
});

check('fixture.tools_list', () => {
    const r = inspectJson(testServer, '--method', 'tools/list');
    assert.deepEqual(r.tools.map((t) => t.name),
        ['assessTypology', 'fail', 'crash', 'silent', 'count', 'slow', 'limited', 'progress', 'media', 'stats', 'echo',
            'askName', 'askMany']);
    assert.deepEqual(r.tools[0].inputSchema, {
        type: 'object',
        properties: {
            caseId: { type: 'string', pattern: '^C-[0-9]+$' },
            typologies: { type: 'array', items: { type: 'string' } }
        },
        required: ['caseId'],
        additionalProperties: false
    });
});

check('fixture.tools_call_assessTypology', () => {
    const r = inspectJson(testServer, '--method', 'tools/call', '--tool-name', 'assessTypology',
                          '--tool-arg', 'caseId=C-1');
    assert.deepEqual(r, { content: [text('Case C-1: typology T01 (structuring) matched on 4 cash deposits.')] });
});

check('fixture.tools_call_invalid_arguments', () => {
    const r = inspectJson(testServer, '--method', 'tools/call', '--tool-name', 'assessTypology',
                          '--tool-arg', 'caseId=X-1');
    const message = '/caseId: must match the pattern "^C-[0-9]+$"';
    assert.deepEqual(r, {
        content: [text(`Invalid arguments for tool assessTypology:\n- ${message}`)],
        isError: true,
        _meta: {
            validationErrors: [{ instancePath: '/caseId', keywordPath: '/properties/caseId/pattern',
                                 keyword: 'pattern', message }]
        }
    });
});

check('fixture.tools_call_integer_argument', () => {
    /* The inspector turns "20" into 20 because the inputSchema says integer. */
    const r = inspectJson(testServer, '--method', 'tools/call', '--tool-name', 'slow', '--tool-arg', 'ms=20');
    assert.deepEqual(r, { content: [text('slept 20 ms')] });
});

check('fixture.tools_call_structured', () => {
    const r = inspectJson(testServer, '--method', 'tools/call', '--tool-name', 'stats');
    assert.deepEqual(r, { content: [text('{"cases":3,"open":2}')], structuredContent: { cases: 3, open: 2 } });
});

check('fixture.tools_call_unknown_tool', () => {
    const r = inspect(testServer, '--method', 'tools/call', '--tool-name', 'nope');
    assert.equal(r.status, 1, `exit status; stdout: ${r.stdout}`);
    assert.match(r.stderr, /Failed to call tool nope: MCP error -32602: Unknown tool: nope/);
});

check('fixture.logging_set_level', () => {
    assert.deepEqual(inspectJson(testServer, '--method', 'logging/setLevel', '--log-level', 'info'), {});
});

/* Starts the hello example over HTTP on a free port; resolves to {url, proc, stderr}. */
function startHttp(extra) {
    return new Promise((resolveStart, reject) => {
        const proc = spawn(helloServer, ['--http', '127.0.0.1:0', ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
        let err = '';
        proc.stderr.on('data', (d) => {
            err += d;
            const m = err.match(/listening on (\S+)/);
            if (m)
                resolveStart({ url: m[1], proc, stderr: () => err });
        });
        proc.on('exit', (code) => reject(new Error(`hello exited (${code}): ${err}`)));
    });
}

for (const [mode, extra] of [['http', []], ['http_stateless', ['--stateless']]]) {
    let server = null;
    try {
        server = await startHttp(extra);
    } catch (e) {
        check(`hello.${mode}.start`, () => { throw e; });
        continue;
    }
    const viaHttp = ['--transport', 'http'];
    check(`hello.${mode}.tools_list`, () => {
        const r = inspectJson(server.url, ...viaHttp, '--method', 'tools/list');
        assert.deepEqual(r.tools.map((t) => [t.name, t.title]), [['greet', 'Greet someone']]);
    });
    check(`hello.${mode}.tools_call_greet`, () => {
        const r = inspectJson(server.url, ...viaHttp, '--method', 'tools/call', '--tool-name', 'greet',
                              '--tool-arg', 'name=Grace');
        assert.deepEqual(r, { content: [text('Hello, Grace!')] });
    });
    const exited = new Promise((done) => server.proc.on('exit', (code, signal) => done({ code, signal })));
    server.proc.kill('SIGTERM');
    const { code, signal } = await exited;
    check(`hello.${mode}.graceful_stop`, () => {
        assert.equal(code, 0, `exit on SIGTERM (signal ${signal}); stderr: ${server.stderr()}`);
        assert.equal(server.stderr().match(/Sanitizer|runtime error:|warning:/), null, server.stderr());
    });
}

console.log(`inspector: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
