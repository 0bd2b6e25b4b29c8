// Login latency by method, in a real browser against the demo (not a test:
// `node tests/browser/login_latency.mjs`, best with the release build:
// CREDENCIAL_BIN=target/release/credencial). For each method it logs in
// LOGINS times (default 30) in fresh browser contexts and reads the
// server's own latency of each login request from its request log
// (`latency_us`), so the browser's overhead is not counted:
// - password alone: admin, `POST /conta/entrar/`;
// - password + TOTP: bruno, `POST /conta/entrar/` then
//   `POST /conta/entrar/verificar/` (his app's code; between logins the
//   stored last step is cleared with sqlite3 so that one 30-second step can
//   serve every login — a measurement, not the service's behaviour);
// - passkey alone: ana with Chromium's virtual authenticator, the two posts
//   of `/conta/entrar/chave/` (start, finish).
// Prints p50 and p99 (nearest rank) of each step and of the whole login.

import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { addVirtualAuthenticator, freshPage, launchChromium, OUT, sql, startDemo } from './harness.mjs';

const LOGINS = Number(process.env.LOGINS || 30);
const DB = `credencial_latency_${process.pid}`;
const LOG = 'server-login-latency.log';

function base32Decode(text) {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
    let bits = 0;
    let value = 0;
    const out = [];
    for (const c of text.replace(/\s+/g, '').toUpperCase()) {
        value = (value << 5) | alphabet.indexOf(c);
        bits += 5;
        if (bits >= 8) {
            bits -= 8;
            out.push((value >>> bits) & 0xff);
        }
    }
    return Buffer.from(out);
}

function totp(key) {
    const counter = Buffer.alloc(8);
    counter.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 30_000)));
    const mac = createHmac('sha1', key).update(counter).digest();
    const offset = mac[mac.length - 1] & 0x0f;
    return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

/** Every request line of the server log so far: [method, route, latency µs]. */
function requests() {
    const text = readFileSync(path.join(OUT, LOG), 'utf8');
    return [...text.matchAll(/http\.method=(\w+) http\.route=(\S+) http\.status_code=\d+ latency_us=(\d+)/g)].map(
        (m) => [m[1], m[2], Number(m[3])],
    );
}

function percentile(values, p) {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const ms = (us) => (us / 1000).toFixed(1);

async function submit(page, selector) {
    await Promise.all([page.waitForNavigation(), page.click(selector)]);
}

async function password(page, base, user, secret) {
    await page.goto(`${base}/conta/entrar/`);
    await page.fill('input[name="username"]', user);
    await page.fill('input[name="password"]', secret);
    await submit(page, 'main form button:has-text("Entrar")');
}

const demo = await startDemo(DB, { SERVICE_JWT_SECRET: 'latency-secret-0123456789-abcdefghijklmnopqrstuvwxyz' }, LOG);
const base = demo.base.replace('127.0.0.1', 'localhost');
const browser = await launchChromium();
const results = {};
try {
    // Set-up: bruno's app, ana's passkey (on one virtual authenticator).
    let { context, page } = await freshPage(browser);
    await password(page, base, 'bruno', 'bruno-demo-2026');
    await page.goto(`${base}/conta/seguranca/`);
    await page.getByLabel('Sua senha, para confirmar').fill('bruno-demo-2026');
    await submit(page, 'button:has-text("Configurar o aplicativo autenticador")');
    const key = base32Decode(await page.locator('main code.secret').textContent());
    await page.getByLabel('Código do aplicativo').fill(totp(key));
    await submit(page, 'main form button:has-text("Ativar")');
    await context.close();

    ({ context, page } = await freshPage(browser));
    await addVirtualAuthenticator(context, page);
    await password(page, base, 'ana', 'ana-demo-2026');
    await page.goto(`${base}/conta/seguranca/`);
    await page.getByLabel('Nome da chave').fill('Medição');
    await page.getByLabel('Sua senha, para cadastrar a chave').fill('ana-demo-2026');
    await submit(page, 'button:has-text("Cadastrar chave de acesso")');
    await submit(page, '#chave-usar');

    const measure = async (name, login) => {
        const steps = [];
        for (let i = 0; i < LOGINS; i += 1) {
            const before = requests().length;
            await login();
            const posts = requests()
                .slice(before)
                .filter(([method, route]) => method === 'POST' && !route.startsWith('/conta/sair'));
            steps.push(posts.map(([, route, us]) => [route, us]));
        }
        results[name] = steps;
    };

    await measure('password alone', async () => {
        const fresh = await freshPage(browser);
        await password(fresh.page, base, 'admin', 'admin-demo-2026');
        await fresh.context.close();
    });
    await measure('password + TOTP', async () => {
        await sql(DB, "UPDATE user_totp SET last_step = NULL WHERE user_id = (SELECT id FROM users WHERE username = 'bruno')");
        const fresh = await freshPage(browser);
        await password(fresh.page, base, 'bruno', 'bruno-demo-2026');
        await fresh.page.getByLabel('Código', { exact: true }).fill(totp(key));
        await submit(fresh.page, 'main form button:has-text("Verificar")');
        if (!fresh.page.url().endsWith('/conta/')) throw new Error(`TOTP login failed at ${fresh.page.url()}`);
        await fresh.context.close();
    });
    await measure('passkey alone', async () => {
        await page.goto(`${base}/conta/sair/`);
        await submit(page, 'main form button[type="submit"]');
        await submit(page, 'button:has-text("Entrar com chave de acesso")');
        await submit(page, '#chave-usar');
        if (!page.url().endsWith('/conta/')) throw new Error(`passkey login failed at ${page.url()}`);
    });
    await context.close();
} finally {
    await browser.close();
    await demo.stop();
}

console.log(`| method (${LOGINS} logins each) | step | p50 ms | p99 ms |`);
console.log('|---|---|---|---|');
for (const [name, logins] of Object.entries(results)) {
    const stepCount = logins[0].length;
    for (let s = 0; s < stepCount; s += 1) {
        const values = logins.map((steps) => steps[s][1]);
        console.log(`| ${name} | ${s + 1}. POST ${logins[0][s][0]} | ${ms(percentile(values, 50))} | ${ms(percentile(values, 99))} |`);
    }
    const totals = logins.map((steps) => steps.reduce((sum, [, us]) => sum + us, 0));
    console.log(`| ${name} | whole login | ${ms(percentile(totals, 50))} | ${ms(percentile(totals, 99))} |`);
}
