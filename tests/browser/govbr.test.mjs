// "Entrar com gov.br" in a real browser, through the demo's in-process
// gov.br sandbox (/sandbox/govbr/, no network):
// - ana opens the demo's /auth/login/; the provider's login page offers
//   "Entrar com gov.br"; at the sandbox she is Ana Beatriz Souza, level
//   Ouro, with a digital certificate; back at the provider an account
//   holds her CPF, so she logs into it with her password ("Confirme a sua
//   conta" → the login form) and it is linked ("Conta vinculada");
//   "Continuar" leads on to the consent page and /auth/me/ shows her record.
// - carla, who has no account, enters /conta/entrar/ with gov.br at level
//   Prata: "Conta criada", then /conta/; /conta/seguranca/ lists gov.br
//   among "Contas vinculadas", at "nível prata", without the button that
//   undoes the link (her account has no password: the page says why). A
//   second gov.br login goes straight to /conta/.
// Every page is photographed at 1280 and 360 px and scanned with axe (the
// sandbox's page too); the linked-accounts section is photographed on its
// own as well.
//
// Needs: the debug binary (`cargo build --bin credencial`) and Chromium.
// Run by hand: cd tests/browser && npm ci && node --test govbr.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { checkPage, freshPage as fresh, OUT, TEST_MS, useDemo } from './harness.mjs';

const ANA = '52998224725';
const CARLA = '11144477735';
const run = useDemo('govbr');

/** Clicks `target` and waits for the page it leads to. */
async function submit(page, target) {
    await Promise.all([page.waitForNavigation(), page.click(target)]);
}

/**
 * Clicks the login page's "Entrar com gov.br" (checking where it points)
 * and checks the sandbox's page it leads to.
 */
async function toTheSandbox(page) {
    const button = page.locator('a.button.govbr');
    assert.equal(await button.count(), 1, 'one gov.br button');
    assert.equal((await button.textContent()).trim(), 'Entrar com gov.br');
    assert.match(await button.getAttribute('href'), /^\/conta\/entrar\/externo\/govbr\/\?next=/);
    await Promise.all([page.waitForURL(/\/sandbox\/govbr\/authorize\?/), button.click()]);
    assert.equal(await page.locator('h1').textContent(), 'Entrar com gov.br');
    const legends = (await page.locator('main fieldset legend').allTextContents()).map((s) => s.trim());
    assert.deepEqual(legends, ['Cidadão', 'Nível da conta gov.br', 'Forma de entrada']);
    assert.equal(await page.isChecked('input[name="nivel"][value="silver"]'), true, 'Prata is the default level');
    await checkPage(page, 'sandbox-govbr');
}

/** At the sandbox: picks the citizen, the level and the method, and authorizes. */
async function authorize(page, cpf, level, method) {
    await page.check(`input[name="cidadao"][value="${cpf}"]`);
    await page.check(`input[name="nivel"][value="${level}"]`);
    await page.check(`input[name="metodo"][value="${method}"]`);
    await Promise.all([
        page.waitForURL(/\/conta\/entrar\/externo\/govbr\/retorno\/\?/),
        page.click('button[name="acao"][value="autorizar"]'),
    ]);
}

/** The record page's table as {column: text}. */
async function recordOnPage(page) {
    const rows = await page.$$eval('main table tbody tr', (trs) =>
        trs.map((tr) => [tr.dataset.column, tr.querySelector('td').textContent.trim()]),
    );
    return Object.fromEntries(rows);
}

