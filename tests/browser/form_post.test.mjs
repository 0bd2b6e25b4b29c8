// response_mode=form_post in a real browser, against `credencial demo`: the
// demo's OpenID Connect client (demo-oidc) is sent back, for this run, to a
// small HTTP receiver on loopback that records what Chromium posts to it
// (its redirect URI changed with sqlite3, as the journey changes the
// demo's data). Two passes:
//
// 1. Scripts on: authorization request → login form → consent → the
//    form-post page submits itself under its own Content-Security-Policy
//    (script-src 'self', form-action the receiver's origin); the receiver
//    gets code and state in a form-encoded POST, and the code buys tokens
//    at /oauth/token/. No CSP violation is reported.
// 2. Scripts off (a context with JavaScript disabled): the consent is
//    remembered, so the request answers with the form-post page at once; it
//    stays on screen until its *Continuar* button posts the code.
// 3. The same page with its script file not loaded (axe-core needs scripts
//    on): photographed at 1280 and 360 px and scanned with axe-core like
//    every page.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { checkPage, launchChromium, sql, startDemo, STEP_MS, TEST_MS } from './harness.mjs';

const DB = `credencial_form_post_${process.pid}`;
const CLIENT_ID = 'demo-oidc';
const CLIENT_SECRET = 'demo-oidc-secret';

let demo; // the demo: { base, db, stop }
let browser;
let receiver; // { origin, redirectUri, posts, close }

/**
 * The client application's side: an HTTP server on a free loopback port
 * that records every request to /callback (method, content type, Origin,
 * the form's fields) and answers with a small page.
 */
