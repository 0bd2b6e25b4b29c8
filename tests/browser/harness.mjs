// What every browser test file shares: the demo (the README's `credencial
// demo`, with no DATABASE_URL: its default SQLite file `credencial.db` in a
// fresh working directory, on a free loopback port), headless Chromium (Debian's
// /usr/bin/chromium, driven by playwright-core), and the page check
// (screenshots at 1280 px and 360 px into target/browser/<page>-<width>.png,
// no sideways scrolling at 360 px, an axe-core scan that fails on any
// violation, whatever its impact).
//
// Each test file runs in a process of its own (node --test), so each starts
// its own demo on its own database file.

import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before } from 'node:test';
import { createWriteStream, existsSync, mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import axe from 'axe-core';
import { chromium } from 'playwright-core';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TARGET = path.resolve(ROOT, process.env.CARGO_TARGET_DIR || 'target');
// The debug build, unless CREDENCIAL_BIN names another (the latency
// measurement runs the release build).
const BINARY = process.env.CREDENCIAL_BIN || path.join(TARGET, 'debug', 'credencial');
export const OUT = path.join(TARGET, 'browser');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const STEP_MS = 15_000; // any single browser action or navigation
export const TEST_MS = 90_000; // any whole test
const WIDTHS = [1280, 360]; // desktop, and the narrowest phone we support

/** The working directory of the demo named `db`: its credencial.db lives there. */
function workDir(db) {
    return path.join(OUT, 'run', db);
}

/**
 * Runs one SQL statement with the sqlite3 shell on the demo's database file
 * (beside the running demo: WAL lets it read, a 5 s busy timeout lets it
 * write); resolves to its output, one row per line, columns joined by `|`.
 */
export function sql(db, statement) {
    return new Promise((resolve, reject) => {
        execFile(
            'sqlite3',
            [
                '-batch',
                '-bail',
                '-cmd',
                '.timeout 5000',
                // The access log's own file, as the service attaches it.
                '-cmd',
                `ATTACH DATABASE '${path.join(workDir(db), 'credencial.db-access-log')}' AS access`,
                path.join(workDir(db), 'credencial.db'),
                statement,
            ],
            { timeout: 20_000 },
            (error, stdout, stderr) => (error ? reject(new Error(`sqlite3: ${error.message}\n${stderr}`)) : resolve(stdout)),
        );
    });
}

/** A port that nothing listens on right now, on loopback. */
async function freePort() {
    const probe = createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const { port } = probe.address();
    probe.close();
    await once(probe, 'close');
    return port;
}

/**
 * `credencial demo` as the README runs it (no DATABASE_URL: the SQLite file
 * credencial.db in a fresh working directory named `db`, no database
 * server) on a free port, with the demo's own defaults (nothing from the
 * caller's SERVICE_* or DATABASE_URL settings leaks in) and `env` on top;
 * its output goes to target/browser/<logName>. Resolves, once /healthz
 * answers, to `{ base, db, stop }`: `stop()` ends the demo and removes its
 * directory.
 */
export async function startDemo(db, env, logName) {
    assert.ok(existsSync(BINARY), `${BINARY} is missing: run \`cargo build --bin credencial\` first`);
    mkdirSync(OUT, { recursive: true });
    const cwd = workDir(db);
    rmSync(cwd, { recursive: true, force: true });
    mkdirSync(cwd, { recursive: true });
    const base = `http://127.0.0.1:${await freePort()}`;
    const clean = Object.fromEntries(
        Object.entries(process.env).filter(([k]) => !k.startsWith('SERVICE_') && k !== 'DATABASE_URL'),
    );
    Object.assign(clean, { SERVICE_BIND: base.slice('http://'.length), ...env });
    const log = createWriteStream(path.join(OUT, logName));
    const server = spawn(BINARY, ['demo'], { cwd, env: clean, stdio: ['ignore', 'pipe', 'pipe'] });
    let serverLog = ''; // its output, kept for failure messages
    for (const stream of [server.stdout, server.stderr]) {
        stream.on('data', (chunk) => {
            serverLog = (serverLog + chunk).slice(-20_000);
            log.write(chunk);
        });
    }
    await waitForHealth(server, base, () => serverLog, 60_000);
    const stop = async () => {
        await stopServer(server);
        assert.ok(existsSync(path.join(cwd, 'credencial.db')), 'the demo served from credencial.db');
        rmSync(cwd, { recursive: true, force: true });
    };
    return { base, db, stop };
}

/** The JWT secret every test file's demo signs with (it protects nothing). */
export const JWT_SECRET = 'browser-test-secret-0123456789-abcdefghijklmnopqrstuvwxyz';

/**
 * The demo and Chromium of one test file, started before its tests and
 * stopped after them (`name` names its database and its log,
 * target/browser/server-<name>.log; `env` adds settings). Returns an object
 * whose `demo`, `base` (http://127.0.0.1:<port>) and `browser` are set once
 * they run.
 */
export function useDemo(name, env = {}) {
    const shared = { demo: undefined, base: undefined, browser: undefined };
    before(
        async () => {
            const db = `credencial_browser_${name}_${process.pid}`;
            shared.demo = await startDemo(db, { SERVICE_JWT_SECRET: JWT_SECRET, ...env }, `server-${name}.log`);
            shared.base = shared.demo.base;
            shared.browser = await launchChromium();
        },
        { timeout: 120_000 },
    );
    after(
        async () => {
            await shared.browser?.close().catch((e) => console.error(`closing chromium: ${e}`));
            await shared.demo?.stop();
        },
        { timeout: 60_000 },
    );
    return shared;
}

/**
 * The demo host's login in `page`: /auth/login/ → the provider's login
 * form (as `username`) → the consent page, where it clicks `action`
 * (approve or deny); returns the response of /auth/callback/.
 */
export async function logInToTheHost(page, base, username, password, action = 'approve') {
    await page.goto(`${base}/auth/login/`);
    await page.fill('input[name="username"]', username);
    await page.fill('input[name="password"]', password);
    await Promise.all([page.waitForURL(/\/oauth\/authorize\//), page.click('button[type="submit"]')]);
    await page.locator('h1', { hasText: 'Autorizar acesso' }).waitFor();
    const [callback] = await Promise.all([
        page.waitForResponse((r) => new URL(r.url()).pathname === '/auth/callback/'),
        page.click(`button[name="action"][value="${action}"]`),
    ]);
    return callback;
}

/** Polls /healthz until it answers 200, the server exits, or the deadline passes. */
async function waitForHealth(server, base, serverLog, deadlineMs) {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
        if (server.exitCode !== null || server.signalCode !== null) {
            throw new Error(`the demo exited (${server.exitCode ?? server.signalCode}) before serving:\n${serverLog()}`);
        }
        try {
            const answer = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2_000) });
            if (answer.ok) return;
        } catch {
            // not listening yet
        }
        if (Date.now() > deadline) throw new Error(`no /healthz within ${deadlineMs} ms:\n${serverLog()}`);
        await new Promise((r) => setTimeout(r, 250));
    }
}

