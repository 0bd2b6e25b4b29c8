// Passkeys in a real browser: headless Chromium with its virtual
// authenticator (CDP `WebAuthn.addVirtualAuthenticator`: a platform
// authenticator that keeps discoverable credentials and verifies the user).
// The pages are opened at http://localhost:<port>, the demo's passkey
// origin (WebAuthn takes no IP address).
// - ana signs in with her password, opens /conta/seguranca/, names a
//   passkey, confirms her password and creates it: the page lists it and,
//   as her first factor, shows her 10 recovery codes once.
// - She logs out; "Entrar com chave de acesso" on the login form logs her
//   in with the passkey alone, no username typed (a discoverable
//   credential).
// - On a second device that holds a copy of the passkey (a synced one),
//   her password now leads to the second step, which offers the passkey:
//   it takes her to /conta/.
// - She removes the passkey (password asked again); on a third device the
//   copy no longer opens the account: "não foi reconhecida".
// Every new page is photographed at 1280 and 360 px and scanned with axe.
//
// Needs: the debug binary (`cargo build --bin credencial`) and Chromium.
// Run by hand: cd tests/browser && npm ci && node --test passkeys.test.mjs

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { addVirtualAuthenticator, checkPage, freshPage as fresh, launchChromium, startDemo, TEST_MS } from './harness.mjs';

const DB = `credencial_browser_passkeys_${process.pid}`;
const JWT_SECRET = 'browser-test-secret-0123456789-abcdefghijklmnopqrstuvwxyz';

let demo; // the demo: { base, db, stop }
let base; // http://localhost:<port>: the passkeys' origin
let browser;

before(
    async () => {
        demo = await startDemo(DB, { SERVICE_JWT_SECRET: JWT_SECRET }, 'server-passkeys.log');
        base = demo.base.replace('127.0.0.1', 'localhost');
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

/** A fresh context and page with a virtual authenticator of its own. */
async function device() {
    const { context, page } = await fresh(browser);
    const { cdp, authenticatorId } = await addVirtualAuthenticator(context, page);
    const credentials = async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials;
    // A copy counts on from far ahead: the service refuses a signature
    // counter that goes back (a cloned authenticator), as synced copies
    // that count would otherwise look.
    const copy = async (credential) => {
        copies += 1000;
        await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: { ...credential, signCount: copies } });
    };
    return { context, page, credentials, copy };
}

/** Clicks `button` and waits for the page it leads to. */
async function submit(page, button) {
    await Promise.all([page.waitForNavigation(), page.click(button)]);
}

/** The page's alert as text, or '' without one. */
async function alertText(page) {
    const alert = page.locator('main .message[role="alert"]:visible');
    return (await alert.count()) ? (await alert.first().textContent()).trim() : '';
}

async function passwordAsAna(page, next = '/conta/') {
    await page.goto(`${base}/conta/entrar/?next=${encodeURIComponent(next)}`);
    await page.fill('input[name="username"]', 'ana');
    await page.fill('input[name="password"]', 'ana-demo-2026');
    await submit(page, 'main form button:has-text("Entrar")');
}

let saved; // ana's passkey, as the first authenticator holds it
let copies = 0; // the signature counter of the last copy