async function startReceiver() {
    const posts = [];
    const server = createServer((request, response) => {
        const chunks = [];
        request.on('data', (c) => chunks.push(c));
        request.on('end', () => {
            const body = Buffer.concat(chunks).toString('utf8');
            if (new URL(request.url, 'http://x').pathname === '/callback') {
                posts.push({
                    method: request.method,
                    contentType: request.headers['content-type'] ?? '',
                    fields: Object.fromEntries(new URLSearchParams(body)),
                });
            }
            response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
            response.end('<!DOCTYPE html><html lang="pt-BR"><title>Aplicação</title><main><h1>Aplicação</h1></main></html>');
        });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const origin = `http://127.0.0.1:${server.address().port}`;
    return {
        origin,
        redirectUri: `${origin}/callback`,
        posts,
        close: () => new Promise((resolve) => server.close(resolve)),
    };
}

before(
    async () => {
        demo = await startDemo(DB, {}, 'server-form-post.log');
        receiver = await startReceiver();
        const uris = JSON.stringify([receiver.redirectUri]);
        await sql(DB, `UPDATE oauth_clients SET redirect_uris = '${uris}' WHERE client_id = '${CLIENT_ID}'`);
        browser = await launchChromium();
    },
    { timeout: 120_000 },
);

after(
    async () => {
        await browser?.close().catch((e) => console.error(`closing chromium: ${e}`));
        await receiver?.close();
        await demo?.stop();
    },
    { timeout: 60_000 },
);

/** An authorization request of demo-oidc in the form-post mode, with PKCE. */
function authorizationUrl(state) {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const query = new URLSearchParams({
        response_type: 'code',
        client_id: CLIENT_ID,
        redirect_uri: receiver.redirectUri,
        scope: 'openid profile',
        state,
        nonce: randomBytes(16).toString('base64url'),
        code_challenge: challenge,
        code_challenge_method: 'S256',
        response_mode: 'form_post',
    });
    return { url: `${demo.base}/oauth/authorize/?${query}`, verifier };
}

/** Waits until the receiver has `count` posts and returns the last one. */
async function posted(count) {
    const deadline = Date.now() + STEP_MS;
    while (receiver.posts.length < count) {
        assert.ok(Date.now() < deadline, `no post reached the receiver (${receiver.posts.length} of ${count})`);
        await new Promise((r) => setTimeout(r, 50));
    }
    return receiver.posts[count - 1];
}

/** The code exchange of demo-oidc (asserted 200); resolves to the token answer. */
async function exchange(code, verifier) {
    const answer = await fetch(`${demo.base}/oauth/token/`, {
        method: 'POST',
        headers: {
            authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
            'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({
            grant_type: 'authorization_code',
            code,
            redirect_uri: receiver.redirectUri,
            code_verifier: verifier,
        }),
    });
    const tokens = await answer.json();
    assert.equal(answer.status, 200, JSON.stringify(tokens));
    return tokens;
}

test('form_post: the page posts the code to the application, with scripts on and off', { timeout: 2 * TEST_MS }, async () => {
    // 1. Scripts on: the page submits itself.
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    context.setDefaultTimeout(STEP_MS);
    context.setDefaultNavigationTimeout(STEP_MS);
    const violations = [];
    try {
        const page = await context.newPage();
        page.on('console', (m) => {
            if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
        });
        const first = authorizationUrl('estado-1');
        await page.goto(first.url);
        await page.locator('h1', { hasText: 'Entrar' }).waitFor();
        await page.fill('input[name="username"]', 'ana');
        await page.fill('input[name="password"]', 'ana-demo-2026');
        await Promise.all([page.waitForURL(/\/oauth\/authorize\//), page.click('button[type="submit"]')]);
        await page.locator('h1', { hasText: 'Autorizar acesso' }).waitFor();
        await Promise.all([
            page.waitForURL((u) => u.origin === receiver.origin),
            page.click('button[name="action"][value="approve"]'),
        ]);
        const post = await posted(1);
        assert.equal(post.method, 'POST');
        assert.match(post.contentType, /^application\/x-www-form-urlencoded/);
        assert.deepEqual(Object.keys(post.fields).sort(), ['code', 'state']);
        assert.equal(post.fields.state, 'estado-1');
        assert.deepEqual(violations, [], 'the page runs its script and posts under its own policy');
        const tokens = await exchange(post.fields.code, first.verifier);
        assert.ok(tokens.access_token && tokens.id_token, 'the posted code buys tokens');
        console.log(`[form_post] scripts on: the page posted code and state to ${receiver.redirectUri}; tokens issued`);

        // 2. Scripts off, in a context that shares the session cookie: the
        //    consent is remembered, so the page comes at once and waits.
        const cookies = await context.cookies();
        const quiet = await browser.newContext({ viewport: { width: 1100, height: 900 }, javaScriptEnabled: false });
        quiet.setDefaultTimeout(STEP_MS);
        quiet.setDefaultNavigationTimeout(STEP_MS);
        try {
            await quiet.addCookies(cookies);
            const still = await quiet.newPage();
            const second = authorizationUrl('estado-2');
            await still.goto(second.url);
            await still.locator('h1', { hasText: 'Voltando ao aplicativo' }).waitFor();
            assert.equal(receiver.posts.length, 1, 'nothing is posted without scripts until the button is used');
            assert.ok((await still.locator('main').textContent()).includes(receiver.origin), 'names where it goes');
            await Promise.all([
                still.waitForURL((u) => u.origin === receiver.origin),
                still.locator('button[type="submit"]', { hasText: 'Continuar' }).click(),
            ]);
            const again = await posted(2);
            assert.equal(again.fields.state, 'estado-2');
            await exchange(again.fields.code, second.verifier);
            console.log('[form_post] scripts off: the page waited for Continuar, which posted the code');
        } finally {
            await quiet.close();
        }

        // 3. The page as it stays on screen when its script does not run
        //    (the file not loaded: axe-core needs scripts on), photographed
        //    and scanned like every page.
        await page.route((url) => url.pathname === '/oauth/form_post.js', (route) => route.abort());
        const third = authorizationUrl('estado-3');
        await page.goto(third.url);
        await page.locator('h1', { hasText: 'Voltando ao aplicativo' }).waitFor();
        await checkPage(page, 'oauth-form-post');
        assert.equal(receiver.posts.length, 2, 'the page waits for the button when its script does not run');
    } finally {
        await context.close();
    }
});
