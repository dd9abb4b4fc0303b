'use strict';
// A whole session against cachegate through the npm packages Rockets
// frontends use, @concepta/react-data-provider and
// @concepta/react-auth-provider, exactly as published (never modified).
// test/e2e/rockets_test.go starts the binary with a short access-token
// lifetime and runs this program; any failed step exits non-zero naming
// the step. Tokens and passwords are never printed.
//
// What the libraries need under Node, and no more:
// - localStorage, where they keep both tokens: a Map-backed shim;
// - a React render, because useDataProvider and useAuth are hooks reading
//   React context: react-dom/server renders the providers once per
//   "mount", and the functions the hooks return are then called as a
//   component would call them. Each mount is what a re-render is in a
//   browser app: useDataProvider makes a new axios instance and a new
//   memoised refresh function.
//
// Environment: CACHEGATE_URL, CACHEGATE_USERNAME, CACHEGATE_PASSWORD.

const crypto = require('node:crypto');

const storage = new Map();
globalThis.localStorage = {
  getItem: (k) => (storage.has(k) ? storage.get(k) : null),
  setItem: (k, v) => storage.set(k, String(v)),
  removeItem: (k) => storage.delete(k),
  clear: () => storage.clear(),
};

const React = require('react');
const { renderToString } = require('react-dom/server');
const dataProvider = require('@concepta/react-data-provider');
const { AuthProvider, useAuth } = require('@concepta/react-auth-provider');

const useDataProvider = dataProvider.default;
const { ClientProvider } = dataProvider;

const base = mustEnv('CACHEGATE_URL');
const username = mustEnv('CACHEGATE_USERNAME');
const password = mustEnv('CACHEGATE_PASSWORD');

function mustEnv(name) {
  const v = process.env[name];
  if (!v) {
    console.error(`session: ${name} is not set`);
    process.exit(2);
  }
  return v;
}

// Callbacks the providers were rendered with; a step sets what it awaits.
const events = {
  loginSucceeded: null,
  loginFailed: null,
  refreshErrors: 0,
};

// mount renders the providers as a Rockets app does and returns what a
// component inside them gets: the auth context and the data provider.
function mount() {
  let got;
  function Probe() {
    got = { auth: useAuth(), dp: useDataProvider() };
    return null;
  }
  const h = React.createElement;
  renderToString(
    h(ClientProvider, {
      baseUrl: base,
      onRefreshTokenError: () => { events.refreshErrors++; },
    },
    h(AuthProvider, {
      onSuccess: (token) => events.loginSucceeded && events.loginSucceeded(token),
      onError: (err) => events.loginFailed && events.loginFailed(err),
    }, h(Probe))),
  );
  if (!got || !got.auth || !got.dp) {
    throw new Error('the providers did not render the probe');
  }
  return got;
}