test('ana registers a passkey and logs in with it alone', { timeout: TEST_MS }, async () => {
    const { context, page, credentials } = await device();
    try {
        await passwordAsAna(page);
        assert.equal(page.url(), `${base}/conta/`);
        await page.goto(`${base}/conta/seguranca/`);
        assert.equal(await page.locator('#chaves').textContent(), 'Chaves de acesso');
        assert.match(await page.locator('main').textContent(), /Nenhuma chave de acesso cadastrada/);
        await checkPage(page, 'conta-seguranca-chaves');

        // A wrong password starts nothing.
        await page.getByLabel('Nome da chave').fill('Notebook');
        await page.getByLabel('Sua senha, para cadastrar a chave').fill('not-her-password');
        await submit(page, 'button:has-text("Cadastrar chave de acesso")');
        assert.match(await alertText(page), /senha não confere/);
        assert.equal(await page.locator('#chave-usar').count(), 0, 'no ceremony after a wrong password');

        await page.getByLabel('Nome da chave').fill('Notebook');
        await page.getByLabel('Sua senha, para cadastrar a chave').fill('ana-demo-2026');
        await submit(page, 'button:has-text("Cadastrar chave de acesso")');
        assert.equal(await page.locator('h1').textContent(), 'Cadastrar chave de acesso');
        await checkPage(page, 'conta-chave-cadastro');
        await submit(page, '#chave-usar');
        assert.equal(new URL(page.url()).pathname, '/conta/seguranca/chave/');
        assert.equal(await alertText(page), '', 'the passkey was accepted');
        assert.match(await page.locator('.notice[role="status"]').textContent(), /^Chave de acesso cadastrada\./);
        assert.match(await page.locator('ul.passkeys').textContent(), /Notebook[\s\S]*Último uso: nunca/);
        const codes = await page.locator('main ul.codes li code').allTextContents();
        assert.equal(codes.length, 10, 'the first factor comes with ten recovery codes');
        await checkPage(page, 'conta-seguranca-chave-cadastrada');
        const held = await credentials();
        assert.equal(held.length, 1, 'the authenticator holds one credential');
        assert.equal(held[0].isResidentCredential, true, 'a discoverable credential');
        saved = held[0];

        // Out, and back in with the passkey alone.
        await page.goto(`${base}/conta/sair/`);
        await submit(page, 'main form button[type="submit"]');
        assert.equal(new URL(page.url()).pathname, '/conta/entrar/');
        await checkPage(page, 'conta-entrar-com-chave');
        await submit(page, 'button:has-text("Entrar com chave de acesso")');
        assert.equal(await page.locator('h1').textContent(), 'Entrar com chave de acesso');
        await checkPage(page, 'conta-entrar-chave');
        await submit(page, '#chave-usar');
        assert.equal(page.url(), `${base}/conta/`, 'the passkey alone opened the account');
        await page.goto(`${base}/conta/seguranca/`);
        assert.doesNotMatch(await page.locator('ul.passkeys').textContent(), /Último uso: nunca/, 'last use shown');
        saved = (await credentials())[0];
    } finally {
        await context.close();
    }
});

test('a synced copy of the passkey is the second factor after the password', { timeout: TEST_MS }, async () => {
    assert.ok(saved, 'the first test registered a passkey');
    const { context, page, copy } = await device();
    try {
        await copy(saved);
        await passwordAsAna(page);
        assert.equal(new URL(page.url()).pathname, '/conta/entrar/verificar/', 'a factor is asked after the password');
        await checkPage(page, 'conta-verificar-com-chave');
        await submit(page, 'button:has-text("Usar uma chave de acesso")');
        assert.equal(await page.locator('h1').textContent(), 'Verificação em duas etapas');
        await submit(page, '#chave-usar');
        assert.equal(page.url(), `${base}/conta/`, 'password and passkey opened the account');
    } finally {
        await context.close();
    }
});

test('a removed passkey opens nothing', { timeout: TEST_MS }, async () => {
    assert.ok(saved, 'the first test registered a passkey');
    const first = await device();
    try {
        await first.copy(saved);
        await first.page.goto(`${base}/conta/entrar/`);
        await submit(first.page, 'button:has-text("Entrar com chave de acesso")');
        await submit(first.page, '#chave-usar');
        assert.equal(first.page.url(), `${base}/conta/`);
        await first.page.goto(`${base}/conta/seguranca/`);
        await first.page.getByLabel('Sua senha, para remover a chave «Notebook»').fill('ana-demo-2026');
        await submit(first.page, 'button:has-text("Remover a chave «Notebook»")');
        assert.match(await first.page.locator('.notice[role="status"]').textContent(), /^Chave de acesso removida\./);
        assert.match(await first.page.locator('main').textContent(), /Nenhuma chave de acesso cadastrada/);
    } finally {
        await first.context.close();
    }
    const { context, page, copy } = await device();
    try {
        await copy(saved);
        await page.goto(`${base}/conta/entrar/`);
        await submit(page, 'button:has-text("Entrar com chave de acesso")');
        await submit(page, '#chave-usar');
        assert.equal(new URL(page.url()).pathname, '/conta/entrar/chave/', 'still at the passkey page');
        assert.match(await alertText(page), /não foi reconhecida/);
        await page.goto(`${base}/conta/`);
        assert.equal(new URL(page.url()).pathname, '/conta/entrar/', 'no session was opened');
    } finally {
        await context.close();
    }
});
