// Drives the web console (/console/) in a real browser: Debian's Chromium
// through playwright-core (no browser download; executablePath is the
// system one), as an administrator would use it, and checks each view with
// axe-core (WCAG 2.1 A and AA rules and best practices, at zero
// violations) and the keyboard (Tab walks the interactive elements in
// document order, the skip link first). axe.min.js is evaluated through
// the DevTools protocol rather than added as a <script> tag: the console's
// Content-Security-Policy refuses inline script, as it should. A
// screenshot of each view, at 1280 and at 375 pixels wide, goes to
// CACHEGATE_ARTIFACTS. test/e2e/console_test.go starts the binary, makes
// the administrator and runs this program; a failed step exits non-zero
// naming it (and leaves a FAIL-… screenshot). Tokens and passwords are
// never printed.
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
// The browser's time zone: the console shows times in it.
const ZONE = 'Asia/Kolkata';
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
    // The first lines name the locator waited for (never a token).
    console.log(`FAIL - ${name}: ${err && err.message ? err.message.split('\n').filter((l) => !/^\s*-\s*$/.test(l)).slice(0, 3).join(' | ') : err}`);
    await shoot(currentPage, `FAIL-${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 40)}`).catch(() => {});
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

let currentPage = null;
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

// confirmIn chooses action in the confirmation dialog that is open.
async function confirmIn(page, action) {
  const dlg = page.getByRole('dialog');
  await dlg.waitFor();
  await dlg.getByRole('button', { name: action, exact: true }).click();
  await dlg.waitFor({ state: 'detached' });
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
  // A zone far from UTC, so that a time shown in UTC cannot pass for
  // the local one.
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: ZONE });
  const page = await context.newPage();
  currentPage = page;
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
  let sessionC;
  let daveTokens;
  let adminHttp;

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
      // Chromium may name the zone by an alias (Asia/Calcutta).
      const zone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
      await page.getByText(`Times in ${zone} (UTC on hover)`, { exact: true }).waitFor();
      await page.getByRole('cell', { name: 'yes' }).first().waitFor();
      adminHttp = await login(adminName, adminPassword);
    });

    await step('create a user; the success message clears at the next action', async () => {
      await page.getByLabel('Username', { exact: true }).fill(carol);
      await page.getByLabel('Password', { exact: true }).fill(userPassword);
      await page.getByRole('button', { name: 'Create user' }).click();
      await page.getByRole('rowheader', { name: carol, exact: true }).waitFor();
      await page.getByRole('status').filter({ hasText: `Created ${carol}.` }).waitFor();
      await pageChecks(page, 'users');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForFunction(() => document.getElementById('status').textContent === '');
    });

    await step('times are shown in the browser zone, UTC on hover', async () => {
      const t = await page.locator('main time').first().evaluate((el) => ({ text: el.textContent, title: el.title, dt: el.getAttribute('datetime') }));
      check(/^UTC \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(t.title), `title ${t.title}`);
      check(t.title === `UTC ${t.dt}`, `datetime ${t.dt} vs title ${t.title}`);
      const local = new Intl.DateTimeFormat('sv-SE', { timeZone: ZONE, year: 'numeric', month: '2-digit', day: '2-digit',
        hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false }).format(new Date(t.dt));
      check(t.text === local, `shown ${t.text}, want ${local} (${ZONE})`);
      check(!t.dt.startsWith(t.text.replace(' ', 'T')), `${t.text} is the UTC time, not ${ZONE}'s`);
    });

    await step('the filter builder and the raw syntax; a refused filter refreshes the page count', async () => {
      const filter = page.getByRole('group', { name: 'Filter' });
      await filter.getByRole('button', { name: 'Add a condition' }).click();
      await page.getByLabel('Field of condition 1').selectOption('username');
      await page.getByLabel('Operator of condition 1').selectOption('$eq');
      await page.getByLabel('Value of condition 1').fill(carol);
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.getByText(/^Page 1 of 1, 1 users$/).waitFor();
      await filter.getByRole('button', { name: 'Edit as raw text' }).click();
      const raw = page.getByLabel('Filter (raw)');
      check(await raw.inputValue() === `username||$eq||${carol}`, `raw: ${await raw.inputValue()}`);
      await raw.fill('bogus||$eq||1');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.getByText(/Could not list users/).waitFor();
      await page.getByText('No users listed.', { exact: true }).waitFor();
      check(!(await page.getByText(/^Page \d+ of/).count()), 'the page count of the last list stayed after a refused filter');
      await raw.fill(`username||$eq||${carol}\nadmin||$eq||false`);
      await filter.getByRole('button', { name: 'Use the filter builder' }).click();
      check(await page.getByLabel('Value of condition 1').inputValue() === carol, 'condition 1 lost on the way back');
      check(await page.getByLabel('Field of condition 2').inputValue() === 'admin', 'condition 2 lost on the way back');
      await page.getByRole('button', { name: 'Remove condition 2' }).click();
      await page.getByRole('button', { name: 'Remove condition 1' }).click();
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.getByRole('rowheader', { name: adminName, exact: true }).waitFor();
    });

    await step('grant and revoke admin, the revoke after a confirmation', async () => {
      const carolId = (await http('GET', `/admin/users?filter=${encodeURIComponent(`username||$eq||${carol}`)}`, { token: adminHttp.accessToken })).json.data[0].id;
      const isAdmin = async () => (await http('GET', `/admin/users/${carolId}`, { token: adminHttp.accessToken })).json.admin;
      await page.getByRole('button', { name: `Make admin ${carol}` }).click();
      await page.getByRole('button', { name: `Revoke admin of ${carol}` }).waitFor();
      check(await isAdmin(), 'Make admin did not make an admin');
      await page.getByRole('button', { name: `Revoke admin of ${carol}` }).click();
      const dlg = page.getByRole('dialog', { name: `Revoke the admin role of ${carol}?` });
      await dlg.waitFor();
      check(await isAdmin(), 'the admin role went before the confirmation');
      await axeCheck(page, 'confirmation dialog');
      await shoot(page, 'confirm-dialog');
      await dlg.getByRole('button', { name: 'Revoke admin', exact: true }).click();
      await page.getByRole('button', { name: `Make admin ${carol}` }).waitFor();
      check(!(await isAdmin()), 'Revoke admin left the role');
      const ev = await http('GET', `/admin/audit?type=user.admin_revoked&user=${encodeURIComponent(carol)}`, { token: adminHttp.accessToken });
      check(ev.json.data.length === 1 && ev.json.data[0].actor.username === adminName, `user.admin_revoked: ${JSON.stringify(ev.json.data)}`);
    });

    await step('the new user signs in three times over HTTP: three sessions that work', async () => {
      sessionA = await login(carol, userPassword);
      sessionB = await login(carol, userPassword);
      sessionC = await login(carol, userPassword);
      for (const s of [sessionA, sessionB, sessionC]) {
        const r = await http('GET', '/cache/user', { token: s.accessToken });
        check(r.status === 200, `GET /cache/user with a fresh session: ${r.status}`);
      }
    });

    await step("revoke one session on the user's sessions page, after a confirmation (Cancel keeps it)", async () => {
      await page.getByRole('link', { name: `Sessions of ${carol}` }).click();
      await page.getByRole('heading', { level: 1, name: `Sessions of ${carol}` }).waitFor();
      const sidA = claims(sessionA.accessToken).sid;
      const sidB = claims(sessionB.accessToken).sid;
      check(sidA && sidB && sidA !== sidB, 'the two logins share a session id');
      await page.getByRole('button', { name: `Revoke session ${sidB}` }).waitFor();
      await pageChecks(page, 'sessions');
      await page.getByRole('button', { name: `Revoke session ${sidA}` }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
      await page.getByRole('dialog').waitFor({ state: 'detached' });
      check((await http('GET', '/cache/user', { token: sessionA.accessToken })).status === 200, 'Cancel revoked the session');
      await page.getByRole('button', { name: `Revoke session ${sidA}` }).click();
      await confirmIn(page, 'Revoke session');
      await page.getByRole('button', { name: `Revoke session ${sidA}` }).waitFor({ state: 'detached' });
      await eventually(EFFECT, "the revoked session's access token is refused", async () =>
        (await http('GET', '/cache/user', { token: sessionA.accessToken })).status === 401);
      const refreshed = await http('POST', '/token/refresh', { body: { refreshToken: sessionA.refreshToken } });
      check(refreshed.status === 401, `the revoked session's refresh token: ${refreshed.status}, want 401`);
      const other = await http('GET', '/cache/user', { token: sessionB.accessToken });
      check(other.status === 200, `the other session: ${other.status}, want 200`);
    });

    await step("every user's sessions on one page, with usernames; revoke one from its row", async () => {
      await goto(page, '#/sessions', 'All sessions');
      const sidB = claims(sessionB.accessToken).sid;
      const row = page.getByRole('row').filter({ hasText: sidB });
      await row.waitFor();
      const text = await row.textContent();
      check(text.includes(carol) && text.includes(claims(sessionB.accessToken).sub), `the row of ${sidB} does not name ${carol} and their id: ${text}`);
      await page.getByRole('row').filter({ hasText: adminName }).first().waitFor();
      await pageChecks(page, 'all-sessions');
      await row.getByRole('button', { name: `Revoke session ${sidB}` }).click();
      await confirmIn(page, 'Revoke session');
      await page.getByRole('button', { name: `Revoke session ${sidB}` }).waitFor({ state: 'detached' });
      await eventually(EFFECT, 'the session revoked from the list is refused', async () =>
        (await http('GET', '/cache/user', { token: sessionB.accessToken })).status === 401);
      check((await http('GET', '/cache/user', { token: sessionC.accessToken })).status === 200, 'another session of the user ended too');
    });

    await step('disable the user after a confirmation: its last session ends and it cannot sign in', async () => {
      await goto(page, '#/users', 'Users');
      await page.getByRole('button', { name: `Disable ${carol}` }).click();
      await confirmIn(page, 'Disable');
      await page.getByRole('button', { name: `Enable ${carol}` }).waitFor();
      await eventually(EFFECT, "the disabled user's session is refused", async () =>
        (await http('GET', '/cache/user', { token: sessionC.accessToken })).status === 401);
      const r = await http('POST', '/auth/login', { body: { username: carol, password: userPassword } });
      check(r.status === 401, `login of the disabled user: ${r.status}, want 401`);
    });

    await step('the audit page shows an event live as it is recorded, usernames beside ids', async () => {
      await goto(page, '#/audit', 'Audit trail');
      await page.locator('.state', { hasText: 'live' }).waitFor();
      const disabled = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'user.disabled', exact: true }) }).first();
      await disabled.waitFor();
      const text = await disabled.textContent();
      check(text.includes(carol) && text.includes(adminName) && text.includes(claims(adminHttp.accessToken).sub),
        `the user.disabled row does not show the user and the actor by name and id: ${text}`);
      await pageChecks(page, 'audit');
      // Another administrator session (over HTTP) adds a user: the page
      // must show the event without being reloaded.
      const r = await http('POST', '/admin/users', { token: adminHttp.accessToken, body: { username: dave, password: userPassword } });
      check(r.status === 201, `POST /admin/users: ${r.status}`);
      await page.getByRole('list', { name: 'Live audit events' }).getByRole('listitem')
        .filter({ hasText: 'user.added' }).filter({ hasText: dave }).waitFor({ timeout: WAIT });
      await shoot(page, 'audit-live');
      // The search form: every type it offers is one the server knows,
      // and a search by type shows only that type.
      const types = await page.getByLabel('Type').locator('option').evaluateAll((os) => os.map((o) => o.value).filter(Boolean));
      check(types.length > 10, `the type select offers ${types.length} types`);
      for (const type of types) {
        const q = await http('GET', `/admin/audit?type=${encodeURIComponent(type)}&limit=1`, { token: adminHttp.accessToken });
        check(q.status === 200, `GET /admin/audit?type=${type}: ${q.status}`);
      }
      await page.getByLabel('Type').selectOption('user.added');
      await page.getByRole('button', { name: 'Search' }).click();
      const region = page.getByRole('region', { name: 'Audit events, newest first' });
      await region.getByRole('row').filter({ hasText: dave }).first().waitFor();
      await page.waitForFunction(() => [...document.querySelectorAll('.results tbody tr')]
        .every((tr) => tr.children[1].textContent === 'user.added'));
    });

    await step('the entry browser filters every assignee\'s entries with the filter builder, owners by name', async () => {
      daveTokens = await login(dave, userPassword);
      const id = claims(daveTokens.accessToken).sub;
      for (const key of [`alpha-${stamp}-1`, `alpha-${stamp}-2`, `beta-${stamp}-1`]) {
        const r = await http('POST', '/cache/user', { token: daveTokens.accessToken,
          body: { key, type: 'note', data: { key }, assignee: { id }, expiresIn: null } });
        check(r.status === 201, `POST /cache/user: ${r.status}`);
      }
      await goto(page, '#/entries', 'Entries');
      await page.getByLabel('Assignment').locator('option', { hasText: 'user' }).waitFor({ state: 'attached' });
      await page.getByRole('button', { name: 'Add a condition' }).click();
      await page.getByLabel('Field of condition 1').selectOption('key');
      await page.getByLabel('Operator of condition 1').selectOption('$starts');
      await page.getByLabel('Value of condition 1').fill(`alpha-${stamp}`);
      await page.getByRole('button', { name: 'Show entries' }).click();
      const region = page.getByRole('region', { name: 'Entries of user' });
      const rows = region.getByRole('rowheader');
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
      await region.locator('.uname', { hasText: dave }).first().waitFor();
      check((await region.locator('.uid', { hasText: id }).count()) === 2, 'the owner id is not beside the name');
      await page.getByRole('button', { name: 'Edit as raw text' }).click();
      const raw = await page.getByLabel('Filter (raw)').inputValue();
      check(raw === `key||$starts||alpha-${stamp}`, `the raw filter is ${raw}`);
      await page.getByRole('button', { name: 'Use the filter builder' }).click();
      await pageChecks(page, 'entries');
    });

    await step('an entry opened whole, edited with If-Match, a conflict shown with the current version, then deleted', async () => {
      const key = `alpha-${stamp}-1`;
      await page.getByRole('button', { name: `Open ${key}` }).click();
      await page.getByRole('heading', { level: 2, name: `Entry ${key}` }).waitFor();
      const shown = await page.getByLabel(`Data of ${key}`).textContent();
      check(JSON.parse(shown).key === key, `the data shown: ${shown}`);
      await page.getByLabel('Data (JSON)').fill('{"edited": 1}');
      await page.getByRole('button', { name: 'Save as version 2' }).click();
      await page.getByRole('status').filter({ hasText: `Saved ${key}: version 2.` }).waitFor();
      const list = await http('GET', `/cache/user?filter=${encodeURIComponent(`key||$eq||${key}`)}`, { token: daveTokens.accessToken });
      // Without limit or page the list is a bare array (docs/api.md).
      const entry = (Array.isArray(list.json) ? list.json : list.json.data)[0];
      check(entry.version === 2 && entry.data.edited === 1, `the owner reads ${JSON.stringify(entry)}`);
      // Someone else changes it meanwhile: the console's save is refused
      // and it shows the version stored now.
      const other = await http('PUT', `/cache/user/${entry.id}`, { token: daveTokens.accessToken,
        body: { key, type: 'note', data: { by: 'owner' }, assignee: { id: entry.assignee.id }, expiresIn: null } });
      check(other.status === 200 && other.json.version === 3, `the owner's PUT: ${other.status}`);
      await page.getByLabel('Data (JSON)').fill('{"edited": 2}');
      await page.getByRole('button', { name: 'Save as version 3' }).click();
      await page.getByText('Not saved: the entry changed since you opened version 2. The current version is 3.').waitFor();
      check(JSON.parse(await page.getByLabel('Data of version 3').textContent()).by === 'owner', 'the conflict does not show the current data');
      await pageChecks(page, 'entry-conflict');
      check((await http('GET', `/cache/user/${entry.id}`, { token: daveTokens.accessToken })).json.version === 3, 'the refused save changed the entry');
      await page.getByRole('button', { name: 'Reload version 3 (drops your edit)' }).click();
      await page.getByRole('button', { name: 'Save as version 4' }).waitFor();
      await page.getByRole('button', { name: `Delete entry ${key}` }).click();
      await confirmIn(page, 'Delete entry');
      await page.getByRole('status').filter({ hasText: `Deleted ${key}.` }).waitFor();
      const gone = await http('GET', `/cache/user/${entry.id}`, { token: daveTokens.accessToken });
      check(gone.status === 404, `the deleted entry: ${gone.status}`);
      for (const type of ['entry.updated', 'entry.deleted']) {
        const ev = await http('GET', `/admin/audit?type=${type}`, { token: adminHttp.accessToken });
        const e = ev.json.data[0];
        check(e && e.actor.username === adminName && e.username === dave && e.detail.startsWith(`user/${entry.id} version`),
          `${type}: ${JSON.stringify(e)}`);
      }
    });

    await step('set a password, then delete the user after a confirmation', async () => {
      await goto(page, '#/users', 'Users');
      await page.getByRole('button', { name: `Set password of ${carol}` }).click();
      await page.getByLabel(`New password for ${carol}`).fill(`${userPassword}-new`);
      await page.getByRole('button', { name: 'Save password' }).click();
      await page.getByRole('status').filter({ hasText: `Password of ${carol} set` }).waitFor();
      await page.getByRole('button', { name: `Delete ${carol}` }).click();
      await confirmIn(page, 'Delete user');
      await page.getByRole('rowheader', { name: carol, exact: true }).waitFor({ state: 'detached' });
      const r = await http('POST', '/auth/login', { body: { username: carol, password: `${userPassword}-new` } });
      check(r.status === 401, `login of the deleted user: ${r.status}, want 401`);
    });

    await step('the keys page lists, rotates (published ahead) and revokes a key after a confirmation', async () => {
      await goto(page, '#/keys', 'Signing keys');
      await page.getByRole('cell', { name: 'signing', exact: true }).waitFor();
      await pageChecks(page, 'keys');
      await page.getByRole('button', { name: 'Rotate the signing key' }).click();
      const published = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'published', exact: true }) });
      await published.waitFor();
      const kid = (await published.getByRole('rowheader').textContent()).trim();
      await page.getByRole('button', { name: `Revoke key ${kid}` }).click();
      await confirmIn(page, 'Revoke key');
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

    await step('every page fits a 375-pixel-wide screen, every action on screen', async () => {
      await page.setViewportSize({ width: 375, height: 812 });
      const daveId = claims(daveTokens.accessToken).sub;
      for (const [hash, heading, name] of [['#/users', 'Users', 'users'], ['#/sessions', 'All sessions', 'all-sessions'],
        [`#/users/${daveId}/sessions`, `Sessions of ${dave}`, 'sessions'], ['#/audit', 'Audit trail', 'audit'],
        ['#/keys', 'Signing keys', 'keys'], ['#/entries', 'Entries', 'entries'], ['#/feed', 'Change feed', 'feed']]) {
        await goto(page, hash, heading);
        if (name !== 'feed') await page.locator('main .results').locator('table, p').first().waitFor();
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        check(width <= 375, `${name} is ${width} px wide at 375`);
        const off = await page.evaluate(() => [...document.querySelectorAll('main button, main a[href]')]
          .filter((el) => !el.closest('[hidden]') && el.getBoundingClientRect().width > 0)
          .filter((el) => { const r = el.getBoundingClientRect(); return r.left < 0 || r.right > 375; })
          .map((el) => el.textContent.trim()));
        check(!off.length, `${name}: off-screen at 375 px: ${off.join(', ')}`);
        if (name === 'users' || name === 'all-sessions') await axeCheck(page, `${name} at 375 px`);
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
