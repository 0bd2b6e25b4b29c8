// Two-step login with an authenticator app (TOTP) in a real browser:
// headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core),
// four browser contexts standing for four devices of ana.
// - ana signs in at /conta/entrar/, opens /conta/seguranca/, confirms her
//   password and starts the enrolment: the page shows a QR code (inline
//   SVG) and the key as text. The test computes the app's code from that
//   key (RFC 6238: HMAC-SHA1, 30-second steps, 6 digits) and types it: the
//   page announces the app and lists 10 recovery codes, shown once.
// - On a second device her password leads to /conta/entrar/verificar/; a
//   wrong code is refused ("Código inválido ou já usado"), and so is the
//   code used at enrolment (each step is accepted once per account); the
//   code of a later step (±1 step of drift) takes her to /conta/.
// - On a third device one recovery code, in the same field, takes her to
//   /conta/; on a fourth the same recovery code is refused.
// The security page (before, during and after the enrolment) and the code's
// page are photographed at 1280 px and at 360 px into
// target/browser/<page>-<width>.png, must not scroll sideways at 360 px,
// and are scanned with axe-core (see harness.mjs).
//
// Needs: the debug binary (`cargo build --bin credencial`) and Chromium;
// no database server (the demo serves from its default SQLite file). Run by
// hand: cd tests/browser && npm ci && node --test second_factor.test.mjs

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import path from 'node:path';
import { checkPage, freshPage as fresh, launchChromium, OUT, startDemo, TEST_MS } from './harness.mjs';

const DB = `credencial_browser_second_factor_${process.pid}`;
const JWT_SECRET = 'browser-test-secret-0123456789-abcdefghijklmnopqrstuvwxyz';
const STEP_SECS = 30; // RFC 6238's time step, the service's too
const WRONG = 'Código inválido ou já usado';

let demo; // the demo: { base, db, stop }
let base; // http://127.0.0.1:<port>
let browser;

