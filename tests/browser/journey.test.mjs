// The journeys of the demo in a real browser: headless Chromium (Debian's
// /usr/bin/chromium, driven by playwright-core).
// - ana opens the demo's /auth/login/, signs in at the provider, approves
//   on the consent page and lands on /auth/me/ (every mapped column, in the
//   page and in host_users); her second login skips the consent page.
// - bruno signs in at his account (/conta/), adds an experience and a
//   degree, validates his tax id, authorizes demo-host, sees the tax
//   authority's columns filled, logs in again without a consent page, finds
//   demo-host in /conta/acessos/, revokes it in /conta/aplicativos/, and the
//   next login asks consent again.
// - carla signs up at /conta/cadastro/; her host row has no tax data.
// - admin (staff) opens the administration panel (/admin/), registers an
//   application, disables the scope cnes for demo-host and deactivates
//   bruno (and visits the other panel pages: demo-host's API token, a new
//   account with a temporary password, whose first login goes to the
//   password page); bruno's login at /auth/login/ is then refused with a clear
//   message, ana's profile read through demo-host no longer holds cnes, and
//   the audit page shows the three actions. Runs last: it changes what the
//   other journeys rely on.
// Every kind of page they reach (login, login with an error, consent,
// record, logout, every account page, the provider's and the client's
// error pages) is
// photographed at 1280 px and at 360 px into target/browser/<page>-<width>.png,
// must not scroll sideways at 360 px, and is scanned with axe-core: any
// violation of impact "serious" or "critical" fails the test.
//
// Needs: the sqlite3 shell, the debug binary (`cargo build --bin
// credencial`) and Chromium; no database server (the demo serves from its
// default SQLite file). Run by .ci/run, or by hand: cd tests/browser && npm
// ci && node --test

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { checkPage, freshPage as fresh, launchChromium, OUT, sql, startDemo, TEST_MS } from './harness.mjs';

const DB = `credencial_browser_${process.pid}`;
const JWT_SECRET = 'browser-test-secret-0123456789-abcdefghijklmnopqrstuvwxyz';

let demo; // the demo: { base, db, stop }
let base; // http://127.0.0.1:<port>
let browser;

