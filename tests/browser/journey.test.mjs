// The client component's journey in a real browser: headless Chromium
// (Debian's /usr/bin/chromium, driven by playwright-core) opens the demo's
// /auth/login/, signs in at the provider, approves (or denies) on the
// consent page and lands on /auth/me/; the page and the host_users row are
// checked for ana (every mapped column) and bruno (no tax-authority data).
//
// Needs: PostgreSQL on 127.0.0.1:5432 (user postgres, trust), psql, the
// debug binary (`cargo build --bin credencial`) and Chromium. Run by .ci/run,
// or by hand: cd tests/browser && npm ci && node --test

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TARGET = path.resolve(ROOT, process.env.CARGO_TARGET_DIR || 'target');
const BINARY = path.join(TARGET, 'debug', 'credencial');
const OUT = path.join(TARGET, 'browser');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const DB = `credencial_browser_${process.pid}`;
const JWT_SECRET = 'browser-test-secret-0123456789-abcdefghijklmnopqrstuvwxyz';
const STEP_MS = 15_000; // any single browser action or navigation
const TEST_MS = 90_000; // any whole test

let server; // the demo process
let serverLog = ''; // its output, kept for failure messages
let base; // http://127.0.0.1:<port>
let browser;

/** Runs psql against `db` with one SQL command; resolves to its stdout. */
function psql(db, sql) {
    return new Promise((resolve, reject) => {
        execFile(
            'psql',
            ['-h', '127.0.0.1', '-p', '5432', '-U', 'postgres', '-d', db, '-v', 'ON_ERROR_STOP=1', '-qAtc', sql],
            { timeout: 20_000, env: { ...process.env, PGCONNECT_TIMEOUT: '10' } },
            (error, stdout, stderr) => (error ? reject(new Error(`psql: ${error.message}\n${stderr}`)) : resolve(stdout)),
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

/** Polls /healthz until it answers 200, the server exits, or the deadline passes. */
async function waitForHealth(deadlineMs) {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
        if (server.exitCode !== null || server.signalCode !== null) {
            throw new Error(`the demo exited (${server.exitCode ?? server.signalCode}) before serving:\n${serverLog}`);
        }
        try {
            const answer = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2_000) });
            if (answer.ok) return;
        } catch {
            // not listening yet
        }
        if (Date.now() > deadline) throw new Error(`no /healthz within ${deadlineMs} ms:\n${serverLog}`);
        await new Promise((r) => setTimeout(r, 250));
    }
}

