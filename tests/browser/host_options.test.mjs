// The client component's options in a browser: a host that does not
// create users (SERVICE_CREATE_USERS=false) turns away a person it does
// not know with a page that says so, and keeps no host session. The page
// is photographed and scanned like the journey's.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkPage, freshPage, launchChromium, startDemo, TEST_MS } from './harness.mjs';

const DB = `credencial_host_options_${process.pid}`;

let demo; // the demo: { base, db, stop }
let browser;

before(
    async () => {
        demo = await startDemo(DB, { SERVICE_CREATE_USERS: 'false' }, 'server-host-options.log');
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

test('a host that does not create users turns away a person it does not know', { timeout: TEST_MS }, async () => {
    const { context, page } = await freshPage(browser);
    try {
        await page.goto(`${demo.base}/auth/login/`);
        await page.fill('input[name="username"]', 'ana');
        await page.fill('input[name="password"]', 'ana-demo-2026');
        await Promise.all([page.waitForURL(/\/oauth\/authorize\//), page.click('button[type="submit"]')]);
        await page.locator('h1', { hasText: 'Autorizar acesso' }).waitFor();
        const [callback] = await Promise.all([
            page.waitForResponse((r) => new URL(r.url()).pathname === '/auth/callback/'),
            page.click('button[name="action"][value="approve"]'),
        ]);
        assert.equal(callback.status(), 403);
        await page.locator('h1').waitFor();
        assert.equal(await page.locator('h1').textContent(), 'Sem cadastro nesta aplicação');
        assert.ok(await page.locator('.message[role="alert"]').isVisible(), 'the reason is shown');
        assert.equal(await page.locator('a.button', { hasText: 'Tentar novamente' }).count(), 0, 'trying again cannot help');
        await checkPage(page, 'auth-error-sem-cadastro');
        const cookies = (await context.cookies()).map((c) => c.name);
        assert.ok(!cookies.includes('credencial_host_session'), `no host session: ${cookies}`);
    } finally {
        await context.close();
    }
});
