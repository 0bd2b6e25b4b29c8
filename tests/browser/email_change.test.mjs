// A change of e-mail in a real browser, through the demo's sandbox mailbox:
// - bruno types a new address in "Alterar meus dados": the overview says
//   the change waits for its link, and his address has not changed.
// - The mail to the new address carries the link; its page asks for a
//   button press, which applies the change.
// - The old address gets the undo link; its page's button puts the old
//   address back and ends bruno's sessions (his browser is logged out).
// Every page is photographed at 1280 and 360 px and scanned with axe.
//
// Needs: the debug binary (`cargo build --bin credencial`) and Chromium.
// Run by hand: cd tests/browser && npm ci && node --test email_change.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkPage, freshPage as fresh, TEST_MS, useDemo } from './harness.mjs';

const OLD = 'bruno.lima@demo.credencial.gov.br';
const NEW = 'bruno.novo@demo.credencial.gov.br';
const run = useDemo('email-change');

/** Clicks `target` and waits for the page it leads to. */
async function submit(page, target) {
    await Promise.all([page.waitForNavigation(), page.click(target)]);
}

/** The first link under `path` in the sandbox mailbox's mail to `to`, waiting for it. */
async function linkTo(page, to, path) {
    for (let tries = 0; tries < 50; tries += 1) {
        await page.goto(`${run.base}/_sandbox/email/`);
        const mails = page.locator('article.mail', { hasText: to }).locator(`a[href*="${path}"]`);
        if (await mails.count()) return mails.first();
        await page.waitForTimeout(200);
    }
    assert.fail(`no mail to ${to} with a ${path} link`);
}

test('bruno changes his e-mail and his old address undoes it', { timeout: TEST_MS }, async () => {
    const { context, page } = await fresh(run.browser);
    try {
        await page.goto(`${run.base}/conta/entrar/`);
        await page.fill('input[name="username"]', 'bruno');
        await page.fill('input[name="password"]', 'bruno-demo-2026');
        await submit(page, 'main form button:has-text("Entrar")');

        await page.fill('input[name="email"]', NEW);
        await submit(page, 'form[aria-labelledby="alterar"] button[type="submit"]');
        assert.match(await page.locator('main .notice').first().textContent(), /só muda quando você abrir o link/);
        const pending = await page.locator('main').textContent();
        assert.match(pending, /Troca de e-mail pendente/);
        assert.match(await page.locator('dl.facts').textContent(), new RegExp(OLD.replaceAll('.', '\\.')));
        await checkPage(page, 'conta-email-troca-pendente');

        const confirm = await linkTo(page, NEW, '/conta/email/confirmar/');
        await Promise.all([page.waitForNavigation(), confirm.click()]);
        assert.equal(await page.locator('h1').textContent(), 'Confirmar e-mail');
        await submit(page, 'button:has-text("Confirmar meu e-mail")');
        assert.equal(await page.locator('h1').textContent(), 'E-mail alterado');
        await checkPage(page, 'conta-email-alterado');
        await page.goto(`${run.base}/conta/`);
        const facts = await page.locator('dl.facts').textContent();
        assert.match(facts, /bruno\.novo@demo\.credencial\.gov\.br/);
        assert.match(facts, /\(confirmado\)/);
        assert.doesNotMatch(await page.locator('main').textContent(), /Troca de e-mail pendente/);

        const undo = await linkTo(page, OLD, '/conta/email/desfazer/');
        await checkPage(page, 'sandbox-email-desfazer');
        await Promise.all([page.waitForNavigation(), undo.click()]);
        assert.equal(await page.locator('h1').textContent(), 'Desfazer a troca de e-mail');
        await checkPage(page, 'conta-email-desfazer');
        await submit(page, 'button:has-text("Desfazer a troca")');
        assert.equal(await page.locator('h1').textContent(), 'Troca de e-mail desfeita');
        assert.equal(await page.locator('main a:has-text("Redefinir a senha")').getAttribute('href'), '/conta/recuperar/');
        await checkPage(page, 'conta-email-desfeito');

        // Every session ended: the account pages ask for a login again.
        await page.goto(`${run.base}/conta/`);
        assert.equal(new URL(page.url()).pathname, '/conta/entrar/');
    } finally {
        await context.close();
    }
});
