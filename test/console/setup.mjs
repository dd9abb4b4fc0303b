// Drives the first admin's set-up page (/console/setup#token=…) in a real
// browser, as a newcomer would after reading serve's start-up log: the
// page passes axe-core (WCAG 2.1 A and AA, best practices) and a keyboard
// walk, takes the token out of the address bar, says when the two
// passwords differ, creates the admin and sends the user to the sign-in
// page, where the new admin signs in; the link then refuses a second use.
// test/e2e/console_setup_test.go starts the binary on an empty database,
// reads the link from its log and runs this program. Tokens and
// passwords are never printed.
//
// Environment: CACHEGATE_SETUP_LINK, CACHEGATE_ADMIN_USERNAME,
// CACHEGATE_ADMIN_PASSWORD, CACHEGATE_ARTIFACTS, CHROMIUM (default
// /usr/bin/chromium).

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { chromium } from 'playwright-core';

const require = createRequire(import.meta.url);
const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

const link = mustEnv('CACHEGATE_SETUP_LINK');
const adminName = mustEnv('CACHEGATE_ADMIN_USERNAME');
const adminPassword = mustEnv('CACHEGATE_ADMIN_PASSWORD');
const artifacts = mustEnv('CACHEGATE_ARTIFACTS');
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const WAIT = 15_000;

function mustEnv(name) {
  const v = process.env[name];
  if (!v) {
    console.error(`setup: ${name} is not set`);
    process.exit(2);
  }
  return v;
}

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

async function step(name, fn) {
  try {
    await fn();
    console.log(`ok - ${name}`);
  } catch (err) {
    console.log(`FAIL - ${name}: ${err && err.message ? err.message.split('\n')[0] : err}`);
    throw err;
  }
}

async function axeCheck(page, name) {
  await page.evaluate(axeSource);
  const result = await page.evaluate(() => window.axe.run(document, {
    runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
  }));
  const bad = result.violations.map((v) => `${v.id} (${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')})`);
  check(!bad.length, `axe on ${name}: ${bad.join('; ')}`);
  check(result.passes.length > 0, `axe on ${name} checked nothing`);
}

// keyboardCheck: Tab from the top reaches the skip link first, then every
// enabled control in document order, each with a visible focus outline.
async function keyboardCheck(page, name) {
  const want = await page.evaluate(() => [...document.querySelectorAll('a[href], button:not([disabled]), input:not([disabled])')]
    .map((el, i) => { el.dataset.tab = String(i); return String(i); }));
  await page.evaluate(() => {
    const root = document.documentElement;
    root.tabIndex = -1;
    root.focus();
    root.removeAttribute('tabindex');
  });
  for (let i = 0; i < want.length; i++) {
    await page.keyboard.press('Tab');
    const [id, outline] = await page.evaluate(() => {
      const el = document.activeElement;
      return [el && el.dataset.tab, el ? getComputedStyle(el).outlineStyle : ''];
    });
    check(id === want[i], `${name}: Tab ${i + 1} reached element ${id}, not ${want[i]}`);
    check(outline && outline !== 'none', `${name}: element ${i + 1} has no visible focus outline`);
  }
}

async function main() {
  fs.mkdirSync(artifacts, { recursive: true });
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const cspViolations = [];
  const pageErrors = [];
  await page.exposeFunction('reportCSP', (v) => cspViolations.push(v));
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => window.reportCSP(`${e.violatedDirective} ${e.blockedURI}`));
  });
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  try {
    await step('the link opens the set-up page and takes the token out of the address bar', async () => {
      await page.goto(link);
      await page.getByRole('heading', { level: 1, name: 'Create the first administrator' }).waitFor({ timeout: WAIT });
      check(!page.url().includes('token'), 'the token is still in the address bar');
    });
    await step('the set-up page passes axe and the keyboard walk', async () => {
      await axeCheck(page, 'set-up');
      await keyboardCheck(page, 'set-up');
      await page.screenshot({ path: path.join(artifacts, 'setup.png'), fullPage: true });
      await page.setViewportSize({ width: 375, height: 812 });
      const wide = await page.evaluate(() => document.documentElement.scrollWidth);
      check(wide <= 375, `the set-up page is ${wide} px wide at 375`);
      await page.screenshot({ path: path.join(artifacts, 'setup-375.png'), fullPage: true });
      await page.setViewportSize({ width: 1280, height: 900 });
    });
    await step('two different passwords are refused before anything is sent', async () => {
      await page.getByLabel('Username').fill(adminName);
      await page.getByLabel('Password', { exact: true }).fill(adminPassword);
      await page.getByLabel('Password again').fill(`${adminPassword}x`);
      await page.getByRole('button', { name: 'Create the administrator' }).click();
      await page.getByText('The two passwords differ.').waitFor({ timeout: WAIT });
    });
    await step('the page creates the admin and sends the user to the sign-in', async () => {
      await page.getByLabel('Password again').fill(adminPassword);
      await page.getByRole('button', { name: 'Create the administrator' }).click();
      await page.getByText(`Administrator ${adminName} created.`, { exact: false }).waitFor({ timeout: WAIT });
      await page.waitForURL(/\/console\/#\/signin$/, { timeout: WAIT });
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor({ timeout: WAIT });
    });
    await step('the new admin signs in to the console', async () => {
      await page.getByLabel('Username').fill(adminName);
      await page.getByLabel('Password').fill(adminPassword);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor({ timeout: WAIT });
    });
    await step('the link opened again refuses to make a second admin', async () => {
      await page.goto(link);
      await page.getByLabel('Username').fill('second');
      await page.getByLabel('Password', { exact: true }).fill(adminPassword);
      await page.getByLabel('Password again').fill(adminPassword);
      await page.getByRole('button', { name: 'Create the administrator' }).click();
      await page.getByText('this set-up link was already used', { exact: false }).waitFor({ timeout: WAIT });
      check(await page.getByRole('button', { name: 'Create the administrator' }).isDisabled(), 'the form stays usable after a spent link');
    });
    await step('no CSP violation and no script error', async () => {
      check(!cspViolations.length, `CSP violations: ${cspViolations.join('; ')}`);
      check(!pageErrors.length, `page errors: ${pageErrors.join('; ')}`);
    });
    console.log('set-up session complete');
  } finally {
    await browser.close();
  }
}

main().catch(() => process.exit(1));