test('ana: /auth/login/, gov.br at level Ouro with a certificate, linked, consent, /auth/me/', { timeout: TEST_MS }, async () => {
    const { context, page } = await fresh(run.browser);
    try {
        await page.goto(`${run.base}/auth/login/`);
        assert.equal(new URL(page.url()).pathname, '/oauth/authorize/', 'sent to the provider');
        assert.equal(await page.locator('h1').textContent(), 'Entrar');
        await checkPage(page, 'oauth-login-govbr');

        await toTheSandbox(page);
        assert.match(await page.locator('main').textContent(), /Ana Beatriz Souza \(CPF 529\.\*\*\*\.\*\*\*-25\)/);
        assert.doesNotMatch(await page.locator('main').textContent(), new RegExp(ANA), 'the CPFs are masked');
        await authorize(page, ANA, 'gold', 'certificado');

        assert.equal(await page.locator('h1').textContent(), 'Confirme a sua conta');
        await checkPage(page, 'conta-govbr-confirmar');
        await submit(page, 'a.button:has-text("Entrar na conta e vincular")');
        assert.equal(new URL(page.url()).pathname, '/conta/entrar/');
        await page.fill('#username', 'ana');
        await page.fill('#password', 'ana-demo-2026');
        await Promise.all([page.waitForURL(`${run.base}/conta/entrar/vincular/`), page.click('main form button[type="submit"]')]);

        assert.equal(await page.locator('h1').textContent(), 'Conta vinculada');
        assert.match(await page.locator('main .notice[role="status"]').textContent(), /vinculada a gov\.br/);
        const next = await page.locator('a.button:has-text("Continuar")').getAttribute('href');
        assert.match(next, /^\/oauth\/authorize\/\?/, `Continuar goes back to the authorization: ${next}`);
        await checkPage(page, 'conta-govbr-vinculada');

        await page.click('a.button:has-text("Continuar")');
        await page.waitForURL((url) => ['/oauth/authorize/', '/auth/me/'].includes(url.pathname));
        if (new URL(page.url()).pathname === '/oauth/authorize/') {
            await page.locator('h1', { hasText: 'Autorizar acesso' }).waitFor();
            await checkPage(page, 'oauth-consent-govbr');
            await Promise.all([page.waitForURL(`${run.base}/auth/me/`), page.click('button[name="action"][value="approve"]')]);
        }
        await page.locator('main table').waitFor();
        assert.equal(await page.locator('h1').textContent(), 'Seu cadastro nesta aplicação');
        const shown = await recordOnPage(page);
        assert.equal(shown.username, '529.***.***-25', 'the CPF masked');
        assert.equal(shown.cpf, '529.***.***-25');
        assert.equal(shown.first_name, 'Ana');
        assert.equal(shown.email, 'ana.souza@demo.credencial.gov.br');
        await checkPage(page, 'auth-me-govbr');
    } catch (e) {
        await page.screenshot({ path: path.join(OUT, 'failure-govbr-ana.png'), fullPage: true }).catch(() => {});
        throw e;
    } finally {
        await context.close();
    }
});

test('carla: a new account from gov.br at level Prata, listed among the linked accounts', { timeout: TEST_MS }, async () => {
    const { context, page } = await fresh(run.browser);
    try {
        await page.goto(`${run.base}/conta/entrar/`);
        assert.equal(await page.locator('h1').textContent(), 'Entrar');
        await checkPage(page, 'conta-entrar-govbr');

        await toTheSandbox(page);
        await authorize(page, CARLA, 'silver', 'senha');
        assert.equal(await page.locator('h1').textContent(), 'Conta criada');
        assert.match(await page.locator('main .notice[role="status"]').textContent(), /Criamos a sua conta/);
        await checkPage(page, 'conta-govbr-criada');

        await submit(page, 'a.button:has-text("Continuar")');
        assert.equal(page.url(), `${run.base}/conta/`);
        assert.equal(await page.locator('h1').textContent(), 'Minha conta');
        assert.match(await page.locator('main').textContent(), /Carla Mendes Rocha/);

        await page.goto(`${run.base}/conta/seguranca/`);
        const section = page.locator('section[aria-labelledby="vinculos"]');
        assert.equal(await section.locator('h2').textContent(), 'Contas vinculadas');
        const words = await section.textContent();
        assert.match(words, /gov\.br/);
        assert.match(words, /nível prata/);
        assert.match(words, /A sua conta não tem senha/);
        assert.equal(await section.locator('button:has-text("Desfazer o vínculo com gov.br")').count(), 0);
        await checkPage(page, 'conta-seguranca-vinculos');
        // The section on its own, at both widths.
        for (const width of [1280, 360]) {
            await page.setViewportSize({ width, height: width < 600 ? 740 : 900 });
            await section.screenshot({ path: path.join(OUT, `conta-seguranca-vinculos-secao-${width}.png`) });
        }

        // Out, and back in with gov.br: no notice page this time.
        await page.goto(`${run.base}/conta/sair/`);
        await submit(page, 'main form button[type="submit"]');
        assert.equal(new URL(page.url()).pathname, '/conta/entrar/');
        await Promise.all([page.waitForURL(/\/sandbox\/govbr\/authorize\?/), page.click('a.button.govbr')]);
        await page.check(`input[name="cidadao"][value="${CARLA}"]`);
        await Promise.all([page.waitForURL(`${run.base}/conta/`), page.click('button[name="acao"][value="autorizar"]')]);
        assert.equal(await page.locator('h1').textContent(), 'Minha conta');
    } catch (e) {
        await page.screenshot({ path: path.join(OUT, 'failure-govbr-carla.png'), fullPage: true }).catch(() => {});
        throw e;
    } finally {
        await context.close();
    }
});
