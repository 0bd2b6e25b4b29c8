// Back-channel logout in a browser: ana signs in to the demo host
// (/auth/login/ → the provider → /auth/me/), then leaves the provider from
// Minha conta; the provider tells the host, and the host's next page sends
// her back to its login. The page she lands on is photographed and scanned.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkPage, freshPage, logInToTheHost, TEST_MS, useDemo } from './harness.mjs';

const shared = useDemo('backchannel');

test('leaving the provider from Minha conta ends the demo host session', { timeout: TEST_MS }, async () => {
    const { context, page } = await freshPage(shared.browser);
    try {
        const callback = await logInToTheHost(page, shared.base, 'ana', 'ana-demo-2026');
        assert.equal(callback.status(), 303);
        await page.waitForURL(/\/auth\/me\//);

        await page.goto(`${shared.base}/conta/`);
        await Promise.all([page.waitForURL(/\/conta\/sair\//), page.click('p.person a:has-text("Sair")')]);
        await Promise.all([page.waitForURL(/\/conta\/entrar\//), page.click('button:has-text("Sair")')]);

        // The provider posts the logout token within a second or so.
        let ended = false;
        for (let i = 0; i < 50 && !ended; i += 1) {
            await page.goto(`${shared.base}/auth/me/`);
            ended = !new URL(page.url()).pathname.startsWith('/auth/me/');
            if (!ended) await page.waitForTimeout(200);
        }
        assert.ok(ended, 'the host session ended after the logout at the provider');
        assert.match(new URL(page.url()).pathname, /^\/oauth\/authorize\/$/, 'back at the provider login');
        const cookies = (await context.cookies()).map((c) => c.name);
        assert.ok(!cookies.includes('credencial_host_session'), `the host cookie is gone: ${cookies}`);
        await checkPage(page, 'host-after-backchannel-logout');
    } finally {
        await context.close();
    }
});
