// The client component's journey in a real browser: headless Chromium
// (Debian's /usr/bin/chromium, driven by playwright-core) opens the demo's
// /auth/login/, signs in at the provider, approves (or denies) on the
// consent page and lands on /auth/me/; the page and the host_users row are
// checked for ana (every mapped column) and bruno (no tax-authority data).
// Every kind of page it reaches (login, login with an error, consent,
// record, logout, the provider's and the client's error pages) is
// photographed at 1280 px and at 360 px into target/browser/<page>-<width>.png,
// must not scroll sideways at 360 px, and is scanned with axe-core: any
// violation of impact "serious" or "critical" fails the test.
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
import axe from 'axe-core';
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
const WIDTHS = [1280, 360]; // desktop, and the narrowest phone we support

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

const checked = new Set(); // page names already photographed and scanned

/**
 * Photographs the page at each of WIDTHS (full page) as <name>-<width>.png,
 * asserts that it does not scroll sideways, and runs axe-core on it: fails
 * on any violation of impact "serious" or "critical". Once per name.
 */
async function checkPage(page, name) {
    if (checked.has(name)) return;
    checked.add(name);
    const before = page.viewportSize();
    try {
        for (const width of WIDTHS) {
            await page.setViewportSize({ width, height: width < 600 ? 740 : 900 });
            await page.screenshot({ path: path.join(OUT, `${name}-${width}.png`), fullPage: true });
            const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
            assert.ok(overflow <= 0, `${name} scrolls sideways by ${overflow} px at ${width} px`);
            // Evaluated by the driver, not as a page script: the pages' CSP
            // (default-src 'none') stays as it is.
            await page.evaluate(axe.source);
            const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
            assert.ok(result.passes.length > 0, `axe checked nothing on ${name}`);
            const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
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
    await checkPage(page, 'oauth-login');
    await page.fill('input[name="username"]', username);
    await page.fill('input[name="password"]', password);
    await Promise.all([page.waitForURL(/\/oauth\/authorize\//), page.click('button[type="submit"]')]);
    await page.locator('h1', { hasText: 'Autorizar acesso' }).waitFor();
    const scopes = await page.locator('main li').allTextContents();
    assert.ok(scopes.length >= 5, `the consent page lists the scopes: ${scopes}`);
    await checkPage(page, 'oauth-consent');
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
        await checkPage(page, 'auth-me');
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

        // The logout page (GET /auth/logout/) offers the same button.
        const logoutPage = await context.newPage();
        await logoutPage.goto(`${base}/auth/logout/`);
        assert.equal(await logoutPage.locator('h1').textContent(), 'Sair desta aplicação');
        await checkPage(logoutPage, 'auth-logout');
        await logoutPage.close();

        // Sair ends the host session and lands on the page after leaving
        // (not on the login, which the remembered consent would turn into
        // a new session at once).
        await Promise.all([page.waitForURL(`${base}/auth/logout/`), page.click('button:has-text("Sair")')]);
        assert.equal(await page.locator('h1').textContent(), 'Você saiu desta aplicação');
        await checkPage(page, 'auth-logged-out');
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

test('ana again: her consent is remembered, no consent page the second time', { timeout: TEST_MS }, async () => {
    const { context, page } = await freshPage();
    try {
        await page.goto(`${base}/auth/login/`);
        assert.equal(await page.locator('h1').textContent(), 'Entrar');
        await page.fill('input[name="username"]', 'ana');
        await page.fill('input[name="password"]', 'ana-demo-2026');
        await Promise.all([page.waitForURL(`${base}/auth/me/`), page.click('button[type="submit"]')]);
        await page.locator('main table').waitFor();
        const shown = await recordOnPage(page);
        assert.equal(shown.username?.text, '52998224725');
        const reads = await psql(DB, "SELECT count(*) FROM access_log WHERE client_id = 'demo-host'");
        assert.ok(Number(reads.trim()) >= 2, `each login's profile read is in the access report: ${reads}`);
    } finally {
        await context.close();
    }
});

test('denied consent ends on the 403 error page, without a host session', { timeout: TEST_MS }, async () => {
    // Ana's consent from the tests above is remembered; withdraw it (as her
    // account's page of authorized applications does) so that the provider
    // asks again.
    await psql(DB, "DELETE FROM oauth_grants WHERE client_id = 'demo-host'");
    const { context, page } = await freshPage();
    try {
        const callback = await throughTheProvider(page, 'ana', 'ana-demo-2026', 'deny');
        assert.equal(callback.status(), 403);
        assert.match(page.url(), /\/auth\/callback\/\?.*error=access_denied/);
        await page.locator('h1').waitFor();
        assert.equal(await page.locator('h1').textContent(), 'Acesso negado');
        assert.ok(await page.locator('.message[role="alert"]').isVisible(), 'the reason is shown');
        assert.equal(await page.locator('a.button').getAttribute('href'), '/auth/login/', 'a way to try again');
        await checkPage(page, 'auth-error-denied');
        const cookies = (await context.cookies()).map((c) => c.name);
        assert.ok(!cookies.includes('credencial_host_session'), `no host session: ${cookies}`);
    } finally {
        await context.close();
    }
});

test('the other pages: a wrong password, an unknown client, a callback nobody started', { timeout: TEST_MS }, async () => {
    const { context, page } = await freshPage();
    try {
        await page.goto(`${base}/auth/login/`);
        await page.fill('input[name="username"]', 'ana');
        await page.fill('input[name="password"]', 'not-her-password');
        await Promise.all([page.waitForURL(/\/oauth\/authorize\//), page.click('button[type="submit"]')]);
        await page.locator('.message[role="alert"]').waitFor();
        assert.equal(await page.locator('.message[role="alert"]').textContent(), 'Usuário ou senha inválidos.');
        assert.equal(await page.inputValue('input[name="username"]'), 'ana', 'the username is kept');
        await checkPage(page, 'oauth-login-error');

        const unknown = new URLSearchParams({
            response_type: 'code',
            client_id: 'nobody-registered-this',
            redirect_uri: 'https://evil.example/cb',
            scope: 'cpf',
            state: 'x',
        });
        const refused = await page.goto(`${base}/oauth/authorize/?${unknown}`);
        assert.equal(refused.status(), 400);
        assert.equal(await page.locator('h1').textContent(), 'Não foi possível continuar');
        assert.ok(await page.locator('.message[role="alert"]').isVisible(), 'the reason is shown');
        await checkPage(page, 'oauth-error');
        // The first Tab reaches the skip link, shown on screen, which leads to <main>.
        await page.keyboard.press('Tab');
        const skip = page.locator('a.skip');
        assert.equal(await skip.evaluate((a) => a === document.activeElement), true, 'the skip link comes first');
        const box = await skip.boundingBox();
        assert.ok(box && box.y >= 0, `the focused skip link is on screen: ${JSON.stringify(box)}`);
        await page.screenshot({ path: path.join(OUT, 'skip-link-focused-1100.png') });
        await page.keyboard.press('Enter');
        assert.equal(await page.evaluate(() => document.activeElement?.id), 'conteudo', 'focus moves to the content');

        const stray = await page.goto(`${base}/auth/callback/?code=abc&state=never-started`);
        assert.equal(stray.status(), 400);
        assert.equal(await page.locator('h1').textContent(), 'Não foi possível concluir a entrada');
        await checkPage(page, 'auth-error-state');
    } finally {
        await context.close();
    }
});
