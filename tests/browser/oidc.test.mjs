// A real OpenID Connect client library against `credencial demo`:
// openid-client (panva, npm), used unchanged and configured only with the
// discovery URL (the demo's address), the demo client's id and secret
// (demo-oidc / demo-oidc-secret), and two of its own switches: plain http
// on loopback (allowInsecureRequests: the demo serves http) and
// enableNonRepudiationChecks, so that it verifies the ID token's signature
// against the key set at jwks_uri. The person's part happens in headless
// Chromium: the HTML login form and the consent page. Where the browser is
// sent to the demo client's URIs (http://localhost:8080/…, where nothing
// needs to listen) is read from the browser's own requests; Playwright's
// route interception answers them when it can (it does not see every
// redirect), and a refused connection there does not matter.
//
// Steps: discovery → authorization URL (PKCE S256, state, nonce) → login
// and consent in Chromium → the code captured → code exchange (the ID token
// validated against the JWKS) → userinfo → the end-session URL followed →
// the provider session is gone (a prompt=none authorization answers
// login_required). The steps are printed to stdout.
//
// Then the provider's logout pages (the confirmation without an
// id_token_hint, the "você saiu" page for an unregistered return address)
// and the consent page with `openid` are photographed and scanned like the
// journey's pages.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { checkPage, freshPage, launchChromium, startDemo, TEST_MS } from './harness.mjs';

const DB = `credencial_oidc_${process.pid}`;
const CLIENT_ID = 'demo-oidc';
const CLIENT_SECRET = 'demo-oidc-secret';
const REDIRECT_URI = 'http://localhost:8080/callback';
const POST_LOGOUT_URI = 'http://localhost:8080/';
const CLIENT_ORIGIN = 'http://localhost:8080';

let demo; // the demo: { base, db, stop }
let browser;

