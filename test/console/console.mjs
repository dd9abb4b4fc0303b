// Drives the web console (/console/) in a real browser: Debian's Chromium
// through playwright-core (no browser download; executablePath is the
// system one), as an administrator would use it, and checks each page with
// axe-core (WCAG 2.1 A and AA rules) and the keyboard (Tab walks the
// interactive elements in document order, the skip link first). A
// screenshot of each page, at 1280 and at 375 pixels wide, goes to
// CACHEGATE_ARTIFACTS. test/e2e/console_test.go starts the binary, makes
// the administrator and runs this program; a failed step exits non-zero
// naming it. Tokens and passwords are never printed.
//
// Environment: CACHEGATE_URL, CACHEGATE_ADMIN_USERNAME,
// CACHEGATE_ADMIN_PASSWORD, CACHEGATE_ARTIFACTS, CHROMIUM (default
// /usr/bin/chromium).

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { chromium } from 'playwright-core';

const require = createRequire(import.meta.url);
const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

const base = mustEnv('CACHEGATE_URL');
const adminName = mustEnv('CACHEGATE_ADMIN_USERNAME');
const adminPassword = mustEnv('CACHEGATE_ADMIN_PASSWORD');
const artifacts = mustEnv('CACHEGATE_ARTIFACTS');
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';

// Bounds of one wait in the browser, and of a server-side effect (a
// revoked session is refused within 1 s on every replica: 5 s is ample).
const WAIT = 15_000;
const EFFECT = 5_000;

