// Application passwords (issue 43) in a real browser: ana turns on an
// authenticator app (the code computed here from the page's key, RFC 6238),
// then at /conta/seguranca/ → "Senhas de aplicativo" names one and confirms
// her password; the page shows it once with how a SUAP client uses it.
// A pair from /api/token/pair/ with it (and no code) answers 200, while her
// password alone answers 401 second_factor_required. The list shows it with
// its last use; "Revogar" asks first (the confirmation page), and after
// "Revogar" the same application password buys nothing.
// The security page with the list, the page showing the new password and
// the confirmation are photographed at 1280 px and at 360 px into
// target/browser/<page>-<width>.png, must not scroll sideways at 360 px,
// and are scanned with axe-core (see harness.mjs).
//
// Needs: the debug binary (`cargo build --bin credencial`) and Chromium.
// Run by hand: cd tests/browser && npm ci && node --test app_passwords.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import path from 'node:path';
import { checkPage, freshPage, OUT, TEST_MS, useDemo } from './harness.mjs';

const shared = useDemo('app_passwords');

/** The bytes of RFC 4648 base32 `text` (no padding; spaces ignored). */
function base32Decode(text) {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
    const bytes = [];
    let bits = 0;
    let value = 0;
    for (const c of text.replace(/\s+/g, '').toUpperCase()) {
        value = (value << 5) | alphabet.indexOf(c);
        bits += 5;
        if (bits >= 8) {
            bits -= 8;
            bytes.push((value >>> bits) & 0xff);
        }
    }
    return Buffer.from(bytes);
}

/** The 6-digit code of `key` now (RFC 6238: HMAC-SHA1, 30-second steps). */
function totp(key) {
    const counter = Buffer.alloc(8);
    counter.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 30_000)));
    const mac = createHmac('sha1', key).update(counter).digest();
    const offset = mac[mac.length - 1] & 0x0f;
    return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

/** Submits the form holding `button` and waits for the page it leads to. */
async function submit(page, button) {
    await Promise.all([page.waitForNavigation(), page.click(button)]);
}

/** `POST /api/token/pair/` with `password`: status and body. */
async function pair(password) {
    const answer = await fetch(`${shared.base}/api/token/pair/`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ username: 'ana', password }),
    });
    return { status: answer.status, body: await answer.json() };
}

test('ana makes an application password for a SUAP client, uses it, and revokes it', { timeout: TEST_MS }, async () => {
    const { context, page } = await freshPage(shared.browser);
    try {
        const base = shared.base;
        await page.goto(`${base}/conta/entrar/`);
        await page.fill('input[name="username"]', 'ana');
        await page.fill('input[name="password"]', 'ana-demo-2026');
        await submit(page, 'main form button[type="submit"]');
        await page.goto(`${base}/conta/seguranca/`);

        // An authenticator app first: the account then has a second factor.
        await page.getByLabel('Sua senha, para confirmar').fill('ana-demo-2026');
        await submit(page, 'button:has-text("Configurar o aplicativo autenticador")');
        const key = base32Decode((await page.locator('main code.secret').textContent()).trim());
        await page.getByLabel('Código do aplicativo').fill(totp(key));
        await submit(page, 'main form button:has-text("Ativar")');
        assert.equal((await pair('ana-demo-2026')).body.code, 'second_factor_required', 'the password alone');

        // The section, before any application password.
        await page.goto(`${base}/conta/seguranca/`);
        const section = page.locator('section[aria-labelledby="senhas-app"]');
        assert.equal(await section.locator('h2').textContent(), 'Senhas de aplicativo');
        assert.match(await section.textContent(), /Nenhuma senha de aplicativo criada/);

        // Made: shown once, with how a SUAP client uses it.
        await page.getByLabel('Nome da senha').fill('Cliente SUAP do notebook');
        await page.getByLabel('Sua senha, para criar a senha de aplicativo').fill('ana-demo-2026');
        await submit(page, 'button:has-text("Criar senha de aplicativo")');
        assert.match(await page.locator('.notice[role="status"]').textContent(), /^Senha de aplicativo criada\./);
        const secret = (await page.locator('main code.api-token').textContent()).trim();
        assert.match(secret, /^credapp-([a-z]{5}-){5}[a-z]{5}$/, `the shape: ${secret}`);
        assert.match(await section.textContent(), /\/api\/token\/pair\//, 'says how a SUAP client uses it');
        await checkPage(page, 'conta-seguranca-senha-app-criada');

        // A SUAP client's login: no code needed.
        const bought = await pair(secret);
        assert.equal(bought.status, 200, JSON.stringify(bought.body));
        assert.ok(bought.body.access && bought.body.refresh);

        // Listed with its last use; never shown again.
        await page.goto(`${base}/conta/seguranca/`);
        assert.equal(await page.locator('main code.api-token').count(), 0, 'shown once');
        const row = section.locator('ul.passkeys > li');
        assert.equal(await row.count(), 1);
        assert.match(await row.textContent(), /Cliente SUAP do notebook/);
        assert.doesNotMatch(await row.textContent(), /Último uso: nunca/, 'its use is shown');
        await checkPage(page, 'conta-seguranca-senhas-app');

        // Revoking asks first.
        await submit(page, 'button:has-text("Revogar a senha «Cliente SUAP do notebook»")');
        assert.equal(await page.locator('h1').textContent(), 'Revogar a senha de aplicativo «Cliente SUAP do notebook»?');
        await checkPage(page, 'conta-seguranca-revogar-senha-app');
        assert.equal((await pair(secret)).status, 200, 'nothing revoked by the question');
        await submit(page, 'main form button:has-text("Revogar")');
        assert.match(await page.locator('.notice[role="status"]').textContent(), /^Senha de aplicativo revogada\./);
        assert.match(await section.textContent(), /Nenhuma senha de aplicativo criada/);
        const refused = await pair(secret);
        assert.equal(refused.status, 401, JSON.stringify(refused.body));
        const renewed = await fetch(`${base}/api/token/refresh/`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ refresh: bought.body.refresh }),
        });
        assert.equal(renewed.status, 401, 'its refresh token ends with it');
    } catch (e) {
        await page.screenshot({ path: path.join(OUT, 'failure-senha-app.png'), fullPage: true }).catch(() => {});
        throw e;
    } finally {
        await context.close();
    }
});