/** Stops the demo: SIGTERM, then SIGKILL if it is still there after 10 s. */
async function stopServer() {
    if (!server || server.exitCode !== null || server.signalCode !== null) return;
    const exited = once(server, 'exit');
    server.kill('SIGTERM');
    const timer = setTimeout(() => server.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
}

before(
    async () => {
        assert.ok(existsSync(BINARY), `${BINARY} is missing: run \`cargo build --bin credencial\` first`);
        assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install chromium`);
        mkdirSync(OUT, { recursive: true });
        await psql('postgres', `DROP DATABASE IF EXISTS "${DB}" WITH (FORCE)`);

        base = `http://127.0.0.1:${await freePort()}`;
        // The demo's defaults (map, scopes, provider) are what this test checks:
        // nothing from the caller's SERVICE_* settings leaks in.
        const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SERVICE_')));
        Object.assign(env, {
            DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${DB}`,
            SERVICE_BIND: base.slice('http://'.length),
            SERVICE_JWT_SECRET: JWT_SECRET,
        });
        const log = createWriteStream(path.join(OUT, 'server.log'));
        server = spawn(BINARY, ['demo'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
        for (const stream of [server.stdout, server.stderr]) {
            stream.on('data', (chunk) => {
                serverLog = (serverLog + chunk).slice(-20_000);
                log.write(chunk);
            });
        }
        await waitForHealth(60_000);

        browser = await chromium.launch({
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
    },
    { timeout: 120_000 },
);

after(
    async () => {
        await browser?.close().catch((e) => console.error(`closing chromium: ${e}`));
        await stopServer();
        await psql('postgres', `DROP DATABASE IF EXISTS "${DB}" WITH (FORCE)`).catch((e) => console.error(e.message));
    },
    { timeout: 60_000 },
);

/** A fresh context (no cookies) and page with bounded actions. */
async function freshPage() {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    context.setDefaultTimeout(STEP_MS);
    context.setDefaultNavigationTimeout(STEP_MS);
    return { context, page: await context.newPage() };
}

/**
 * /auth/login/ → the provider's login page → the consent page; clicks the
 * consent button `action` (approve or deny) and returns the response of
 * /auth/callback/.
 */
async function throughTheProvider(page, username, password, action) {
    await page.goto(`${base}/auth/login/`);
    assert.match(new URL(page.url()).pathname, /^\/oauth\/authorize\/$/, 'sent to the provider');
    assert.equal(await page.locator('h1').textContent(), 'Entrar');
    await page.fill('input[name="username"]', username);
    await page.fill('input[name="password"]', password);
    await Promise.all([page.waitForURL(/\/oauth\/authorize\//), page.click('button[type="submit"]')]);
    await page.locator('h1', { hasText: 'Autorizar acesso' }).waitFor();
    const scopes = await page.locator('main li').allTextContents();
    assert.ok(scopes.length >= 5, `the consent page lists the scopes: ${scopes}`);
    const [callback] = await Promise.all([
        page.waitForResponse((r) => new URL(r.url()).pathname === '/auth/callback/'),
        page.click(`button[name="action"][value="${action}"]`),
    ]);
    return callback;
}

/** The record page's table as {column: {text, empty}}. */
async function recordOnPage(page) {
    const rows = await page.$$eval('main table tbody tr', (trs) =>
        trs.map((tr) => [
            tr.querySelector('th').textContent.trim(),
            { text: tr.querySelector('td').textContent.trim(), empty: !!tr.querySelector('td .null') },
        ]),
    );
    return Object.fromEntries(rows);
}

/** The host_users row of `username` as JSON (dates as text, profile as a flag). */
async function hostRow(username) {
    const out = await psql(
        DB,
        `SELECT row_to_json(t) FROM (SELECT username::text, cpf::text, email::text, first_name::text,
                last_name::text, birth_date::text, mother_name, city, state::text,
                profile IS NOT NULL AS has_profile
           FROM host_users WHERE username = '${username}') t`,
    );
    assert.ok(out.trim(), `no host_users row for ${username}`);
    return JSON.parse(out.trim());
}

async function logInAndReadRecord(username, password) {
    const { context, page } = await freshPage();
    try {
        const callback = await throughTheProvider(page, username, password, 'approve');
        assert.equal(callback.status(), 303, `the callback redirects: ${await callback.text().catch(() => '')}`);
        await page.waitForURL(`${base}/auth/me/`);
        await page.locator('main table').waitFor();
        assert.equal(await page.locator('h1').textContent(), 'Seu cadastro nesta aplicação');
        const cookies = (await context.cookies()).map((c) => c.name);
        assert.ok(cookies.includes('credencial_host_session'), `host session cookie: ${cookies}`);
        return { context, page, shown: await recordOnPage(page) };
    } catch (e) {
        await page.screenshot({ path: path.join(OUT, `failure-${username}.png`), fullPage: true }).catch(() => {});
        await context.close();
        throw e;
    }
}

test('ana: login, consent, /auth/me/ shows and host_users holds every mapped column', { timeout: TEST_MS }, async () => {
    const { context, page, shown } = await logInAndReadRecord('ana', 'ana-demo-2026');
    try {
        await page.screenshot({ path: path.join(OUT, 'ana-me.png'), fullPage: true });
        const expected = {
            username: '52998224725',
            cpf: '52998224725',
            email: 'ana.souza@demo.credencial.gov.br',
            first_name: 'Ana',
            last_name: 'Beatriz Souza',
            birth_date: '1988-03-14',
            mother_name: 'MARIA DAS GRACAS SOUZA',
            city: 'NATAL',
            state: 'RN',
        };
        for (const [column, value] of Object.entries(expected)) {
            assert.equal(shown[column]?.text, value, `${column} on the page`);
        }
        assert.match(shown.profile?.text ?? '', /formacao_academica/, 'profile holds the whole answer');

        assert.deepEqual(await hostRow('52998224725'), { ...expected, has_profile: true });

        // Sair ends the host session: /auth/me/ sends back to the login.
        await Promise.all([page.waitForURL(/\/auth\/login\/$|\/oauth\/authorize\//), page.click('button:has-text("Sair")')]);
        const cookies = (await context.cookies()).map((c) => c.name);
        assert.ok(!cookies.includes('credencial_host_session'), `host session gone: ${cookies}`);
    } finally {
        await context.close();
    }
});

test('bruno: his row is created without the tax authority columns', { timeout: TEST_MS }, async () => {
    const { context, shown } = await logInAndReadRecord('bruno', 'bruno-demo-2026');
    try {
        assert.equal(shown.username?.text, '12345678909');
        assert.equal(shown.first_name?.text, 'Bruno');
        assert.equal(shown.last_name?.text, 'Carvalho Lima');
        for (const column of ['birth_date', 'mother_name', 'city', 'state']) {
            assert.ok(!shown[column] || shown[column].empty, `${column} is empty on the page: ${JSON.stringify(shown[column])}`);
        }
        const row = await hostRow('12345678909');
        assert.equal(row.first_name, 'Bruno');
        assert.equal(row.last_name, 'Carvalho Lima');
        for (const column of ['birth_date', 'mother_name', 'city', 'state']) {
            assert.equal(row[column], null, `${column} is NULL`);
        }
        assert.equal(row.has_profile, true, 'fulljson keeps the answer, erro included');
        assert.equal(await psql(DB, 'SELECT count(*) FROM host_users').then((s) => s.trim()), '2', 'ana and bruno');
    } finally {
        await context.close();
    }
});

test('denied consent ends on the 403 error page, without a host session', { timeout: TEST_MS }, async () => {
    const { context, page } = await freshPage();
    try {
        const callback = await throughTheProvider(page, 'ana', 'ana-demo-2026', 'deny');
        assert.equal(callback.status(), 403);
        assert.match(page.url(), /\/auth\/callback\/\?.*error=access_denied/);
        await page.locator('h1').waitFor();
        assert.equal(await page.locator('h1').textContent(), 'Acesso negado');
        assert.ok(await page.locator('.message[role="alert"]').isVisible(), 'the reason is shown');
        assert.equal(await page.locator('a.button').getAttribute('href'), '/auth/login/', 'a way to try again');
        const cookies = (await context.cookies()).map((c) => c.name);
        assert.ok(!cookies.includes('credencial_host_session'), `no host session: ${cookies}`);
    } finally {
        await context.close();
    }
});