/** Stops the demo: SIGTERM, then SIGKILL if it is still there after 10 s. */
async function stopServer(server) {
    if (!server || server.exitCode !== null || server.signalCode !== null) return;
    const exited = once(server, 'exit');
    server.kill('SIGTERM');
    const timer = setTimeout(() => server.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
}

/** Headless Chromium with a new, empty profile. */
export async function launchChromium() {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install chromium`);
    return chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        timeout: 30_000,
        // Playwright gives every launch a new, empty user-data-dir of its own.
        args: [
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--disable-quic',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
        ],
    });
}

const checked = new Set(); // page names already photographed and scanned

/**
 * The list tables' cells (the panel's, the access report's) narrower than
 * one of their words: each cell's text, codes and addresses aside (those
 * may wrap anywhere), is measured word by word (a hyphen is a place to
 * break): a cell narrower than its longest word breaks it mid-word.
 * Resolves to their texts.
 */
async function cellsNarrowerThanAWord(page) {
    return page.evaluate(() => {
        const cells = [...document.querySelectorAll('table.audit td, table.accounts td, table.accesses td')];
        const narrow = [];
        for (const cell of cells) {
            const words = cell.cloneNode(true);
            words.querySelectorAll('code, li, a[href^="http"]').forEach((n) => n.remove());
            const probe = document.createElement('span');
            probe.style.cssText = 'position:absolute;visibility:hidden;white-space:nowrap;font:inherit';
            cell.appendChild(probe);
            const longest = Math.max(
                0,
                ...words.textContent.split(/\s+|(?<=-)/).filter(Boolean).map((w) => {
                    probe.textContent = w;
                    return probe.getBoundingClientRect().width;
                }),
            );
            probe.remove();
            const style = getComputedStyle(cell);
            const room = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
            if (longest > room + 0.5) narrow.push(cell.textContent.trim().slice(0, 40));
        }
        return narrow;
    });
}

/**
 * Photographs the page at each of WIDTHS (full page) as <name>-<width>.png,
 * asserts that it does not scroll sideways nor breaks a word in a table
 * cell, and runs axe-core on it: fails on any violation, whatever its
 * impact. Once per name.
 */
export async function checkPage(page, name) {
    if (checked.has(name)) return;
    checked.add(name);
    const before = page.viewportSize();
    try {
        for (const width of WIDTHS) {
            await page.setViewportSize({ width, height: width < 600 ? 740 : 900 });
            await page.screenshot({ path: path.join(OUT, `${name}-${width}.png`), fullPage: true });
            const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
            assert.ok(overflow <= 0, `${name} scrolls sideways by ${overflow} px at ${width} px`);
            assert.deepEqual(await cellsNarrowerThanAWord(page), [], `${name} breaks words in its tables at ${width} px`);
            // Evaluated by the driver, not as a page script: the pages' CSP
            // (default-src 'none') stays as it is.
            await page.evaluate(axe.source);
            const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
            assert.ok(result.passes.length > 0, `axe checked nothing on ${name}`);
            const bad = result.violations;
            assert.deepEqual(
                bad.map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
                [],
                `accessibility of ${name} at ${width} px`,
            );
        }
    } finally {
        if (before) await page.setViewportSize(before);
    }
}

/** A fresh context of `browser` (no cookies) and page with bounded actions. */
export async function freshPage(browser) {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    context.setDefaultTimeout(STEP_MS);
    context.setDefaultNavigationTimeout(STEP_MS);
    return { context, page: await context.newPage() };
}

/**
 * Gives `page` (of `context`) Chromium's virtual authenticator: a platform
 * authenticator that keeps discoverable credentials and verifies the user
 * (CDP `WebAuthn.addVirtualAuthenticator`). Resolves to `{ cdp,
 * authenticatorId }`.
 */
export async function addVirtualAuthenticator(context, page) {
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
            protocol: 'ctap2',
            transport: 'internal',
            hasResidentKey: true,
            hasUserVerification: true,
            isUserVerified: true,
            automaticPresenceSimulation: true,
        },
    });
    return { cdp, authenticatorId };
}
