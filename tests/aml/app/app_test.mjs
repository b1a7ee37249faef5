// The MCP App of mcp-server-aml (ui://aml/case-view) in a real browser:
// Debian's headless Chromium, driven by playwright-core, loads a minimal
// host page of our own (host.html: the host side of the MCP Apps bridge)
// that talks to mcp-server-aml on the demo bank over Streamable HTTP
// (stateless 2026-07-28 requests from this script). Checks: the app is
// offered only to a client declaring the extension; the view renders the
// case's accounts and flows; a click shows the right transactions; a
// traceFunds call from the view goes through the host, returns and
// redraws; nothing is fetched outside the page (the CSP allows nothing);
// no console errors. A screenshot is saved as an artifact.
//
// usage: node app_test.mjs MCP-SERVER-AML ARTIFACT-DIR
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const [bin, artifacts] = process.argv.slice(2);
if (!bin || !artifacts) {
  console.error('usage: node app_test.mjs MCP-SERVER-AML ARTIFACT-DIR');
  process.exit(2);
}
mkdirSync(artifacts, { recursive: true });
const UI = 'io.modelcontextprotocol/ui', MIME = 'text/html;profile=mcp-app';
let passed = 0, failed = 0;
function check(ok, what) {
  if (ok) passed++; else failed++;
  console.log(`${ok ? 'ok' : 'FAIL'} ${what}`);
}

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

const port = await freePort();
const server = spawn(bin, ['--http', `127.0.0.1:${port}`], { stdio: ['ignore', 'ignore', 'pipe'] });
let serverLog = '';
server.stderr.on('data', (d) => { serverLog += d; });
const url = `http://127.0.0.1:${port}/mcp`;

let nextId = 1;
async function mcp(method, params, { ui = true } = {}) {
  const caps = ui ? { extensions: { [UI]: { mimeTypes: [MIME] } } } : {};
  const body = { jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': caps } } };
  const name = method === 'tools/call' ? params.name : method === 'resources/read' ? params.uri : undefined;
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
                    'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method };
  if (name) headers['Mcp-Name'] = name;
  const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await r.text();
  const json = text.startsWith('{') ? text : text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5)).pop();
  return JSON.parse(json);
}

async function waitForServer() {
  for (let i = 0; i < 200; i++) {
    try { await mcp('server/discover', {}); return true; } catch { await new Promise((r) => setTimeout(r, 50)); }
  }
  return false;
}

