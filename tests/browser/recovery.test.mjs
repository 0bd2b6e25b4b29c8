// "Esqueci minha senha" in a real browser, through the demo's sandbox
// mailbox (no mail server):
// - bruno follows "Esqueci minha senha" from the login form, types his
//   username and is told a link was sent (the same words whatever he had
//   typed).
// - The sandbox mailbox (/_sandbox/email/) shows the mail; its link opens
//   the new-password form; a confirmation that does not match is refused
//   with the field named; the new password is saved.
// - The same link again is refused ("Link inválido"); the notice of the
//   reset arrives; bruno logs in with the new password.
// - admin opens the panel's mail page.
// Every page is photographed at 1280 and 360 px and scanned with axe.
//
// Needs: the debug binary (`cargo build --bin credencial`) and Chromium.
// Run by hand: cd tests/browser && npm ci && node --test recovery.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkPage, freshPage as fresh, TEST_MS, useDemo } from './harness.mjs';

const NEW_PASSWORD = 'ipe-amarelo-no-cerrado-2026';
const run = useDemo('recovery');

/** Clicks `target` and waits for the page it leads to. */
async function submit(page, target) {
    await Promise.all([page.waitForNavigation(), page.click(target)]);
}

/** Reloads the sandbox mailbox until it holds `count` mails; their subjects. */
async function mailbox(page, count) {
    for (let tries = 0; tries < 50; tries += 1) {
        await page.goto(`${run.base}/_sandbox/email/`);
        const subjects = await page.locator('article.mail h2').allTextContents();
        if (subjects.length >= count) return subjects;
        await page.waitForTimeout(200);
    }
    assert.fail(`the sandbox mailbox never held ${count} mail(s)`);
}

test('bruno resets his password through the sandbox mailbox', { timeout: TEST_MS }, async () => {
    const { context, page } = await fresh(run.browser);
    try {
        await page.goto(`${run.base}/conta/entrar/`);
        await submit(page, 'a:has-text("Esqueci minha senha")');
        assert.equal(new URL(page.url()).pathname, '/conta/recuperar/');
        await checkPage(page, 'conta-recuperar');

        // An empty form names the field.
        await submit(page, 'button:has-text("Enviar link")');
        assert.match(await page.locator('#identificador-erro').textContent(), /Digite o CPF/);
        await page.getByLabel('CPF, nome de usuário ou e-mail').fill('bruno');
        await submit(page, 'button:has-text("Enviar link")');
        assert.match(await page.locator('main .notice').textContent(), /enviamos agora um link/);
        await checkPage(page, 'conta-recuperar-enviado');

        const subjects = await mailbox(page, 1);
        assert.match(subjects[0], /Redefinição de senha/);
        assert.match(await page.locator('article.mail').first().textContent(), /bruno\.lima@demo\.credencial\.gov\.br/);
        await checkPage(page, 'sandbox-email');
        const link = page.locator('article.mail a[href*="/conta/recuperar/"]').first();
        const href = await link.getAttribute('href');
        await Promise.all([page.waitForNavigation(), link.click()]);
        assert.equal(await page.locator('h1').textContent(), 'Criar uma nova senha');
        assert.match(await page.locator('main').textContent(), /para a conta bruno/);
        await checkPage(page, 'conta-nova-senha');

        await page.getByLabel('Nova senha', { exact: true }).fill(NEW_PASSWORD);
        await page.getByLabel('Confirme a nova senha').fill('outra-coisa');
        await submit(page, 'button:has-text("Salvar nova senha")');
        assert.match(await page.locator('#password_confirmacao-erro').textContent(), /não confere/);
        await checkPage(page, 'conta-nova-senha-erro');

        await page.getByLabel('Nova senha', { exact: true }).fill(NEW_PASSWORD);
        await page.getByLabel('Confirme a nova senha').fill(NEW_PASSWORD);
        await submit(page, 'button:has-text("Salvar nova senha")');
        assert.equal(await page.locator('h1').textContent(), 'Senha redefinida');
        await checkPage(page, 'conta-senha-redefinida');

        // Once only.
        const again = await page.goto(href);
        assert.equal(again.status(), 410);
        assert.equal(await page.locator('h1').textContent(), 'Link inválido');
        await checkPage(page, 'conta-link-invalido');

        const notices = await mailbox(page, 2);
        assert.match(notices[0], /foi redefinida/);

        await page.goto(`${run.base}/conta/entrar/`);
        await page.fill('input[name="username"]', 'bruno');
        await page.fill('input[name="password"]', NEW_PASSWORD);
        await submit(page, 'main form button:has-text("Entrar")');
        assert.equal(new URL(page.url()).pathname, '/conta/');
    } finally {
        await context.close();
    }
});

test('ana confirms her e-mail through the sandbox mailbox', { timeout: TEST_MS }, async () => {
    const { context, page } = await fresh(run.browser);
    try {
        await page.goto(`${run.base}/conta/entrar/`);
        await page.fill('input[name="username"]', 'ana');
        await page.fill('input[name="password"]', 'ana-demo-2026');
        await submit(page, 'main form button:has-text("Entrar")');
        assert.match(await page.locator('dl.facts').textContent(), /não confirmado/);
        await checkPage(page, 'conta-email-nao-confirmado');
        await submit(page, 'button:has-text("Reenviar link de confirmação")');
        assert.match(await page.locator('main .notice').textContent(), /link de confirmação/);

        const before = (await mailbox(page, 1)).length;
        let link;
        for (let tries = 0; tries < 50 && !link; tries += 1) {
            await page.goto(`${run.base}/_sandbox/email/`);
            const links = page.locator('article.mail a[href*="/conta/email/confirmar/"]');
            if (await links.count()) link = links.first();
            else await page.waitForTimeout(200);
        }
        assert.ok(link, `a confirmation link among ${before} mails`);
        await Promise.all([page.waitForNavigation(), link.click()]);
        assert.equal(await page.locator('h1').textContent(), 'Confirmar e-mail');
        await checkPage(page, 'conta-email-confirmar');
        await submit(page, 'button:has-text("Confirmar meu e-mail")');
        assert.equal(await page.locator('h1').textContent(), 'E-mail confirmado');
        await checkPage(page, 'conta-email-confirmado');
        await page.goto(`${run.base}/conta/`);
        assert.match(await page.locator('dl.facts').textContent(), /\(confirmado\)/);
    } finally {
        await context.close();
    }
});

test('staff see the outbox in the panel', { timeout: TEST_MS }, async () => {
    const { context, page } = await fresh(run.browser);
    try {
        await page.goto(`${run.base}/conta/entrar/?next=${encodeURIComponent('/admin/emails/')}`);
        await page.fill('input[name="username"]', 'admin');
        await page.fill('input[name="password"]', 'admin-demo-2026');
        await submit(page, 'main form button:has-text("Entrar")');
        assert.equal(new URL(page.url()).pathname, '/admin/emails/');
        assert.match(await page.locator('main').textContent(), /Nenhuma mensagem com falha/);
        await checkPage(page, 'admin-emails');
    } finally {
        await context.close();
    }
});