function mustEnv(name) {
  const v = process.env[name];
  if (!v) {
    console.error(`console: ${name} is not set`);
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

// --- the API, over plain HTTP from the test (not through the console) ---

async function http(method, p, { token, body } = {}) {
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(base + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, json };
}

async function login(username, password) {
  const r = await http('POST', '/auth/login', { body: { username, password } });
  check(r.status === 201, `login of ${username}: ${r.status}`);
  return r.json;
}

function claims(token) {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
}

// eventually polls f until it returns true, for at most ms.
async function eventually(ms, what, f) {
  const end = Date.now() + ms;
  for (;;) {
    if (await f()) return;
    check(Date.now() < end, `${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// --- checks of a page ---

const cspViolations = [];
const pageErrors = [];
const cachedAdminAnswers = [];
let adminAnswers = 0;

async function axeCheck(page, name) {
  // evaluate runs through the DevTools protocol, which the page's CSP
  // does not govern; an inline <script> would be refused, as it should.
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(axeSource);
  const result = await page.evaluate(() => window.axe.run(document, {
    runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
  }));
  const bad = result.violations.map((v) => `${v.id} (${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')})`);
  check(!bad.length, `axe on ${name}: ${bad.join('; ')}`);
  check(result.passes.length > 0, `axe on ${name} checked nothing`);
}

// The interactive elements, in document order, that Tab should reach.
async function focusables(page) {
  return page.evaluate(() => {
    const sel = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex="0"]';
    const seen = [];
    for (const el of document.querySelectorAll(sel)) {
      const r = el.getBoundingClientRect();
      const hidden = el.closest('[hidden]') || getComputedStyle(el).visibility === 'hidden' || (r.width === 0 && r.height === 0 && el.id !== 'skip');
      if (!hidden) {
        if (!el.dataset.tab) el.dataset.tab = String(Math.random()).slice(2);
        seen.push(el.dataset.tab);
      }
    }
    return seen;
  });
}

// fromTheTop moves the keyboard's starting point to the top of the
// document, as a freshly loaded page has it (the console focuses each
// page's heading, which would start the walk there).
async function fromTheTop(page) {
  await page.evaluate(() => {
    const root = document.documentElement;
    root.tabIndex = -1;
    root.focus();
    root.removeAttribute('tabindex');
  });
}

async function keyboardCheck(page, name) {
  const want = await focusables(page);
  check(want.length > 1, `${name}: no interactive element`);
  await fromTheTop(page);
  const got = [];
  // A date input takes one Tab per part (day, month, year…) and stays
  // the active element meanwhile: a repeat of the last element is that.
  const n = Math.min(want.length, 40);
  for (let presses = 0; got.length < n && presses < n * 8; presses++) {
    await page.keyboard.press('Tab');
    const at = await page.evaluate(() => {
      const el = document.activeElement;
      if (!el || el === document.body) return '';
      const outline = getComputedStyle(el).outlineStyle;
      const what = `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''} "${(el.getAttribute('aria-label') || el.textContent || el.name || '').trim().slice(0, 40)}"`;
      return `${el.dataset.tab || '?'}|${outline}|${what}`;
    });
    const last = got[got.length - 1];
    if (!last || at.split('|')[0] !== last.split('|')[0] || at.startsWith('?')) got.push(at);
  }
  const first = await page.evaluate(() => document.querySelector('#skip').dataset.tab);
  check(got[0].startsWith(`${first}|`), `${name}: the first Tab does not reach the skip link`);
  for (let i = 0; i < got.length; i++) {
    const [id, outline, what] = got[i].split('|');
    check(id === want[i], `${name}: Tab ${i + 1} reached ${what || 'nothing'}, not element ${i + 1} in document order`);
    check(outline && outline !== 'none', `${name}: element ${i + 1} has no visible focus outline`);
  }
  // The skip link moves focus to the main landmark.
  await fromTheTop(page);
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  check(await page.evaluate(() => document.activeElement && document.activeElement.id === 'main'), `${name}: the skip link does not focus main`);
}

async function shoot(page, name) {
  await page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: true });
}

async function pageChecks(page, name) {
  await axeCheck(page, name);
  await keyboardCheck(page, name);
  await shoot(page, name);
}

async function goto(page, hash, heading) {
  await page.evaluate((h) => { location.hash = h; }, hash);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor({ timeout: WAIT });
}

// --- the session ---

async function main() {
  fs.mkdirSync(artifacts, { recursive: true });
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    // A fresh profile each run (playwright makes a temporary
    // user-data-dir); nothing reaches beyond the server under test.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT);
  page.on('console', (m) => { if (/Content.Security.Policy/i.test(m.text())) cspViolations.push(m.text()); });
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  page.on('response', (r) => {
    const u = new URL(r.url());
    // The guard's 401 (before any admin handler) holds no admin data and
    // is not cacheable by default (RFC 9111 4.2.2); every other answer is
    // the admin API's own.
    if (!u.pathname.startsWith('/admin/') || u.pathname.endsWith('/events') || r.status() === 401) return;
    adminAnswers++;
    if (!/no-store/.test(r.headers()['cache-control'] || '')) cachedAdminAnswers.push(`${r.request().method()} ${u.pathname} ${r.status()}`);
  });
  const stamp = Date.now().toString(36);
  const carol = `carol-${stamp}`;
  const dave = `dave-${stamp}`;
  const userPassword = `pw-${stamp}-console-1`;
  let sessionA;
  let sessionB;
  let daveTokens;

  try {
    await step('the console answers with its Content-Security-Policy', async () => {
      const res = await fetch(`${base}/console/`);
      const csp = res.headers.get('content-security-policy') || '';
      check(res.status === 200 && csp.includes("script-src 'self'") && csp.includes("frame-ancestors 'none'"), `status ${res.status}, CSP ${csp}`);
    });

    await step('an unsigned visit lands on the sign-in page', async () => {
      await page.goto(`${base}/console/`);
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      check(page.url().endsWith('#/signin'), `at ${page.url()}`);
      await page.getByText('cachegate users add --username NAME --admin --password-stdin', { exact: true }).waitFor();
      await pageChecks(page, 'signin');
    });

    await step('the administrator signs in; the tokens are where the Rockets provider keeps them', async () => {
      await page.getByLabel('Username', { exact: true }).fill(adminName);
      await page.getByLabel('Password', { exact: true }).fill(adminPassword);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
      const stored = await page.evaluate(() => [localStorage.getItem('accessToken'), localStorage.getItem('refreshToken')]);
      check(stored[0] && stored[1], 'no accessToken/refreshToken in localStorage');
      check((claims(stored[0]).roles || []).includes('admin'), 'the access token has no admin role');
      check((await page.context().cookies()).length === 0, 'the console set a cookie');
      await page.getByText(`Signed in as ${adminName}`, { exact: true }).waitFor();
      await page.getByRole('cell', { name: 'yes' }).first().waitFor();
    });

    await step('create a user', async () => {
      await page.getByLabel('Username', { exact: true }).fill(carol);
      await page.getByLabel('Password', { exact: true }).fill(userPassword);
      await page.getByRole('button', { name: 'Create user' }).click();
      await page.getByRole('rowheader', { name: carol, exact: true }).waitFor();
      await pageChecks(page, 'users');
    });

    await step('the new user signs in twice over HTTP: two sessions that work', async () => {
      sessionA = await login(carol, userPassword);
      sessionB = await login(carol, userPassword);
      for (const s of [sessionA, sessionB]) {
        const r = await http('GET', '/cache/user', { token: s.accessToken });
        check(r.status === 200, `GET /cache/user with a fresh session: ${r.status}`);
      }
    });

    await step("revoke one session on the user's sessions page; its API calls are refused, the other's are not", async () => {
      await page.getByRole('link', { name: `Sessions of ${carol}` }).click();
      await page.getByRole('heading', { level: 1, name: `Sessions of ${carol}` }).waitFor();
      const sidA = claims(sessionA.accessToken).sid;
      const sidB = claims(sessionB.accessToken).sid;
      check(sidA && sidB && sidA !== sidB, 'the two logins share a session id');
      await page.getByRole('button', { name: `Revoke session ${sidB}` }).waitFor();
      await pageChecks(page, 'sessions');
      await page.getByRole('button', { name: `Revoke session ${sidA}` }).click();
      await page.getByRole('button', { name: `Revoke session ${sidA}` }).waitFor({ state: 'detached' });
      await eventually(EFFECT, "the revoked session's access token is refused", async () =>
        (await http('GET', '/cache/user', { token: sessionA.accessToken })).status === 401);
      const refreshed = await http('POST', '/token/refresh', { body: { refreshToken: sessionA.refreshToken } });
      check(refreshed.status === 401, `the revoked session's refresh token: ${refreshed.status}, want 401`);
      const other = await http('GET', '/cache/user', { token: sessionB.accessToken });
      check(other.status === 200, `the other session: ${other.status}, want 200`);
    });

    await step('disable the user: its last session ends and it cannot sign in', async () => {
      await page.getByRole('link', { name: 'Back to users' }).click();
      await page.getByRole('button', { name: `Disable ${carol}` }).click();
      await page.getByRole('button', { name: `Enable ${carol}` }).waitFor();
      await eventually(EFFECT, "the disabled user's session is refused", async () =>
        (await http('GET', '/cache/user', { token: sessionB.accessToken })).status === 401);
      const r = await http('POST', '/auth/login', { body: { username: carol, password: userPassword } });
      check(r.status === 401, `login of the disabled user: ${r.status}, want 401`);
    });

    await step('the audit page shows an event live as it is recorded', async () => {
      await goto(page, '#/audit', 'Audit trail');
      await page.locator('.state', { hasText: 'live' }).waitFor();
      await page.getByRole('cell', { name: 'user.disabled' }).first().waitFor();
      await pageChecks(page, 'audit');
      // Another administrator session (over HTTP) adds a user: the page
      // must show the event without being reloaded.
      const admin = await login(adminName, adminPassword);
      const r = await http('POST', '/admin/users', { token: admin.accessToken, body: { username: dave, password: userPassword } });
      check(r.status === 201, `POST /admin/users: ${r.status}`);
      await page.getByRole('list', { name: 'Live audit events' }).getByRole('listitem')
        .filter({ hasText: 'user.added' }).filter({ hasText: dave }).waitFor({ timeout: WAIT });
      await shoot(page, 'audit-live');
      // The search form: every type it offers is one the server knows,
      // and a search by type shows only that type.
      const types = await page.getByLabel('Type').locator('option').evaluateAll((os) => os.map((o) => o.value).filter(Boolean));
      check(types.length > 10, `the type select offers ${types.length} types`);
      for (const type of types) {
        const q = await http('GET', `/admin/audit?type=${encodeURIComponent(type)}&limit=1`, { token: admin.accessToken });
        check(q.status === 200, `GET /admin/audit?type=${type}: ${q.status}`);
      }
      await page.getByLabel('Type').selectOption('user.added');
      await page.getByRole('button', { name: 'Search' }).click();
      const region = page.getByRole('region', { name: 'Audit events, newest first' });
      await region.getByRole('cell', { name: dave, exact: true }).waitFor();
      await page.waitForFunction(() => [...document.querySelectorAll('.results tbody tr')]
        .every((tr) => tr.children[1].textContent === 'user.added'));
    });

    await step('the entry browser filters every assignee\'s entries with the query language', async () => {
      daveTokens = await login(dave, userPassword);
      const id = claims(daveTokens.accessToken).sub;
      for (const key of [`alpha-${stamp}-1`, `alpha-${stamp}-2`, `beta-${stamp}-1`]) {
        const r = await http('POST', '/cache/user', { token: daveTokens.accessToken,
          body: { key, type: 'note', data: { key }, assignee: { id }, expiresIn: null } });
        check(r.status === 201, `POST /cache/user: ${r.status}`);
      }
      await goto(page, '#/entries', 'Entries');
      await page.getByLabel('Assignment').locator('option', { hasText: 'user' }).waitFor({ state: 'attached' });
      await page.getByLabel('Filter', { exact: true }).fill(`key||$starts||alpha-${stamp}`);
      await page.getByRole('button', { name: 'Show entries' }).click();
      const rows = page.getByRole('region', { name: 'Entries of user' }).getByRole('rowheader');
      await rows.first().waitFor();
      // The page may still show the list it opened with until the
      // filtered answer replaces it: read the rows until they are the
      // filter's, within a bound.
      const filtered = (ks) => ks.length === 2 && ks.every((k) => k.startsWith(`alpha-${stamp}`));
      let keys = await rows.allTextContents();
      for (const deadline = Date.now() + 15_000; !filtered(keys) && Date.now() < deadline;) {
        await page.waitForTimeout(100);
        keys = await rows.allTextContents();
      }
      check(filtered(keys), `the filter showed ${JSON.stringify(keys)}`);
      await pageChecks(page, 'entries');
    });

    await step('set a password, then delete the user', async () => {
      await goto(page, '#/users', 'Users');
      await page.getByRole('button', { name: `Set password of ${carol}` }).click();
      await page.getByLabel(`New password for ${carol}`).fill(`${userPassword}-new`);
      await page.getByRole('button', { name: 'Save password' }).click();
      await page.getByRole('status').filter({ hasText: `Password of ${carol} set` }).waitFor();
      await page.getByRole('button', { name: `Delete ${carol}` }).click();
      await page.getByRole('button', { name: `Confirm delete ${carol}` }).click();
      await page.getByRole('rowheader', { name: carol, exact: true }).waitFor({ state: 'detached' });
      const r = await http('POST', '/auth/login', { body: { username: carol, password: `${userPassword}-new` } });
      check(r.status === 401, `login of the deleted user: ${r.status}, want 401`);
    });

    await step('the keys page lists, rotates (published ahead) and revokes a key', async () => {
      await goto(page, '#/keys', 'Signing keys');
      await page.getByRole('cell', { name: 'signing', exact: true }).waitFor();
      await pageChecks(page, 'keys');
      await page.getByRole('button', { name: 'Rotate the signing key' }).click();
      const published = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'published', exact: true }) });
      await published.waitFor();
      const kid = (await published.getByRole('rowheader').textContent()).trim();
      await page.getByRole('button', { name: `Revoke key ${kid}` }).click();
      await page.getByRole('button', { name: `Confirm revoke (its tokens stop working) key ${kid}` }).click();
      await page.getByRole('row').filter({ hasText: kid }).getByRole('cell', { name: 'revoked', exact: true }).waitFor();
      await page.getByRole('cell', { name: 'signing', exact: true }).waitFor();
      await shoot(page, 'keys-rotated');
    });

    await step('an access token the server refuses is refreshed once at /token/refresh', async () => {
      // The same claims (the page still shows the admin screens) with a
      // signature the server refuses: the first call answers 401.
      const bad = await page.evaluate(() => {
        const t = localStorage.getItem('accessToken').split('.');
        t[2] = `${t[2].slice(0, -4)}AAAA`;
        localStorage.setItem('accessToken', t.join('.'));
        return t.join('.');
      });
      const refreshed = page.waitForResponse((r) => r.url().endsWith('/token/refresh'));
      await goto(page, '#/users', 'Users');
      check((await refreshed).status() === 201, 'the refresh was refused');
      await page.getByRole('rowheader', { name: adminName, exact: true }).waitFor();
      const now = await page.evaluate(() => localStorage.getItem('accessToken'));
      check(now && now !== bad, 'the refused access token was kept');
    });

    await step('the change-feed page shows a change live', async () => {
      await goto(page, '#/feed', 'Change feed');
      await page.getByLabel('Assignment').locator('option', { hasText: 'user' }).waitFor({ state: 'attached' });
      await page.getByRole('button', { name: 'Watch' }).click();
      await page.locator('.state', { hasText: 'live' }).waitFor();
      // The administrator's own entry: the user assignment's policy is
      // owner, so the feed shows the signed-in administrator's entries.
      const admin = await login(adminName, adminPassword);
      const key = `feed-${stamp}`;
      const r = await http('POST', '/cache/user', { token: admin.accessToken,
        body: { key, type: 'note', data: 1, assignee: { id: claims(admin.accessToken).sub }, expiresIn: null } });
      check(r.status === 201, `POST /cache/user: ${r.status}`);
      await page.getByRole('list', { name: 'Live changes' }).getByRole('listitem').filter({ hasText: key }).waitFor();
      await pageChecks(page, 'feed');
    });

    await step('every page fits a 375-pixel-wide screen', async () => {
      await page.setViewportSize({ width: 375, height: 812 });
      for (const [hash, heading, name] of [['#/users', 'Users', 'users'], ['#/audit', 'Audit trail', 'audit'],
        ['#/keys', 'Signing keys', 'keys'], ['#/entries', 'Entries', 'entries'], ['#/feed', 'Change feed', 'feed']]) {
        await goto(page, hash, heading);
        await page.waitForTimeout(300); // the page's first API answer
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        check(width <= 375, `${name} is ${width} px wide at 375`);
        await shoot(page, `${name}-375`);
      }
    });

    await step('sign out forgets the tokens', async () => {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      check(width <= 375, `signin is ${width} px wide at 375`);
      await shoot(page, 'signin-375');
      const stored = await page.evaluate(() => [localStorage.getItem('accessToken'), localStorage.getItem('refreshToken')]);
      check(!stored[0] && !stored[1], 'tokens remain after signing out');
    });

    await step('no Content-Security-Policy violation, no script error, no admin answer cacheable', async () => {
      check(!cspViolations.length, cspViolations.join('; '));
      check(!pageErrors.length, pageErrors.join('; '));
      check(adminAnswers > 10, `only ${adminAnswers} admin answers seen`);
      check(!cachedAdminAnswers.length, `without Cache-Control: no-store: ${cachedAdminAnswers.join(', ')}`);
    });
    console.log('console session complete');
  } finally {
    await browser.close();
  }
}

main().catch((err) => {
  console.log(`console: ${err && err.message ? err.message.split('\n')[0] : err}`);
  process.exitCode = 1;
});
