// The client component's options in a browser: a host that does not
// create users (SERVICE_CREATE_USERS=false) turns away a person it does
// not know with a page that says so, and keeps no host session. The page
// is photographed and scanned like the journey's.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkPage, freshPage, logInToTheHost, TEST_MS, useDemo } from './harness.mjs';

const shared = useDemo('host_options', { SERVICE_CREATE_USERS: 'false' });

test('a host that does not create users turns away a person it does not know', { timeout: TEST_MS }, async () => {
    const { context, page } = await freshPage(shared.browser);
    try {
        const callback = await logInToTheHost(page, shared.base, 'ana', 'ana-demo-2026');
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