before(
    async () => {
        demo = await startDemo(DB, { SERVICE_JWT_SECRET: JWT_SECRET }, 'server.log');
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

/**
 * /auth/login/ → the provider's login page → the consent page; clicks the
 * consent button `action` (approve or deny) and returns the response of
 * /auth/callback/.
 */
async function throughTheProvider(page, username, password, action) {
    await page.goto(`${base}/auth/login/`);
    assert.match(new URL(page.url()).pathname, /^\/oauth\/authorize\/$/, 'sent to the provider');
    assert.equal(await page.locator('h1').textContent(), 'Entrar');
    await checkPage(page, 'oauth-login');
    await page.fill('input[name="username"]', username);
    await page.fill('input[name="password"]', password);
    await Promise.all([page.waitForURL(/\/oauth\/authorize\//), page.click('button[type="submit"]')]);
    await page.locator('h1', { hasText: 'Autorizar acesso' }).waitFor();
    const scopes = await page.locator('main li').allTextContents();
    assert.ok(scopes.length >= 5, `the consent page lists the scopes: ${scopes}`);
    await checkPage(page, 'oauth-consent');
    const [callback] = await Promise.all([
        page.waitForResponse((r) => new URL(r.url()).pathname === '/auth/callback/'),
        page.click(`button[name="action"][value="${action}"]`),
    ]);
    return callback;
}

/** The record page's table as {column: {text, empty}} (each row names its column in data-column). */
async function recordOnPage(page) {
    const rows = await page.$$eval('main table tbody tr', (trs) =>
        trs.map((tr) => [
            tr.dataset.column,
            { text: tr.querySelector('td').textContent.trim(), empty: !!tr.querySelector('td .null') },
        ]),
    );
    return Object.fromEntries(rows);
}

/** The host_users row of `username` as JSON (dates as text, profile as a flag). */
async function hostRow(username) {
    const out = await sql(
        DB,
        `SELECT json_object('username', username, 'cpf', cpf, 'email', email, 'first_name', first_name,
                'last_name', last_name, 'birth_date', birth_date, 'mother_name', mother_name, 'city', city,
                'state', state, 'has_profile', json(CASE WHEN profile IS NULL THEN 'false' ELSE 'true' END))
           FROM host_users WHERE username = '${username}'`,
    );
    assert.ok(out.trim(), `no host_users row for ${username}`);
    return JSON.parse(out.trim());
}

async function logInAndReadRecord(username, password) {
    const { context, page } = await freshPage();
    try {
        const callback = await throughTheProvider(page, username, password, 'approve');
        assert.equal(callback.status(), 303, `the callback redirects: ${await callback.text().catch(() => '')}`);
        await page.waitForURL(`${base}/auth/me/`);
        await page.locator('main table').waitFor();
        assert.equal(await page.locator('h1').textContent(), 'Seu cadastro nesta aplicação');
        const cookies = (await context.cookies()).map((c) => c.name);
        assert.ok(cookies.includes('credencial_host_session'), `host session cookie: ${cookies}`);
        return { context, page, shown: await recordOnPage(page) };
    } catch (e) {
        await page.screenshot({ path: path.join(OUT, `failure-${username}.png`), fullPage: true }).catch(() => {});
        await context.close();
        throw e;
    }
}

test('ana: login, consent, /auth/me/ shows and host_users holds every mapped column', { timeout: TEST_MS }, async () => {
    const { context, page, shown } = await logInAndReadRecord('ana', 'ana-demo-2026');
    try {
        await checkPage(page, 'auth-me');
        const expected = {
            username: '52998224725',
            cpf: '52998224725',
            email: 'ana.souza@demo.credencial.gov.br',
            first_name: 'Ana',
            last_name: 'Beatriz Souza',
            birth_date: '1988-03-14',
            mother_name: 'MARIA DAS GRACAS SOUZA',
            city: 'NATAL',
            state: 'RN',
        };
        // The page masks the personal data the person does not need to
        // recognise the record (LGPD); the table holds it in full.
        const masked = {
            ...expected,
            username: '529.***.***-25',
            cpf: '529.***.***-25',
            birth_date: '**/**/1988',
            mother_name: 'M. D. G. S.',
        };
        for (const [column, value] of Object.entries(masked)) {
            assert.equal(shown[column]?.text, value, `${column} on the page`);
        }
        assert.doesNotMatch(await page.locator('main').textContent(), /52998224725|1988-03-14|MARIA DAS GRACAS/);
        assert.match(shown.profile?.text ?? '', /formacao_academica/, 'profile holds the whole answer');

        assert.deepEqual(await hostRow('52998224725'), { ...expected, has_profile: true });

        // The logout page (GET /auth/logout/) offers the same button.
        const logoutPage = await context.newPage();
        await logoutPage.goto(`${base}/auth/logout/`);
        assert.equal(await logoutPage.locator('h1').textContent(), 'Sair desta aplicação');
        await checkPage(logoutPage, 'auth-logout');
        await logoutPage.close();

        // Sair ends the host session and lands on the page after leaving
        // (not on the login, which the remembered consent would turn into
        // a new session at once).
        await Promise.all([page.waitForURL(`${base}/auth/logout/`), page.click('button:has-text("Sair")')]);
        assert.equal(await page.locator('h1').textContent(), 'Você saiu desta aplicação');
        await checkPage(page, 'auth-logged-out');
        const cookies = (await context.cookies()).map((c) => c.name);
        assert.ok(!cookies.includes('credencial_host_session'), `host session gone: ${cookies}`);
    } finally {
        await context.close();
    }
});

/** Every /oauth/authorize/ answer the page gets, to tell a consent page (200) from a redirect. */
function watchAuthorize(page) {
    const statuses = [];
    page.on('response', (r) => {
        if (new URL(r.url()).pathname === '/oauth/authorize/' && r.request().method() === 'GET') statuses.push(r.status());
    });
    return statuses;
}

/** Submits the form holding `button` and waits for the page it leads to. */
async function submit(page, button = 'main form button[type="submit"]') {
    await Promise.all([page.waitForNavigation(), page.click(button)]);
}

/** Ends the host application's session (the *Sair* of /auth/logout/). */
async function leaveHost(page) {
    await page.goto(`${base}/auth/logout/`);
    await Promise.all([page.waitForURL(`${base}/auth/logout/`), page.click('button:has-text("Sair")')]);
}

test('bruno: his account, his entries, his validation, consent remembered and revoked', { timeout: 3 * TEST_MS }, async () => {
    const { context, page } = await freshPage();
    try {
        // Sign in at the account pages (the login form, then back to /conta/).
        await page.goto(`${base}/conta/`);
        assert.equal(new URL(page.url()).pathname, '/conta/entrar/');
        await checkPage(page, 'conta-entrar');
        await page.fill('input[name="username"]', 'bruno');
        await page.fill('input[name="password"]', 'bruno-demo-2026');
        await submit(page);
        assert.equal(page.url(), `${base}/conta/`);
        assert.equal(await page.locator('h1').textContent(), 'Minha conta');
        assert.match(await page.locator('main').textContent(), /123\.\*\*\*\.\*\*\*-09/, 'the CPF, masked');
        await checkPage(page, 'conta-visao-geral');

        // An experience: first with the end before the start (refused, kept as typed).
        await page.goto(`${base}/conta/experiencias/`);
        await page.fill('#estabelecimento', 'Hospital Universitário Onofre Lopes');
        await page.fill('#profissao', 'Enfermeiro');
        await page.fill('#data_inicio', '2020-03-01');
        await page.fill('#data_fim', '2019-01-01');
        await page.fill('#municipio', 'Natal');
        await submit(page);
        assert.match(await page.locator('.field-error').first().textContent(), /término não pode ser anterior/);
        assert.equal(await page.inputValue('#estabelecimento'), 'Hospital Universitário Onofre Lopes', 'kept as typed');
        await checkPage(page, 'conta-experiencias-erro');
        await page.fill('#data_fim', '');
        await submit(page);
        assert.ok((await page.locator('ul.entries li').count()) >= 1, 'the experience is listed');
        assert.match(await page.locator('ul.entries').textContent(), /Hospital Universitário Onofre Lopes/);
        await checkPage(page, 'conta-experiencias');
        await page.click('ul.entries li a:has-text("Editar")');
        await page.locator('main form').waitFor();
        await checkPage(page, 'conta-experiencia-editar');
        await page.goto(`${base}/conta/experiencias/`);
        await page.click('ul.entries li a:has-text("Excluir")');
        await page.locator('main form').waitFor();
        await checkPage(page, 'conta-experiencia-excluir');

        // A degree, its level chosen by description.
        await page.goto(`${base}/conta/formacoes/`);
        await page.fill('#instituicao', 'Universidade Federal do Rio Grande do Norte');
        await page.fill('#curso', 'Enfermagem');
        await page.selectOption('#grau_formacao', { label: 'Graduação' });
        await page.fill('#data_inicio', '2010-02-01');
        await page.fill('#data_fim', '2014-12-15');
        await page.fill('#municipio', 'Natal');
        await submit(page);
        assert.match(await page.locator('ul.entries').textContent(), /Enfermagem/);
        await checkPage(page, 'conta-formacoes');

        // The tax-id validation: a wrong mother's name, then the right data.
        await page.goto(`${base}/conta/validacao/`);
        await checkPage(page, 'conta-validacao');
        await page.fill('#data_nascimento', '1991-07-21');
        await page.fill('#nome_mae', 'Maria Pereira Lima');
        await submit(page);
        assert.ok(await page.locator('.message[role="alert"]').isVisible(), 'the mismatch is announced');
        await checkPage(page, 'conta-validacao-erro');
        await page.fill('#data_nascimento', '1991-07-21');
        await page.fill('#nome_mae', 'joana  pereira LIMA');
        await submit(page);
        assert.match(await page.locator('.notice[role="status"]').textContent(), /validado/);
        await checkPage(page, 'conta-validacao-feita');

        // The host application: the provider session is there, so straight to consent.
        const authorize = watchAuthorize(page);
        await page.goto(`${base}/auth/login/`);
        await page.locator('h1', { hasText: 'Autorizar acesso' }).waitFor();
        await Promise.all([page.waitForURL(`${base}/auth/me/`), page.click('button[name="action"][value="approve"]')]);
        await page.locator('main table').waitFor();
        const shown = await recordOnPage(page);
        assert.equal(shown.username?.text, '123.***.***-09');
        assert.equal(shown.birth_date?.text, '**/**/1991', 'the tax authority answers now');
        for (const column of ['mother_name', 'city', 'state']) {
            assert.ok(shown[column] && !shown[column].empty, `${column} is filled: ${JSON.stringify(shown[column])}`);
        }
        assert.match(shown.profile?.text ?? '', /Enfermagem/, 'his degree is in the answer');
        const row = await hostRow('12345678909');
        assert.equal(row.birth_date, '1991-07-21');

        // A second login: no consent page.
        await leaveHost(page);
        authorize.length = 0;
        await page.goto(`${base}/auth/login/`);
        await page.waitForURL(`${base}/auth/me/`);
        assert.ok(!authorize.includes(200), `no consent page the second time: ${authorize}`);

        // Who read his data.
        await page.goto(`${base}/conta/acessos/`);
        const report = await page.locator('table.accesses tbody').textContent();
        assert.match(report, /Aplicação de demonstração/);
        assert.ok((await page.locator('table.accesses tbody tr').count()) >= 2, 'one row per profile read');
        await checkPage(page, 'conta-acessos');

        // Revoke it; the next login asks for consent again.
        await page.goto(`${base}/conta/aplicativos/`);
        assert.match(await page.locator('ul.apps').textContent(), /Aplicação de demonstração/);
        await checkPage(page, 'conta-aplicativos');
        await submit(page, 'ul.apps button:has-text("Revogar")');
        // A confirmation step first: what will happen, and nothing revoked yet.
        assert.match(await page.locator('h1').textContent(), /^Revogar o acesso de Aplicação de demonstração\?$/);
        await checkPage(page, 'conta-aplicativos-confirmar');
        await submit(page, 'main form button:has-text("Revogar")');
        assert.ok(await page.locator('.notice[role="status"]').isVisible(), 'the revocation is confirmed');
        assert.equal(await page.locator('ul.apps').count(), 0, 'nothing left to revoke');
        await checkPage(page, 'conta-aplicativos-revogado');
        await leaveHost(page);
        await page.goto(`${base}/auth/login/`);
        await page.locator('h1', { hasText: 'Autorizar acesso' }).waitFor();

        // The remaining pages of the account.
        await page.goto(`${base}/conta/senha/`);
        assert.equal(await page.locator('h1').textContent(), 'Alterar senha');
        await checkPage(page, 'conta-senha');
        await page.goto(`${base}/conta/sair/`);
        await checkPage(page, 'conta-sair');
        await submit(page);
        assert.equal(new URL(page.url()).pathname, '/conta/entrar/');
    } catch (e) {
        await page.screenshot({ path: path.join(OUT, 'failure-bruno.png'), fullPage: true }).catch(() => {});
        throw e;
    } finally {
        await context.close();
    }
});

test('carla signs up, and her host row is created without the tax authority columns', { timeout: TEST_MS }, async () => {
    const { context, page } = await freshPage();
    try {
        await page.goto(`${base}/conta/entrar/`);
        await Promise.all([page.waitForURL(`${base}/conta/cadastro/`), page.click('a:has-text("Criar conta")')]);
        await checkPage(page, 'conta-cadastro');
        await page.fill('#cpf', '111.444.777-35');
        await page.fill('#nome', 'Carla Dias Nunes');
        await page.fill('#email', 'carla@example.org');
        await page.fill('#username', 'carla');
        await page.fill('#password', '11144477735');
        await page.fill('#password_confirmacao', '11144477735');
        await submit(page);
        assert.ok((await page.locator('.field-error').count()) >= 1, 'a password equal to the CPF is refused');
        assert.equal(await page.inputValue('#nome'), 'Carla Dias Nunes', 'kept as typed');
        await checkPage(page, 'conta-cadastro-erro');
        await page.fill('#password', 'girassol-de-outono-7');
        await page.fill('#password_confirmacao', 'girassol-de-outono-7');
        await submit(page);
        assert.equal(page.url(), `${base}/conta/`);
        assert.match(await page.locator('main').textContent(), /111\.\*\*\*\.\*\*\*-35/);

        await page.goto(`${base}/auth/login/`);
        await page.locator('h1', { hasText: 'Autorizar acesso' }).waitFor();
        await Promise.all([page.waitForURL(`${base}/auth/me/`), page.click('button[name="action"][value="approve"]')]);
        await page.locator('main table').waitFor();
        const shown = await recordOnPage(page);
        assert.equal(shown.first_name?.text, 'Carla');
        assert.equal(shown.last_name?.text, 'Dias Nunes');
        for (const column of ['birth_date', 'mother_name', 'city', 'state']) {
            assert.ok(!shown[column] || shown[column].empty, `${column} is empty: ${JSON.stringify(shown[column])}`);
        }
        const row = await hostRow('11144477735');
        for (const column of ['birth_date', 'mother_name', 'city', 'state']) {
            assert.equal(row[column], null, `${column} is NULL`);
        }
        assert.equal(await sql(DB, 'SELECT count(*) FROM host_users').then((s) => s.trim()), '3', 'ana, bruno and carla');
        // Logging in with her CPF works as well as with her username.
        await page.goto(`${base}/conta/sair/`);
        await submit(page);
        await page.fill('input[name="username"]', '11144477735');
        await page.fill('input[name="password"]', 'girassol-de-outono-7');
        await submit(page);
        assert.equal(page.url(), `${base}/conta/`);
    } finally {
        await context.close();
    }
});

test('ana again: her consent is remembered, no consent page the second time', { timeout: TEST_MS }, async () => {
    const { context, page } = await freshPage();
    try {
        await page.goto(`${base}/auth/login/`);
        assert.equal(await page.locator('h1').textContent(), 'Entrar');
        await page.fill('input[name="username"]', 'ana');
        await page.fill('input[name="password"]', 'ana-demo-2026');
        await Promise.all([page.waitForURL(`${base}/auth/me/`), page.click('button[type="submit"]')]);
        await page.locator('main table').waitFor();
        const shown = await recordOnPage(page);
        assert.equal(shown.username?.text, '529.***.***-25');
        const reads = await sql(DB, "SELECT count(*) FROM access_log WHERE client_id = 'demo-host'");
        assert.ok(Number(reads.trim()) >= 2, `each login's profile read is in the access report: ${reads}`);
    } finally {
        await context.close();
    }
});

test('denied consent ends on the 403 error page, without a host session', { timeout: TEST_MS }, async () => {
    // Ana's consent from the tests above is remembered; withdraw it (as her
    // account's page of authorized applications does) so that the provider
    // asks again.
    await sql(DB, "DELETE FROM oauth_grants WHERE client_id = 'demo-host'");
    const { context, page } = await freshPage();
    try {
        const callback = await throughTheProvider(page, 'ana', 'ana-demo-2026', 'deny');
        assert.equal(callback.status(), 403);
        assert.match(page.url(), /\/auth\/callback\/\?.*error=access_denied/);
        await page.locator('h1').waitFor();
        assert.equal(await page.locator('h1').textContent(), 'Acesso negado');
        assert.ok(await page.locator('.message[role="alert"]').isVisible(), 'the reason is shown');
        assert.equal(await page.locator('a.button').getAttribute('href'), '/auth/login/', 'a way to try again');
        await checkPage(page, 'auth-error-denied');
        const cookies = (await context.cookies()).map((c) => c.name);
        assert.ok(!cookies.includes('credencial_host_session'), `no host session: ${cookies}`);
    } finally {
        await context.close();
    }
});

test('the other pages: a wrong password, an unknown client, a callback nobody started', { timeout: TEST_MS }, async () => {
    const { context, page } = await freshPage();
    try {
        await page.goto(`${base}/auth/login/`);
        await page.fill('input[name="username"]', 'ana');
        await page.fill('input[name="password"]', 'not-her-password');
        await Promise.all([page.waitForURL(/\/oauth\/authorize\//), page.click('button[type="submit"]')]);
        await page.locator('.message[role="alert"]').waitFor();
        assert.equal(
            await page.locator('.message[role="alert"]').textContent(),
            'Usuário ou senha inválidos. Se a sua conta foi desativada, procure a equipe que administra o serviço.',
        );
        assert.equal(await page.inputValue('input[name="username"]'), 'ana', 'the username is kept');
        await checkPage(page, 'oauth-login-error');

        const unknown = new URLSearchParams({
            response_type: 'code',
            client_id: 'nobody-registered-this',
            redirect_uri: 'https://evil.example/cb',
            scope: 'cpf',
            state: 'x',
        });
        const refused = await page.goto(`${base}/oauth/authorize/?${unknown}`);
        assert.equal(refused.status(), 400);
        assert.equal(await page.locator('h1').textContent(), 'Não foi possível continuar');
        assert.ok(await page.locator('.message[role="alert"]').isVisible(), 'the reason is shown');
        await checkPage(page, 'oauth-error');
        // The first Tab reaches the skip link, shown on screen, which leads to <main>.
        await page.keyboard.press('Tab');
        const skip = page.locator('a.skip');
        assert.equal(await skip.evaluate((a) => a === document.activeElement), true, 'the skip link comes first');
        const box = await skip.boundingBox();
        assert.ok(box && box.y >= 0, `the focused skip link is on screen: ${JSON.stringify(box)}`);
        await page.screenshot({ path: path.join(OUT, 'skip-link-focused-1100.png') });
        await page.keyboard.press('Enter');
        assert.equal(await page.evaluate(() => document.activeElement?.id), 'conteudo', 'focus moves to the content');

        const stray = await page.goto(`${base}/auth/callback/?code=abc&state=never-started`);
        assert.equal(stray.status(), 400);
        assert.equal(await page.locator('h1').textContent(), 'Não foi possível concluir a entrada');
        await checkPage(page, 'auth-error-state');
    } finally {
        await context.close();
    }
});

test('admin: registers an application, disables cnes for demo-host, deactivates bruno', { timeout: 2 * TEST_MS }, async () => {
    const { context, page } = await freshPage();
    try {
        // The panel sends a browser without a session to the account's login, and back.
        await page.goto(`${base}/admin/`);
        assert.equal(new URL(page.url()).pathname, '/conta/entrar/');
        await page.fill('input[name="username"]', 'admin');
        await page.fill('input[name="password"]', 'admin-demo-2026');
        await submit(page);
        assert.equal(page.url(), `${base}/admin/`);
        assert.equal(await page.locator('h1').textContent(), 'Administração');
        await checkPage(page, 'admin-inicio');

        // A new application; its secret is shown once.
        await page.goto(`${base}/admin/aplicativos/`);
        assert.match(await page.locator('table.apps-admin').textContent(), /demo-host/);
        await checkPage(page, 'admin-aplicativos');
        await page.click('a:has-text("Cadastrar aplicação")');
        await page.locator('h1', { hasText: 'Nova aplicação' }).waitFor();
        await page.fill('#client_id', 'portal-da-prefeitura');
        await page.fill('#nome', 'Portal da Prefeitura');
        await page.fill('#redirect_uris', 'ftp://portal.example.gov.br/retorno');
        await submit(page);
        assert.ok((await page.locator('.field-error').count()) >= 1, 'a bad redirect URI is refused');
        assert.equal(await page.inputValue('#nome'), 'Portal da Prefeitura', 'kept as typed');
        assert.equal(await page.evaluate(() => document.activeElement.id), 'redirect_uris', 'the refused field has the focus');
        await checkPage(page, 'admin-aplicativo-novo-erro');
        await page.fill('#redirect_uris', 'https://portal.example.gov.br/retorno');
        await page.check('#escopo_cnes');
        await submit(page);
        const secret = await page.inputValue('#segredo');
        assert.ok(secret.length >= 32, `the secret is shown once: ${secret.length} characters`);
        await checkPage(page, 'admin-aplicativo-segredo');
        const stored = await sql(DB, "SELECT secret_hash FROM oauth_clients WHERE client_id = 'portal-da-prefeitura'");
        assert.ok(stored.trim().startsWith('pbkdf2_sha256$') && !stored.includes(secret), 'only a hash is stored');
        // A new secret asks first; "Cancelar" leaves the secret as it was.
        await page.goto(`${base}/admin/aplicativos/portal-da-prefeitura/`);
        await submit(page, 'button:has-text("Gerar novo segredo")');
        assert.equal(await page.locator('h1').textContent(), 'Gerar um novo segredo para Portal da Prefeitura?');
        await checkPage(page, 'admin-aplicativo-segredo-confirmar');
        await Promise.all([page.waitForNavigation(), page.click('main a:has-text("Cancelar")')]);
        assert.equal(new URL(page.url()).pathname, '/admin/aplicativos/portal-da-prefeitura/');
        const kept = await sql(DB, "SELECT secret_hash FROM oauth_clients WHERE client_id = 'portal-da-prefeitura'");
        assert.equal(kept, stored, 'nothing changed without the confirmation');

        // demo-host without cnes.
        await page.goto(`${base}/admin/aplicativos/demo-host/`);
        await checkPage(page, 'admin-aplicativo');
        assert.equal(await page.isChecked('#escopo_cnes'), true);
        await page.uncheck('#escopo_cnes');
        await submit(page, 'form[action$="/escopos/"] button[type="submit"]');
        assert.ok(await page.locator('.notice[role="status"]').isVisible(), 'the change is confirmed');
        assert.equal(await page.isChecked('#escopo_cnes'), false);

        // bruno, found by his CPF, deactivated.
        await page.goto(`${base}/admin/usuarios/`);
        await page.fill('#q', '123.456.789-09');
        await submit(page);
        assert.match(await page.locator('table.accounts tbody').textContent(), /bruno/);
        assert.doesNotMatch(await page.locator('main').textContent(), /123\.456\.789-09|12345678909/, 'the CPF is masked');
        await checkPage(page, 'admin-usuarios');
        await Promise.all([page.waitForURL(/\/admin\/usuarios\/\d+\/$/), page.click('table.accounts a:has-text("bruno")')]);
        await checkPage(page, 'admin-usuario');
        await submit(page, 'button:has-text("Desativar a conta")');
        assert.match(await page.locator('h1').textContent(), /^Desativar a conta de .*bruno.*\?$/);
        await checkPage(page, 'admin-usuario-confirmar');
        await submit(page, 'main form button:has-text("Desativar a conta")');
        assert.ok(await page.locator('.notice[role="status"]').isVisible(), 'the deactivation is confirmed');
        assert.match(await page.locator('dl.facts').textContent(), /Desativada/);

        // demo-host's access to the user-management API: both permissions
        // and its own tokens (client_credentials), asked first; then a
        // static token, which answers /usuarios/.
        await page.goto(`${base}/admin/aplicativos/demo-host/`);
        await Promise.all([page.waitForURL(/\/api\/$/), page.click('a:has-text("Acesso à API de usuários")')]);
        await checkPage(page, 'admin-aplicativo-api');
        for (const box of await page.locator('fieldset.api-permissions input[type="checkbox"]').all()) await box.check();
        await submit(page, 'button[value="acesso"]');
        assert.match(await page.locator('h1').textContent(), /^Permitir que .* obtenha tokens próprios/);
        await checkPage(page, 'admin-aplicativo-api-acesso-confirmar');
        await submit(page, 'main form button:has-text("Permitir")');
        assert.ok(await page.locator('.notice[role="status"]').isVisible(), 'the change is confirmed');
        assert.equal(await page.isChecked('#client_credentials'), true);
        await checkPage(page, 'admin-aplicativo-api-acesso');
        await submit(page, 'button[value="token"]');
        assert.match(await page.locator('h1').textContent(), /^Emitir um token da API de usuários/);
        await checkPage(page, 'admin-aplicativo-api-confirmar');
        await submit(page, 'main form button:has-text("Emitir token")');
        const token = (await page.locator('code.api-token').textContent()).trim();
        await checkPage(page, 'admin-aplicativo-api-token');
        const found = await fetch(`${base}/usuarios/52998224725/`, { headers: { Authorization: `Token ${token}` } });
        assert.equal(found.status, 200, 'the new token reads a user');
        assert.equal((await found.json()).username, 'ana');

        // A new account with a temporary password, then another one set on her page.
        await page.goto(`${base}/admin/usuarios/`);
        await Promise.all([page.waitForURL(/\/novo\/$/), page.click('a:has-text("Cadastrar conta")')]);
        await page.fill('#username', 'dora');
        await page.fill('#nome', 'Dora Maria Alves');
        await page.fill('#email', 'dora@example.org');
        await page.fill('#cpf', '111.444.777-00');
        await submit(page);
        assert.ok((await page.locator('.field-error').count()) >= 1, 'a CPF with wrong check digits is refused');
        assert.equal(await page.evaluate(() => document.activeElement.id), 'cpf', 'the refused field has the focus');
        await checkPage(page, 'admin-usuario-novo-erro');
        await page.fill('#cpf', '');
        await submit(page);
        assert.ok((await page.locator('p.secret code').textContent()).trim().length >= 12, 'the password is shown once');
        await checkPage(page, 'admin-usuario-criado');
        await page.goto(`${base}/admin/usuarios/?q=dora`);
        await Promise.all([page.waitForURL(/\/admin\/usuarios\/\d+\/$/), page.click('table.accounts a:has-text("dora")')]);
        await submit(page, 'button:has-text("Definir uma senha temporária")');
        assert.match(await page.locator('main p').first().textContent(), /A senha atual deixa de valer/);
        await checkPage(page, 'admin-usuario-senha-confirmar');
        await submit(page, 'main form button:has-text("Definir a senha temporária")');
        const temporary = (await page.locator('p.secret code').textContent()).trim();
        await checkPage(page, 'admin-usuario-senha-temporaria');

        // Dora's first login goes to the password page.
        {
            const dora = await freshPage();
            try {
                await dora.page.goto(`${base}/conta/entrar/`);
                await dora.page.fill('input[name="username"]', 'dora');
                await dora.page.fill('input[name="password"]', temporary);
                await submit(dora.page);
                assert.equal(new URL(dora.page.url()).pathname, '/conta/senha/', 'sent to change the password');
                await checkPage(dora.page, 'conta-senha-temporaria');
            } finally {
                await dora.context.close();
            }
        }

        // The audit trail holds the three actions, by admin.
        await page.goto(`${base}/admin/auditoria/?ator=admin`);
        const trail = await page.locator('table.audit tbody').textContent();
        for (const action of ['Aplicação criada', 'Escopos da aplicação alterados', 'Conta desativada']) {
            assert.match(trail, new RegExp(action), `${action} in the audit trail`);
        }
        assert.ok(!trail.includes(secret), 'never the secret');
        await checkPage(page, 'admin-auditoria');
    } catch (e) {
        await page.screenshot({ path: path.join(OUT, 'failure-admin.png'), fullPage: true }).catch(() => {});
        throw e;
    } finally {
        await context.close();
    }

    // bruno cannot log in at the host application any more.
    {
        const { context, page } = await freshPage();
        try {
            await page.goto(`${base}/auth/login/`);
            await page.fill('input[name="username"]', 'bruno');
            await page.fill('input[name="password"]', 'bruno-demo-2026');
            await Promise.all([page.waitForURL(/\/oauth\/authorize\//), page.click('button[type="submit"]')]);
            const message = await page.locator('.message[role="alert"]').textContent();
            assert.match(message, /desativada/, `a clear message: ${message}`);
            await checkPage(page, 'oauth-login-desativada');
        } finally {
            await context.close();
        }
    }

    // ana's next profile read through demo-host has no cnes.
    {
        const { context, page } = await freshPage();
        try {
            await page.goto(`${base}/auth/login/`);
            await page.fill('input[name="username"]', 'ana');
            await page.fill('input[name="password"]', 'ana-demo-2026');
            await submit(page, 'button[type="submit"]');
            // Her consent was withdrawn by the test before: approve again if asked.
            if (new URL(page.url()).pathname === '/oauth/authorize/') {
                const scopes = await page.locator('main li').allTextContents();
                assert.ok(!scopes.some((s) => /cnes/i.test(s)), `cnes is not asked for: ${scopes}`);
                await Promise.all([page.waitForURL(`${base}/auth/me/`), page.click('button[name="action"][value="approve"]')]);
            }
            await page.locator('main table').waitFor();
            const shown = await recordOnPage(page);
            assert.match(shown.profile?.text ?? '', /formacao_academica/, 'the profile is there');
            assert.doesNotMatch(shown.profile?.text ?? '', /"cnes"/, 'without cnes');
        } finally {
            await context.close();
        }
    }
});