let browser, web;
try {
  check(await waitForServer(), 'mcp-server-aml answers on ' + url);
  const disc = await mcp('server/discover', {});
  check(disc.result?.capabilities?.extensions?.[UI] !== undefined, 'server/discover declares the MCP Apps extension');

  // Offered to clients declaring the extension, invisible to the others.
  const withUi = (await mcp('tools/list', {})).result.tools;
  const without = (await mcp('tools/list', {}, { ui: false })).result.tools;
  const linked = withUi.filter((t) => t._meta?.ui?.resourceUri === 'ui://aml/case-view').map((t) => t.name).sort();
  check(JSON.stringify(linked) === JSON.stringify(['assessCase', 'caseGraph', 'traceFunds']), `tools linked to the view: ${linked}`);
  check(!without.some((t) => t._meta?.ui), 'a client without the extension sees no _meta.ui');
  const resWith = (await mcp('resources/list', {})).result.resources.map((r) => r.uri);
  const resWithout = (await mcp('resources/list', {}, { ui: false })).result.resources.map((r) => r.uri);
  check(resWith.includes('ui://aml/case-view') && !resWithout.includes('ui://aml/case-view'), 'the view is listed only to clients declaring the extension');

  const read = (await mcp('resources/read', { uri: 'ui://aml/case-view' })).result.contents[0];
  check(read.mimeType === MIME && read.text.startsWith('<!DOCTYPE html>'), 'the view is one HTML document of ' + MIME);
  const csp = read._meta?.ui?.csp;
  check(csp && csp.connectDomains.length === 0 && csp.resourceDomains.length === 0, 'its CSP declares no outside domain');
  check(!/(src|href)\s*=\s*["']?(https?:)?\/\//i.test(read.text) && !/fetch\(|XMLHttpRequest|WebSocket|@import|url\((?!#)/.test(read.text),
        'the document references nothing outside itself');

  const cases = (await mcp('tools/call', { name: 'listCases', arguments: { typology: 'T07_CYCLE' } })).result.structuredContent.cases;
  const caseId = cases[0].caseId;
  const tool = withUi.find((t) => t.name === 'caseGraph');
  const args = { caseId };
  const result = (await mcp('tools/call', { name: 'caseGraph', arguments: args })).result;
  const graph = result.structuredContent;
  check(graph.nodes.length > 3 && graph.edges.length > 3, `caseGraph ${caseId}: ${graph.nodes.length} nodes, ${graph.edges.length} edges`);

  // The host page, served from loopback.
  const hostHtml = readFileSync(path.join(here, 'host.html'));
  web = createServer((req, res) => { res.writeHead(200, { 'Content-Type': 'text/html' }); res.end(hostHtml); });
  const webPort = await freePort();
  await new Promise((r) => web.listen(webPort, '127.0.0.1', r));
  const hostUrl = `http://127.0.0.1:${webPort}/host.html`;

  browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
                                    args: ['--no-sandbox', '--disable-gpu'] });
  const page = await browser.newPage({ viewport: { width: 1200, height: 640 } });
  const requests = [], errors = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') errors.push(`${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push('pageerror: ' + e.message));
  await page.exposeFunction('mcpRequest', (method, params) => mcp(method, params));
  await page.goto(hostUrl);
  const t0 = Date.now();
  await page.evaluate(([html, c, tl, a, r]) => window.hostLoad(html, c, tl, a, r), [read.text, csp, tool, args, result]);
  const view = page.frameLocator('#view');
  await view.locator('[data-node-id]').first().waitFor({ timeout: 10000 });
  const nNodes = await view.locator('g[data-node-id]').count(), nEdges = await view.locator('g[data-edge-id]').count();
  check(nNodes === graph.nodes.length && nEdges === graph.edges.length,
        `the view draws ${nNodes}/${graph.nodes.length} accounts and ${nEdges}/${graph.edges.length} flows (${Date.now() - t0} ms)`);
  for (const n of graph.nodes.filter((x) => x.focus))
    check(await view.locator(`g[data-node-id="${n.id}"]`).count() === 1, `focus account ${n.id} is drawn`);
  check(await view.locator('#timeline rect[data-txn-id]').count() > 0, 'the timeline shows the transactions');

  // Click an evidence flow: its transactions and the finding citing them.
  const ev = graph.edges.find((e) => e.typologies.length) || graph.edges[0];
  await view.locator(`g[data-edge-id="${ev.id}"] path.hit`).click({ force: true });
  const shown = await view.locator('#details tr[data-txn-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-txn-id')));
  check(JSON.stringify(shown) === JSON.stringify(ev.transactions.map((t) => t.txnId)), `clicking flow ${ev.id} lists its transactions ${shown}`);
  const det = await view.locator('#details').innerText();
  check(ev.typologies.every((t) => det.includes(t)), `the details name the findings citing them (${ev.typologies})`);

  // Click a focus account, trace forward from the view through the host.
  const focus = graph.nodes.find((n) => n.focus);
  await view.locator(`g[data-node-id="${focus.id}"]`).click();
  const rowsNode = await view.locator('#details tr[data-txn-id]').count();
  check(rowsNode > 0, `clicking ${focus.id} lists ${rowsNode} transactions`);
  await page.screenshot({ path: path.join(artifacts, 'case-view.png') });
  await view.locator('#trace-forward').click();
  await page.waitForFunction(() => window.hostForwarded.some((f) => f.params?.name === 'traceFunds' && f.result), null, { timeout: 10000 });
  const fwd = await page.evaluate(() => window.hostForwarded.find((f) => f.params?.name === 'traceFunds'));
  check(fwd.params.arguments.accountId === focus.id && fwd.params.arguments.direction === 'forward', 'the view called traceFunds forward from the account');
  const trail = fwd.result.structuredContent;
  await view.locator('#title', { hasText: 'Money trail' }).waitFor({ timeout: 10000 });
  const n2 = await view.locator('g[data-node-id]').count(), e2 = await view.locator('g[data-edge-id]').count();
  check(n2 === trail.nodes.length && e2 === trail.edges.length, `the trail redraws: ${n2} accounts, ${e2} flows`);
  await page.screenshot({ path: path.join(artifacts, 'case-view-trail.png') });
  await view.locator('#back').click();
  check(await view.locator('g[data-node-id]').count() === graph.nodes.length, 'Back returns to the case graph');

  const outside = requests.filter((u) => u !== hostUrl);
  check(outside.length === 0, `no request but the host page (${requests.length} requests${outside.length ? ': ' + outside.join(' ') : ''})`);
  check(errors.length === 0, `no console errors or warnings${errors.length ? ': ' + errors.join(' | ') : ''}`);
  const initialized = await page.evaluate(() => window.hostLog.some((m) => m.method === 'ui/notifications/initialized'));
  check(initialized, 'the view completed the ui/initialize handshake');
  console.log(`screenshots: ${path.join(artifacts, 'case-view.png')}, case-view-trail.png`);
} catch (e) {
  failed++;
  console.log('FAIL ' + (e.stack || e));
  if (serverLog) console.log(serverLog.slice(-2000));
} finally {
  if (browser) await browser.close();
  if (web) web.close();
  server.kill('SIGTERM');
}
console.log(`app: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
