// The person's open sessions (/conta/sessoes/) in a real browser: headless
// Chromium (Debian's /usr/bin/chromium, driven by playwright-core), two
// browser contexts standing for two devices of ana.
// - ana signs in at /conta/entrar/ on both; the first device (A) lists two
//   sessions, its own marked "esta sessão", the other with an *Encerrar*
//   button.
// - A ends the other session: the notice says so, and the second device
//   (B) is sent to the login form on its next account page.
// - B signs in again; A ends every other session at once ("Sessões
//   encerradas: 1."); B is at the login form again.
// - A leaves at /conta/sair/ (sessions are kept on the server: leaving ends
//   A's as well); A's next account page is the login form.
// The list, and the list with the notice, are photographed at 1280 px and
// at 360 px into target/browser/<page>-<width>.png, must not scroll sideways
// at 360 px, and are scanned with axe-core (see harness.mjs).
//
// Needs: the debug binary (`cargo build --bin credencial`) and Chromium;
// no database server (the demo serves from its default SQLite file). Run by
// hand: cd tests/browser && npm ci && node --test sessions.test.mjs

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { checkPage, freshPage as fresh, launchChromium, OUT, startDemo, TEST_MS } from './harness.mjs';

const DB = `credencial_browser_sessions_${process.pid}`;
const JWT_SECRET = 'browser-test-secret-0123456789-abcdefghijklmnopqrstuvwxyz';
// The second device says it is a phone, so that the list tells the two apart
// (headless Chromium on this machine reads as "Chrome no Linux").
const PHONE_UA =
    'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Mobile Safari/537.36';

let demo; // the demo: { base, db, stop }
let base; // http://127.0.0.1:<port>
let browser;

before(
    async () => {
        demo = await startDemo(DB, { SERVICE_JWT_SECRET: JWT_SECRET }, 'server-sessions.log');
        base = demo.base;
        browser = await launchChromium();
    },
    { timeout: 120_000 },
);

after(
    async () => {
        await browser?.close().catch((e) => console.error(`closing chromium: ${e}`));
        await demo?.stop();
    },
    { timeout: 60_000 },
);

/** A fresh context (no cookies) and page with bounded actions. */
const freshPage = () => fresh(browser);

/** Submits the form holding `button` and waits for the page it leads to. */
async function submit(page, button = 'main form button[type="submit"]') {
    await Promise.all([page.waitForNavigation(), page.click(button)]);
}

/** Signs ana in at the account's login form; lands on /conta/. */
async function logInAsAna(page) {
    await page.goto(`${base}/conta/entrar/`);
    await page.fill('input[name="username"]', 'ana');
    await page.fill('input[name="password"]', 'ana-demo-2026');
    await submit(page);
    assert.equal(page.url(), `${base}/conta/`, 'signed in, on the account page');
}

/** Opens /conta/ and asserts that the browser is sent to the login form. */
async function assertSignedOut(page, who) {
    await page.goto(`${base}/conta/`);
    const url = new URL(page.url());
    assert.equal(url.pathname, '/conta/entrar/', `${who} is at the login form: ${page.url()}`);
    assert.equal(url.searchParams.get('next'), '/conta/', `${who} comes back to /conta/ after signing in`);
    assert.equal(await page.locator('input[name="password"]').count(), 1, `${who} sees the password field`);
}

/** The sessions listed on the page: [{ device, current, endable }]. */
async function listed(page) {
    return page.$$eval('main ul.apps > li', (items) =>
        items.map((li) => ({
            device: li.querySelector('h2').firstChild.textContent.trim(),
            current: li.querySelector('h2 .badge')?.textContent.trim() === 'esta sessão',
            endable: !!li.querySelector('form button'),
        })),
    );
}

test('ana ends a session of another device, then all others, then leaves', { timeout: TEST_MS }, async () => {
    const a = await freshPage();
    const b = await freshPage();
    await b.context.setExtraHTTPHeaders({ 'User-Agent': PHONE_UA });
    try {
        await logInAsAna(a.page);
        await logInAsAna(b.page);

        // A's list: both devices, A's own marked, the other one endable.
        await a.page.goto(`${base}/conta/sessoes/`);
        assert.equal(await a.page.locator('h1').textContent(), 'Sessões abertas');
        const nav = a.page.locator('nav.account a[aria-current="page"]');
        assert.equal((await nav.textContent()).trim(), 'Sessões', 'the navigation marks this page');
        const sessions = await listed(a.page);
        assert.equal(sessions.length, 2, `two sessions: ${JSON.stringify(sessions)}`);
        assert.equal(sessions.filter((s) => s.current).length, 1, `one is this one: ${JSON.stringify(sessions)}`);
        assert.equal(await a.page.locator('main .badge').count(), 1, 'one badge');
        const mine = sessions.find((s) => s.current);
        const other = sessions.find((s) => !s.current);
        assert.equal(mine.device, 'Chrome no Linux', 'this device, by its browser and system');
        assert.ok(!mine.endable, 'this session is left with Sair, not Encerrar');
        assert.equal(other.device, 'Chrome no Android', 'the phone, by its browser and system');
        assert.ok(other.endable, 'the other session has an Encerrar button');
        const end = a.page.locator('main ul.apps > li button', { hasText: 'Encerrar' });
        assert.equal(await end.count(), 1);
        assert.match(await end.getAttribute('aria-label'), /^Encerrar a sessão de Chrome no Android iniciada em /);
        assert.equal(await a.page.locator('button', { hasText: 'Encerrar todas as outras sessões' }).count(), 1);
        await checkPage(a.page, 'conta-sessoes');

        // A ends B's session; B must sign in again.
        await submit(a.page, 'main ul.apps > li button:has-text("Encerrar")');
        assert.equal(a.page.url(), `${base}/conta/sessoes/?encerrada=1`);
        assert.match(await a.page.locator('.notice[role="status"]').textContent(), /^A sessão foi encerrada\./);
        assert.deepEqual(await listed(a.page), [{ device: 'Chrome no Linux', current: true, endable: false }]);
        assert.equal(
            await a.page.locator('button', { hasText: 'Encerrar todas as outras sessões' }).count(),
            0,
            'nothing else to end',
        );
        await assertSignedOut(b.page, 'the phone');

        // B again; A ends every other session at once.
        await logInAsAna(b.page);
        await a.page.goto(`${base}/conta/sessoes/`);
        assert.equal((await listed(a.page)).length, 2, 'the phone is back in the list');
        await submit(a.page, 'button:has-text("Encerrar todas as outras sessões")');
        assert.equal(a.page.url(), `${base}/conta/sessoes/?encerradas=1`);
        assert.match(await a.page.locator('.notice[role="status"]').textContent(), /^Sessões encerradas: 1\./);
        assert.equal((await listed(a.page)).length, 1, 'only this session is left');
        await checkPage(a.page, 'conta-sessoes-encerradas');
        await assertSignedOut(b.page, 'the phone');

        // A leaves: the server ends its session too.
        await a.page.goto(`${base}/conta/sair/`);
        await submit(a.page);
        assert.equal(new URL(a.page.url()).pathname, '/conta/entrar/', 'after Sair, the login form');
        await assertSignedOut(a.page, 'the computer');
    } catch (e) {
        await a.page.screenshot({ path: path.join(OUT, 'failure-sessoes-a.png'), fullPage: true }).catch(() => {});
        await b.page.screenshot({ path: path.join(OUT, 'failure-sessoes-b.png'), fullPage: true }).catch(() => {});
        throw e;
    } finally {
        await a.context.close();
        await b.context.close();
    }
});