before(
    async () => {
        demo = await startDemo(DB, { SERVICE_JWT_SECRET: JWT_SECRET }, 'server-second-factor.log');
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

// ------------------------------------------------------------------ TOTP

/** The bytes of RFC 4648 base32 `text` (no padding; spaces ignored). */
function base32Decode(text) {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
    const compact = text.replace(/\s+/g, '').replace(/=+$/, '').toUpperCase();
    const bytes = [];
    let bits = 0;
    let value = 0;
    for (const c of compact) {
        const index = alphabet.indexOf(c);
        assert.ok(index >= 0, `not base32: ${JSON.stringify(c)} in ${JSON.stringify(text)}`);
        value = (value << 5) | index;
        bits += 5;
        if (bits >= 8) {
            bits -= 8;
            bytes.push((value >>> bits) & 0xff);
        }
    }
    return Buffer.from(bytes);
}

/** The 30-second step `ms` (Unix milliseconds) falls in. */
const stepAt = (ms = Date.now()) => Math.floor(ms / 1000 / STEP_SECS);

/** The 6-digit code of `key` (bytes) at `step` (RFC 4226 over RFC 6238's counter). */
function totp(key, step) {
    const counter = Buffer.alloc(8);
    counter.writeBigUInt64BE(BigInt(step));
    const mac = createHmac('sha1', key).update(counter).digest();
    const offset = mac[mac.length - 1] & 0x0f;
    const binary = (mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000;
    return String(binary).padStart(6, '0');
}

// RFC 6238's SHA-1 test vectors (Appendix B: the ASCII key
// "12345678901234567890", 8 digits there, the last 6 here): the code above
// is the RFC's before it meets the service.
for (const [seconds, code] of [
    [59, '287082'],
    [1111111109, '081804'],
    [1111111111, '050471'],
    [1234567890, '005924'],
    [2000000000, '279037'],
]) {
    const key = Buffer.from('12345678901234567890');
    assert.equal(totp(key, stepAt(seconds * 1000)), code, `RFC 6238 at ${seconds}`);
}
assert.equal(base32Decode('GEZD GNBV GY3T QOJQ GEZD GNBV GY3T QOJQ').toString(), '12345678901234567890');

// ----------------------------------------------------------------- pages

/** A fresh context (no cookies) and page with bounded actions. */
const freshPage = () => fresh(browser);

/** Submits the form holding `button` and waits for the page it leads to. */
async function submit(page, button = 'main form button[type="submit"]') {
    await Promise.all([page.waitForNavigation(), page.click(button)]);
}

/** Types ana's password at the account's login form and sends it. */
async function passwordAsAna(page) {
    await page.goto(`${base}/conta/entrar/`);
    await page.fill('input[name="username"]', 'ana');
    await page.fill('input[name="password"]', 'ana-demo-2026');
    await submit(page);
}

/** After the password, the code's page, coming back to /conta/. */
async function assertAtVerify(page, who) {
    const url = new URL(page.url());
    assert.equal(url.pathname, '/conta/entrar/verificar/', `${who} is asked for the code: ${page.url()}`);
    // The form's answer stays at the same address without a query: the
    // form carries `next` in a hidden field.
    if (url.search) assert.equal(url.searchParams.get('next'), '/conta/', `${who}: next in the address`);
    assert.equal(
        await page.locator('main form input[type="hidden"][name="next"]').getAttribute('value'),
        '/conta/',
        `${who} comes back to /conta/ afterwards`,
    );
    assert.equal(await page.locator('h1').textContent(), 'Verificação em duas etapas');
}

/** Types `code` in the code's page and sends it. */
async function sendCode(page, code) {
    await page.getByLabel('Código', { exact: true }).fill(code);
    await submit(page, 'main form button:has-text("Verificar")');
}

/** The page's alert (a refused code) as text, or '' without one. */
async function alertText(page) {
    const alert = page.locator('main .message[role="alert"]');
    return (await alert.count()) ? (await alert.textContent()).trim() : '';
}

/** Photographs `page` as target/browser/failure-<name>.png (after a failed step). */
async function failureShot(page, name) {
    await page.screenshot({ path: path.join(OUT, `failure-${name}.png`), fullPage: true }).catch(() => {});
}

/** Shared by the tests, in order: the key's bytes, the step used at enrolment, a recovery code. */
const enrolled = {};

test('ana turns on the authenticator app: QR code, key, code, recovery codes', { timeout: TEST_MS }, async () => {
    const { context, page } = await freshPage();
    try {
        await passwordAsAna(page);
        assert.equal(page.url(), `${base}/conta/`, 'signed in with the password alone, on the account page');

        await page.goto(`${base}/conta/seguranca/`);
        assert.equal(await page.locator('h1').textContent(), 'Segurança da conta');
        const nav = page.locator('nav.account a[aria-current="page"]');
        assert.equal((await nav.textContent()).trim(), 'Segurança', 'the navigation marks this page');
        assert.equal(await page.locator('main .qr svg').count(), 0, 'no QR code before the password');
        await checkPage(page, 'conta-seguranca');

        // The password, then the enrolment: a QR code and the key as text.
        await page.getByLabel('Sua senha, para confirmar').fill('ana-demo-2026');
        await submit(page, 'button:has-text("Configurar o aplicativo autenticador")');
        assert.equal(new URL(page.url()).pathname, '/conta/seguranca/');
        assert.equal(await alertText(page), '', 'the password was accepted');
        const qr = page.locator('main div.qr > svg[role="img"]');
        assert.equal(await qr.count(), 1, 'one QR code, as an image');
        assert.match((await qr.getAttribute('aria-label')) ?? '', /QR/, 'the QR code is named for screen readers');
        const box = await qr.boundingBox();
        const square = box && box.width >= 150 && Math.abs(box.width - box.height) < 1;
        assert.ok(square, `a square QR code: ${JSON.stringify(box)}`);
        const secretText = (await page.locator('main code.secret').textContent()).trim();
        assert.match(secretText, /^[A-Z2-7]{4}( [A-Z2-7]{1,4})+$/, `the key in groups of four: ${secretText}`);
        const key = base32Decode(secretText);
        assert.equal(key.length, 20, 'a 160-bit key');
        await checkPage(page, 'conta-seguranca-qr');

        // The app's code of now.
        const step = stepAt();
        await page.getByLabel('Código do aplicativo').fill(totp(key, step));
        await submit(page, 'main form button:has-text("Ativar")');
        assert.equal(await alertText(page), '', 'the code was accepted');
        assert.match(
            await page.locator('.notice[role="status"]').textContent(),
            /^Aplicativo autenticador ativado\./,
            'the page announces the app',
        );
        const codes = (await page.locator('main ul.codes li code').allTextContents()).map((c) => c.trim());
        assert.equal(codes.length, 10, `ten recovery codes: ${codes}`);
        for (const code of codes) assert.match(code, /^[a-z0-9]{5}-[a-z0-9]{5}$/, `a recovery code: ${code}`);
        assert.equal(new Set(codes).size, 10, 'all different');
        assert.equal(await page.locator('main .qr svg').count(), 0, 'the QR code is gone once the app is on');
        assert.match(await page.locator('main').textContent(), /Códigos de recuperação não usados:\s10\./);
        await checkPage(page, 'conta-seguranca-codigos');

        // The codes are shown once.
        await page.goto(`${base}/conta/seguranca/`);
        assert.equal(await page.locator('main ul.codes').count(), 0, 'the codes are not shown again');
        Object.assign(enrolled, { key, step, recovery: codes[3] });
    } catch (e) {
        await failureShot(page, 'segundo-fator-ativar');
        throw e;
    } finally {
        await context.close();
    }
});

test('another device: the password, a wrong code, then the app\'s code', { timeout: TEST_MS }, async () => {
    assert.ok(enrolled.key, 'the app was turned on by the previous test');
    const { context, page } = await freshPage();
    try {
        await passwordAsAna(page);
        await assertAtVerify(page, 'the second device');
        await checkPage(page, 'conta-verificar');

        // Not signed in yet: account pages send her back to the code.
        await page.goto(`${base}/conta/`);
        await assertAtVerify(page, 'the second device, opening /conta/ early');

        // A wrong code (one that no step within the drift happens to have).
        const now = stepAt();
        const nearby = [now - 1, now, now + 1, now + 2].map((s) => totp(enrolled.key, s));
        const wrong = ['000000', '111111', '222222'].find((c) => !nearby.includes(c));
        await sendCode(page, wrong);
        assert.match(await alertText(page), new RegExp(`^${WRONG}`), 'a wrong code is refused');
        await assertAtVerify(page, 'the second device, after a wrong code');
        await checkPage(page, 'conta-verificar-erro');

        // The step used at enrolment is spent (or out of the drift by now):
        // its code is refused too.
        await sendCode(page, totp(enrolled.key, enrolled.step));
        assert.match(await alertText(page), new RegExp(`^${WRONG}`), 'the code used at enrolment is refused');

        // The code of a later step (the next, or now's if the clock has
        // moved on; the server takes ±1).
        const step = Math.max(enrolled.step + 1, stepAt());
        await sendCode(page, totp(enrolled.key, step));
        const which = `the code of step ${step} (enrolment at ${enrolled.step})`;
        assert.equal(await alertText(page), '', `${which} was accepted`);
        assert.equal(page.url(), `${base}/conta/`, 'signed in, on the account page');
        const nav = page.locator('nav.account a[aria-current="page"]');
        assert.equal((await nav.textContent()).trim(), 'Visão geral', 'the overview');
    } catch (e) {
        await failureShot(page, 'segundo-fator-codigo');
        throw e;
    } finally {
        await context.close();
    }
});

test('a recovery code lets her in once, and only once', { timeout: TEST_MS }, async () => {
    assert.ok(enrolled.recovery, 'the app was turned on by the first test');
    const third = await freshPage();
    try {
        await passwordAsAna(third.page);
        await assertAtVerify(third.page, 'the third device');
        await sendCode(third.page, enrolled.recovery);
        assert.equal(await alertText(third.page), '', 'the recovery code was accepted');
        assert.equal(third.page.url(), `${base}/conta/`, 'signed in with the recovery code');
        await third.page.goto(`${base}/conta/seguranca/`);
        assert.match(await third.page.locator('main').textContent(), /Códigos de recuperação não usados:\s9\./);
    } catch (e) {
        await failureShot(third.page, 'segundo-fator-recuperacao');
        throw e;
    } finally {
        await third.context.close();
    }

    const fourth = await freshPage();
    try {
        await passwordAsAna(fourth.page);
        await assertAtVerify(fourth.page, 'the fourth device');
        await sendCode(fourth.page, enrolled.recovery);
        assert.match(await alertText(fourth.page), new RegExp(`^${WRONG}`), 'a used recovery code is refused');
        await assertAtVerify(fourth.page, 'the fourth device, after a used recovery code');
        await fourth.page.goto(`${base}/conta/`);
        await assertAtVerify(fourth.page, 'the fourth device, still not signed in');
    } catch (e) {
        await failureShot(fourth.page, 'segundo-fator-recuperacao-usada');
        throw e;
    } finally {
        await fourth.context.close();
    }
});