before(
    async () => {
        demo = await startDemo(DB, {}, 'server-oidc.log');
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

/** Prints one step of the interop run. */
function step(text) {
    console.log(`[openid-client] ${text}`);
}

/**
 * Watches where `page` is sent at the demo client's address
 * (http://localhost:8080/…), as the client application would see it.
 * `to(action)` runs a navigation that ends there and resolves to that URL.
 */
async function clientAddress(page) {
    const waiting = [];
    const seen = [];
    page.on('request', (request) => {
        if (!request.isNavigationRequest() || new URL(request.url()).origin !== CLIENT_ORIGIN) return;
        const resolve = waiting.shift();
        if (resolve) resolve(request.url());
        else seen.push(request.url());
    });
    await page.route(
        (url) => url.origin === CLIENT_ORIGIN,
        (route) =>
            route.fulfill({
                status: 200,
                contentType: 'text/html; charset=utf-8',
                body: '<!DOCTYPE html><html lang="pt-BR"><title>Aplicação</title><main><h1>Aplicação</h1></main></html>',
            }),
    );
    const next = () => (seen.length ? Promise.resolve(seen.shift()) : new Promise((r) => waiting.push(r)));
    return {
        async to(action) {
            const url = next();
            await action().catch((e) => {
                // Nothing listens at the client's address: its page may not load.
                if (!/ERR_CONNECTION_REFUSED|interrupted by another navigation/.test(e.message)) throw e;
            });
            const target = new URL(await url);
            // The navigation ends there, loaded or refused, before the next one.
            await page.waitForURL((u) => u.origin === CLIENT_ORIGIN || u.protocol === 'chrome-error:');
            return target;
        },
    };
}

/** The login form of the provider, filled in and sent. */
async function logIn(page, username, password) {
    await page.locator('h1', { hasText: 'Entrar' }).waitFor();
    await page.fill('input[name="username"]', username);
    await page.fill('input[name="password"]', password);
    await Promise.all([page.waitForURL(/\/oauth\/authorize\//), page.click('button[type="submit"]')]);
}

test('openid-client logs ana in, reads userinfo and logs her out of the demo', { timeout: 2 * TEST_MS }, async () => {
    const { context, page } = await freshPage(browser);
    try {
        const client = await clientAddress(page);

        // 1. Discovery from the issuer URL only.
        const config = await oidc.discovery(new URL(demo.base), CLIENT_ID, CLIENT_SECRET, undefined, {
            execute: [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks],
        });
        const server = config.serverMetadata();
        step(`1. discovery of ${demo.base}: issuer ${server.issuer}, jwks_uri ${server.jwks_uri}`);
        assert.equal(new URL(server.issuer).href, new URL(demo.base).href);

        // 2. The authorization URL: PKCE (S256), state, nonce.
        const verifier = oidc.randomPKCECodeVerifier();
        const state = oidc.randomState();
        const nonce = oidc.randomNonce();
        const authorization = oidc.buildAuthorizationUrl(config, {
            redirect_uri: REDIRECT_URI,
            scope: 'openid profile email',
            code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
            code_challenge_method: 'S256',
            state,
            nonce,
        });
        step(`2. authorization URL ${authorization.origin}${authorization.pathname} (PKCE S256, state, nonce)`);

        // 3. The person logs in and consents in Chromium; the code comes back.
        await page.goto(authorization.href);
        await logIn(page, 'ana', 'ana-demo-2026');
        await page.locator('h1', { hasText: 'Autorizar acesso' }).waitFor();
        const scopes = await page.locator('main li').allTextContents();
        assert.ok(scopes.some((s) => s.startsWith('Entrar no aplicativo')), `openid on the consent page: ${scopes}`);
        await checkPage(page, 'oauth-consent-openid');
        const callback = await client.to(() => page.click('button[name="action"][value="approve"]'));
        step(`3. login form and consent in Chromium; redirected to ${callback.origin}${callback.pathname} with a code`);

        // 4. The code exchange; the library validates the ID token (signature
        //    against the JWKS, iss, aud, exp, nonce) and the state.
        const tokens = await oidc.authorizationCodeGrant(config, callback, {
            pkceCodeVerifier: verifier,
            expectedState: state,
            expectedNonce: nonce,
            idTokenExpected: true,
        });
        const claims = tokens.claims();
        assert.ok(oidc.getJwksCache(config), 'the key set was fetched from jwks_uri to verify the ID token');
        assert.equal(claims.nonce, nonce);
        assert.deepEqual(claims.amr, ['pwd']);
        step(
            `4. code exchanged: ID token verified with the published key (kid ${JSON.parse(
                Buffer.from(tokens.id_token.split('.')[0], 'base64url'),
            ).kid}), sub ${claims.sub}, nonce echoed, scope "${tokens.scope}"`,
        );

        // 5. Userinfo with the access token (the library checks `sub`).
        const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
        assert.equal(userinfo.preferred_username, 'ana');
        assert.equal(userinfo.email, 'ana.souza@demo.credencial.gov.br');
        assert.equal(userinfo.cpf, '52998224725');
        step(`5. userinfo: ${userinfo.name} <${userinfo.email}>, preferred_username ${userinfo.preferred_username}`);

        // 6. The end-session URL, followed in Chromium, comes back to the
        //    registered post-logout URI with the state.
        const endSession = oidc.buildEndSessionUrl(config, {
            id_token_hint: tokens.id_token,
            post_logout_redirect_uri: POST_LOGOUT_URI,
            state: 'saindo',
        });
        const back = await client.to(() => page.goto(endSession.href));
        assert.equal(`${back.origin}${back.pathname}`, 'http://localhost:8080/');
        assert.equal(back.searchParams.get('state'), 'saindo');
        step(`6. end session ${endSession.origin}${endSession.pathname}: back at ${back.href}`);

        // 7. The provider session is gone: prompt=none answers login_required.
        const silentState = oidc.randomState();
        const silent = oidc.buildAuthorizationUrl(config, {
            redirect_uri: REDIRECT_URI,
            scope: 'openid',
            prompt: 'none',
            state: silentState,
            nonce: oidc.randomNonce(),
            code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
            code_challenge_method: 'S256',
        });
        const answer = await client.to(() => page.goto(silent.href));
        await assert.rejects(
            oidc.authorizationCodeGrant(config, answer, { expectedState: silentState, idTokenExpected: true }),
            (e) => e.error === 'login_required',
        );
        step(`7. prompt=none after the logout: error=${answer.searchParams.get('error')} (the provider session is gone)`);
    } finally {
        await context.close();
    }
});

test('the logout pages: a confirmation without id_token_hint, the page after an unregistered return', { timeout: TEST_MS }, async () => {
    const { context, page } = await freshPage(browser);
    try {
        const client = await clientAddress(page);
        // A provider session (the account's login form).
        await page.goto(`${demo.base}/conta/entrar/`);
        await page.fill('input[name="username"]', 'bruno');
        await page.fill('input[name="password"]', 'bruno-demo-2026');
        await Promise.all([page.waitForURL(`${demo.base}/conta/`), page.click('main form button[type="submit"]')]);

        // Without id_token_hint: the person confirms on the provider's page.
        const query = new URLSearchParams({ client_id: CLIENT_ID, post_logout_redirect_uri: POST_LOGOUT_URI });
        await page.goto(`${demo.base}/oauth/logout/?${query}`);
        assert.equal(await page.locator('h1').textContent(), 'Sair do ID Sabiá?');
        assert.match(await page.locator('main').textContent(), /Aplicação OpenID Connect de demonstração/);
        await checkPage(page, 'oauth-logout');
        const back = await client.to(() => page.click('main form button[type="submit"]'));
        assert.equal(back.href, POST_LOGOUT_URI);

        // An unregistered return address is never followed.
        const unregistered = new URLSearchParams({ client_id: CLIENT_ID, post_logout_redirect_uri: 'https://fora.example/' });
        await page.goto(`${demo.base}/oauth/logout/?${unregistered}`);
        assert.equal(await page.locator('h1').textContent(), 'Você saiu do ID Sabiá');
        assert.match(await page.locator('main').textContent(), /não está registrado/);
        await checkPage(page, 'oauth-logged-out');
    } finally {
        await context.close();
    }
});

test('openid-client gets the demo application its own token (client_credentials) and reads /usuarios/ with it', { timeout: TEST_MS }, async () => {
    // The same library, unchanged: discovery, then its client-credentials
    // grant (RFC 6749 §4.4) with the demo client's id and secret (the demo
    // allows demo-oidc the grant with users:read).
    const config = await oidc.discovery(new URL(demo.base), CLIENT_ID, CLIENT_SECRET, undefined, {
        execute: [oidc.allowInsecureRequests],
    });
    assert.ok(config.serverMetadata().grant_types_supported.includes('client_credentials'));
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'users:read' });
    step(`client_credentials: ${tokens.token_type} token with scope "${tokens.scope}", expires in ${tokens.expires_in} s`);
    assert.equal(tokens.scope, 'users:read');
    assert.equal(tokens.refresh_token, undefined, 'no refresh token for an application’s own token');
    const found = await fetch(`${demo.base}/usuarios/52998224725/`, {
        headers: { Authorization: `Bearer ${tokens.access_token}` },
    });
    assert.equal(found.status, 200, 'the token reads a user');
    assert.equal((await found.json()).username, 'ana');
    // A permission the application does not have is refused by the library's call.
    await assert.rejects(oidc.clientCredentialsGrant(config, { scope: 'users:create' }), (e) => e.error === 'invalid_scope');
});