// claims decodes a JWT's payload (no verification: the server did that).
function claims(token) {
  const part = String(token).split('.')[1] || '';
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function check(cond, what) {
  if (!cond) {
    throw new Error(what);
  }
}

// statusOf is the HTTP status of an error the data provider threw.
function statusOf(err) {
  return err && err.response ? err.response.status : undefined;
}

// describe tells what went wrong without quoting tokens.
function describe(err) {
  if (err && err.response) {
    const body = err.response.data;
    const msg = body && typeof body === 'object' ? `${body.errorCode || ''} ${body.message || ''}` : '';
    return `HTTP ${err.response.status} ${msg}`.trim();
  }
  return err && err.message ? err.message : String(err);
}

// untilAccessTokenExpired waits past the stored access token's exp plus
// the server's 5 s leeway, so the next request is refused with 401.
async function untilAccessTokenExpired() {
  const exp = claims(localStorage.getItem('accessToken')).exp;
  const wait = (exp + 6) * 1000 - Date.now();
  if (wait > 0) {
    await sleep(wait);
  }
}

let failed = false;
async function step(name, fn) {
  if (failed) {
    return;
  }
  const started = Date.now();
  try {
    await fn();
    console.log(`ok   ${name} (${Date.now() - started} ms)`);
  } catch (err) {
    failed = true;
    console.log(`FAIL ${name}: ${describe(err)}`);
  }
}

async function main() {
  let app = mount();
  let userId;
  const ids = {};

  await step('login with the auth provider (POST /auth/login)', async () => {
    const done = new Promise((resolve, reject) => {
      events.loginSucceeded = resolve;
      events.loginFailed = reject;
    });
    await app.auth.doLogin({ loginPath: '/auth/login', username, password });
    await done;
    const access = localStorage.getItem('accessToken');
    check(access && localStorage.getItem('refreshToken'), 'the provider stored no token pair');
    userId = claims(access).sub;
    check(userId, 'the access token names no subject');
  });

  await step('create entries (POST /cache/user)', async () => {
    const theme = await app.dp.post({
      uri: '/cache/user',
      body: { key: 'theme', type: 'settings', data: 'dark', assignee: { id: userId }, expiresIn: '1h' },
    });
    check(theme && theme.id && theme.version === 1 && theme.data === 'dark', 'the created entry is not as sent');
    check(theme.expirationDate, 'expiresIn 1h gave no expirationDate');
    ids.theme = theme.id;
    const layout = await app.dp.post({
      uri: '/cache/user',
      body: { key: 'layout', type: 'settings', data: { columns: 3 }, assignee: { id: userId } },
    });
    check(layout && layout.id && layout.expirationDate === null, 'a POST without expiresIn must not expire');
    ids.layout = layout.id;
  });

  await step('list entries (GET /cache/user)', async () => {
    const list = await app.dp.get({ uri: '/cache/user' });
    check(Array.isArray(list), 'the list is not an array');
    const keys = list.map((e) => e.key).sort();
    check(keys.length === 2 && keys[0] === 'layout' && keys[1] === 'theme', `the list holds ${JSON.stringify(keys)}`);
  });

  await step('list as Rockets\' table does: sort=id,ASC, page and limit (paged answer)', async () => {
    const page = await app.dp.get({ uri: '/cache/user', queryParams: { sort: 'id,ASC', limit: 10, page: 1, cache: 0 } });
    check(page && Array.isArray(page.data), 'a paged list is not {data, ...}');
    check(page.total === 2 && page.count === 2 && page.page === 1 && page.pageCount === 1, `page totals ${JSON.stringify({ ...page, data: undefined })}`);
    const ids = page.data.map((e) => e.id);
    check(ids.length === 2 && ids[0] < ids[1], 'the page is not sorted by id ascending');
  });

  await step('list with axios array parameters: filter[]= (ANDed, $eq and $cont) and sort[]=', async () => {
    const list = await app.dp.get({
      uri: '/cache/user',
      queryParams: { filter: ['type||$eq||settings', 'key||$cont||hem'], sort: ['key,ASC'] },
    });
    check(Array.isArray(list) && list.length === 1 && list[0].key === 'theme', `got ${JSON.stringify(list.map((e) => e.key))}`);
  });

  await step('list with filter and or (old operator names): filter OR or', async () => {
    const list = await app.dp.get({
      uri: '/cache/user',
      queryParams: { filter: 'key||cont||lay', or: 'key||eq||theme', sort: 'key,DESC' },
    });
    const keys = list.map((e) => e.key);
    check(keys.length === 2 && keys[0] === 'theme' && keys[1] === 'layout', `got ${JSON.stringify(keys)}`);
  });

  await step('search with s=<json> ($or, $contL, nested) and select fields', async () => {
    const list = await app.dp.get({
      uri: '/cache/user',
      queryParams: {
        s: JSON.stringify({ $and: [{ type: 'settings' }, { $or: [{ key: { $contL: 'THEM' } }, { key: { $starts: 'lay' } }] }] }),
        sort: 'key,ASC',
        fields: 'key,data',
      },
    });
    const keys = list.map((e) => e.key);
    check(keys.length === 2 && keys[0] === 'layout' && keys[1] === 'theme', `got ${JSON.stringify(keys)}`);
    const members = Object.keys(list[0]).sort().join(',');
    check(members === 'data,id,key', `fields=key,data answered the members ${members}`);
  });

  await step('a search naming another user finds nothing (the access policy stays outside)', async () => {
    const other = crypto.randomUUID();
    const list = await app.dp.get({
      uri: '/cache/user',
      queryParams: { s: JSON.stringify({ $or: [{ 'assignee.id': other }, { 'assignee.id': { $ne: userId } }] }) },
    });
    check(Array.isArray(list) && list.length === 0, `another user's search listed ${list.length} entries`);
  });

  await step('get an entry (GET /cache/user/:id)', async () => {
    const e = await app.dp.get({ uri: `/cache/user/${ids.theme}` });
    check(e.id === ids.theme && e.key === 'theme' && e.assignee.id === userId, 'the entry read back differs');
  });

  await step('patch an entry (PATCH /cache/user/:id, no expiresIn)', async () => {
    const before = await app.dp.get({ uri: `/cache/user/${ids.theme}` });
    const e = await app.dp.patch({ uri: `/cache/user/${ids.theme}`, body: { data: 'light' } });
    check(e.version === 2 && e.data === 'light', 'the patch did not apply');
    check(e.expirationDate === before.expirationDate, 'a PATCH without expiresIn changed the expiry');
  });

  await step('put settings without expiresIn (PUT /cache/user/<uuid>, as Rockets settings storage does)', async () => {
    ids.settings = crypto.randomUUID();
    const body = { key: 'app-settings', type: 'user', data: { sidebar: 'open' }, assignee: { id: userId } };
    const created = await app.dp.put({ uri: `/cache/user/${ids.settings}`, body });
    check(created.id === ids.settings && created.version === 1 && created.expirationDate === null, 'the PUT did not create the entry');
    const replaced = await app.dp.put({ uri: `/cache/user/${ids.settings}`, body: { ...body, data: { sidebar: 'closed' } } });
    check(replaced.version === 2 && replaced.data.sidebar === 'closed', 'the second PUT did not replace the entry');
  });

  await step('delete an entry (DELETE /cache/user/:id)', async () => {
    await app.dp.del({ uri: `/cache/user/${ids.layout}` });
    try {
      await app.dp.get({ uri: `/cache/user/${ids.layout}` });
    } catch (err) {
      check(statusOf(err) === 404, `reading the deleted entry answered ${describe(err)}, want 404`);
      return;
    }
    throw new Error('the deleted entry can still be read');
  });

  await step('access token expires; the data provider refreshes by itself (POST /token/refresh)', async () => {
    await untilAccessTokenExpired();
    const access = localStorage.getItem('accessToken');
    const refresh = localStorage.getItem('refreshToken');
    app = mount();
    const e = await app.dp.get({ uri: `/cache/user/${ids.settings}` });
    check(e.id === ids.settings, 'the request retried after the refresh read the wrong entry');
    check(localStorage.getItem('accessToken') && localStorage.getItem('accessToken') !== access, 'no new access token was stored');
    check(localStorage.getItem('refreshToken') && localStorage.getItem('refreshToken') !== refresh, 'no new refresh token was stored');
    check(events.refreshErrors === 0, 'the provider reported a refresh error');
  });

  await step('two requests fail at once: two overlapping refreshes with one token, both retried requests succeed', async () => {
    await untilAccessTokenExpired();
    const refresh = localStorage.getItem('refreshToken');
    // The first request goes out; a re-render (a second mount) makes a
    // second axios instance and refresh function; the second request goes
    // out. Both come back 401 and each refreshes with the stored token.
    const first = mount();
    const a = first.dp.get({ uri: `/cache/user/${ids.theme}` });
    const second = mount();
    const b = second.dp.get({ uri: `/cache/user/${ids.settings}` });
    const [ra, rb] = await Promise.all([a, b]);
    check(ra.id === ids.theme && rb.id === ids.settings, 'a retried request read the wrong entry');
    check(events.refreshErrors === 0, 'the provider reported a refresh error: the user would be logged out');
    const stored = localStorage.getItem('refreshToken');
    check(stored && stored !== refresh, 'no new refresh token was stored');
    app = mount();
    const again = await app.dp.get({ uri: '/cache/user' });
    check(Array.isArray(again) && again.length === 2, 'the session does not work after the overlapping refreshes');
  });

  await step('the refresh token kept after the overlap is the live one: the next expiry refreshes again', async () => {
    await untilAccessTokenExpired();
    const refresh = localStorage.getItem('refreshToken');
    app = mount();
    const e = await app.dp.get({ uri: `/cache/user/${ids.theme}` });
    check(e.id === ids.theme, 'the retried request read the wrong entry');
    check(localStorage.getItem('refreshToken') !== refresh, 'no refresh happened');
    check(events.refreshErrors === 0, 'the provider reported a refresh error');
  });

  await step('logout (POST /auth/logout, then the auth provider forgets the tokens)', async () => {
    const oldRefresh = localStorage.getItem('refreshToken');
    app = mount();
    await app.dp.post({ uri: '/auth/logout' });
    await app.auth.doLogout();
    check(localStorage.getItem('accessToken') === null && localStorage.getItem('refreshToken') === null, 'tokens remain after doLogout');
    const errorsBefore = events.refreshErrors;
    app = mount();
    try {
      await app.dp.get({ uri: '/cache/user' });
      throw new Error('a request after logout succeeded');
    } catch (err) {
      check(statusOf(err) === 401, `a request after logout answered ${describe(err)}, want 401`);
    }
    // The session's refresh token, had a copy survived, is revoked too.
    localStorage.setItem('refreshToken', oldRefresh);
    app = mount();
    try {
      await app.dp.get({ uri: '/cache/user' });
      throw new Error('the logged-out session refreshed');
    } catch (err) {
      check(statusOf(err) === 401, `refreshing the logged-out session answered ${describe(err)}, want 401`);
    }
    check(events.refreshErrors === errorsBefore + 2, 'the provider did not report the refused refreshes');
    check(localStorage.getItem('refreshToken') === null, 'the provider kept a refused refresh token');
  });

  if (failed) {
    process.exit(1);
  }
  console.log('session complete');
}

main().catch((err) => {
  console.log(`FAIL unexpected: ${describe(err)}`);
  process.exit(1);
});
