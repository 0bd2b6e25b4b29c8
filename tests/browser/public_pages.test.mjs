// The pages anyone reaches first, in a real browser: the home page, the
// privacy notice, and the error page a mistyped address gets (at the site's
// root, under /conta/ and under /admin/). Each is in Portuguese with a way
// back, loads no third-party resource and raises no console error (the
// favicon passes the pages' CSP). Every page is photographed at 1280 and
// 360 px and scanned with axe, failing on a violation of any impact.
//
// Needs: the debug binary (`cargo build --bin credencial`) and Chromium.
// Run by hand: cd tests/browser && npm ci && node --test public_pages.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkPage, freshPage as fresh, TEST_MS, useDemo } from './harness.mjs';

const run = useDemo('public-pages');

/** Opens `path`; resolves to the navigation's status. */
async function open(page, path) {
    const answer = await page.goto(`${run.base}${path}`);
    return answer.status();
}

/**
 * Collects the page's console errors (but the one Chromium logs for a page
 * answered 404, which is the point) and requests to other hosts.
 */
function watch(page) {
    const problems = [];
    const expected = (text) => text.includes('status of 404');
    page.on('console', (m) => m.type() === 'error' && !expected(m.text()) && problems.push(`console: ${m.text()}`));
    page.on('request', (r) => !r.url().startsWith(run.base) && problems.push(`request to ${r.url()}`));
    return problems;
}

test('the home page and the privacy notice', { timeout: TEST_MS }, async () => {
    const { context, page } = await fresh(run.browser);
    try {
        const problems = watch(page);
        assert.equal(await open(page, '/'), 200);
        assert.equal(await page.getAttribute('html', 'lang'), 'pt-BR');
        assert.equal(await page.textContent('h1'), 'Sua identidade digital');
        // The demo's institution: its name, logo, gov.br bar and footer links.
        assert.equal(await page.title(), 'Início · ID Sabiá');
        assert.match(await page.textContent('header.bar'), /Instituto Federal do Vale do Sabiá/);
        assert.ok(await page.locator('img.logo').evaluate((img) => img.complete && img.naturalWidth > 0), 'the logo loads');
        assert.ok(await page.isVisible('nav.govbr'), 'the gov.br bar');
        const footer = await page.textContent('footer');
        for (const link of ['Aviso de privacidade', 'Ajuda', 'Fale conosco']) assert.match(footer, new RegExp(link));
        assert.ok(await page.isVisible('a[href="/conta/cadastro/"]'), 'the demo offers sign-up');
        await checkPage(page, 'home');
        await Promise.all([page.waitForNavigation(), page.click('text=Como tratamos seus dados pessoais')]);
        assert.equal(await page.textContent('h1'), 'Aviso de privacidade');
        assert.match(await page.textContent('main'), /1\.825 dias/);
        await checkPage(page, 'privacy');
        assert.equal(await page.getAttribute('link[rel="icon"]', 'href'), '/favicon.svg');
        const icon = await page.request.get(`${run.base}/favicon.ico`);
        assert.equal(icon.headers()['content-type'], 'image/svg+xml');
        assert.deepEqual(problems, []);
    } finally {
        await context.close();
    }
});

test('a mistyped address is a Portuguese page with a way back', { timeout: TEST_MS }, async () => {
    const { context, page } = await fresh(run.browser);
    try {
        const problems = watch(page);
        for (const [path, name] of [['/x', 'not-found'], ['/conta/x', 'not-found-account'], ['/admin/x', 'not-found-admin']]) {
            assert.equal(await open(page, path), 404, path);
            assert.equal(await page.getAttribute('html', 'lang'), 'pt-BR');
            assert.equal(await page.title(), 'Página não encontrada · ID Sabiá');
            assert.equal(await page.textContent('h1'), 'Página não encontrada');
            await checkPage(page, name);
        }
        await Promise.all([page.waitForNavigation(), page.click('text=Ir para a página inicial')]);
        assert.equal(new URL(page.url()).pathname, '/');
        assert.deepEqual(problems, []);
    } finally {
        await context.close();
    }
});
