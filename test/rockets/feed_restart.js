'use strict';
// The change feed read across a restart of the server by the two npm
// Server-Sent Events clients of feed.js, unmodified: the WHATWG
// `eventsource` (v4, through a fetch that adds the Authorization header)
// and `@microsoft/fetch-event-source`. Both read changes; the server is
// stopped (SIGTERM: the streams end) and started again on the same
// address and database; both clients must reconnect BY THEMSELVES with
// the last event id they saw, and every change written before and after
// the restart must reach each of them exactly once, intact, in order.
//
// fetch-event-source stops at the end of a stream unless onclose throws;
// the program's onclose throws so that the library retries, which is how
// its README says a client reconnects. Its retry delay is the server's
// `retry:`. Under Node the same minimal window/document shim as feed.js
// (sse_common.js).
//
// test/e2e/feed_restart_test.go runs it. Protocol on stdout/stdin: once
// both clients have the first changes it prints "RESTART now" and waits
// for a line "restarted" on stdin, which the Go test sends once the new
// server answers. Any failed check exits non-zero naming it. Tokens and
// passwords are never printed.
//
// Environment: CACHEGATE_URL, CACHEGATE_USERNAME, CACHEGATE_PASSWORD.

const readline = require('node:readline');

const { bound, mustEnv, check, step, until, signIn } = require('./sse_common.js');
const { EventSource } = require('eventsource');
const { fetchEventSource } = require('@microsoft/fetch-event-source');

const base = mustEnv('CACHEGATE_URL');
const username = mustEnv('CACHEGATE_USERNAME');
const password = mustEnv('CACHEGATE_PASSWORD');
let access;
let subject;

async function login() {
  ({ access, subject } = await signIn(base, username, password));
}

const written = [];

async function create(key) {
  const data = { key, n: written.length };
  const res = await fetch(`${base}/cache/user`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${access}` },
    body: JSON.stringify({ key, type: 'restart', data, assignee: { id: subject }, expiresIn: null }),
  });
  const body = await res.text();
  check(res.status === 201, `POST ${key} answered ${res.status}: ${body.slice(0, 200)}`);
  written.push(JSON.parse(body));
}

// A subscriber's record: what arrived, in order, and what went wrong.
function recorder(name) {
  return {
    name,
    received: [],
    ids: new Set(),
    problems: [],
    connects: [],
    opens: 0,
    take(eventName, id, data) {
      if (eventName !== 'created') {
        if (eventName === 'reset') this.problems.push(`reset: ${data}`);
        return;
      }
      let entry;
      try {
        entry = JSON.parse(data);
      } catch (err) {
        this.problems.push(`event ${id}: data is not JSON`);
        return;
      }
      if (this.ids.has(entry.id)) {
        this.problems.push(`entry ${entry.key} arrived twice`);
        return;
      }
      this.ids.add(entry.id);
      this.received.push({ id: entry.id, key: entry.key, data: entry.data, rev: Number(id) });
    },
  };
}

const a = recorder('eventsource');
const b = recorder('fetch-event-source');

function startEventSource() {
  const es = new EventSource(`${base}/cache/user/events`, {
    fetch: (url, init) => {
      const headers = { ...(init && init.headers), Authorization: `Bearer ${access}` };
      a.connects.push(headers['Last-Event-ID'] ?? null);
      return fetch(url, { ...init, headers });
    },
  });
  es.addEventListener('open', () => { a.opens++; });
  es.addEventListener('created', (e) => a.take('created', e.lastEventId, e.data));
  es.addEventListener('reset', (e) => a.take('reset', e.lastEventId, e.data));
  es.onmessage = (e) => a.problems.push(`unnamed message: ${String(e.data).slice(0, 80)}`);
  return es;
}

function startFetchEventSource(signal) {
  class Retry extends Error {}
  return fetchEventSource(`${base}/cache/user/events`, {
    headers: { Authorization: `Bearer ${access}` },
    openWhenHidden: true,
    signal,
    fetch: (url, init) => {
      const h = init && init.headers;
      b.connects.push((h && (h['last-event-id'] ?? h['Last-Event-ID'])) ?? null);
      return fetch(url, init);
    },
    async onopen(res) {
      if (res.status !== 200) throw new Error(`the stream answered ${res.status}`);
      b.opens++;
    },
    onmessage(m) {
      if (m.event === '' && m.data === '') {
        b.problems.push('an empty message');
        return;
      }
      b.take(m.event, m.id, m.data);
    },
    onclose() { throw new Retry('the stream ended'); },
    // Undefined: retry after the server's retry: (the library's rule).
    onerror(err) {
      if (err instanceof Retry || err instanceof TypeError) return undefined;
      // A refused connection while the server is down is a fetch error.
      return undefined;
    },
  });
}

function complete(r) {
  return r.received.length >= written.length || r.problems.length > 0;
}

function verify(r) {
  check(r.problems.length === 0, `${r.name}: ${r.problems.slice(0, 5).join('; ')}`);
  check(r.received.length === written.length, `${r.name}: ${r.received.length} changes for ${written.length} written`);
  written.forEach((e, i) => {
    const got = r.received[i];
    check(got.id === e.id && got.key === e.key && JSON.stringify(got.data) === JSON.stringify(e.data),
      `${r.name}: change ${i} is ${got.key}, want ${e.key}`);
  });
  for (let i = 1; i < r.received.length; i++) {
    check(r.received[i].rev > r.received[i - 1].rev, `${r.name}: ids out of order`);
  }
  const resumed = r.connects.slice(1);
  check(resumed.length >= 1, `${r.name}: never reconnected (${r.connects.length} connects)`);
  check(resumed.every((id) => id !== null && /^[0-9]+$/.test(id)),
    `${r.name}: a reconnection without Last-Event-ID: ${JSON.stringify(resumed)}`);
}

(async () => {
  await step('login (POST /auth/login)', login);
  const es = startEventSource();
  const ctrl = new AbortController();
  const fes = startFetchEventSource(ctrl.signal);
  fes.catch((err) => { console.log(`FAIL fetch-event-source: ${err && err.message}`); process.exit(1); });

  await step('both clients get the changes written before the restart', async () => {
    // A stream starts with the next change: write once both are open.
    await until(() => a.opens >= 1 && b.opens >= 1, 'both streams to open', 15_000);
    for (let i = 0; i < 5; i++) {
      await create(`before-${i}`);
    }
    await until(() => complete(a) && complete(b), `5 changes (got ${a.received.length}, ${b.received.length})`);
  });

  await step('the server restarts (the Go test stops and starts it)', async () => {
    console.log('RESTART now');
    const rl = readline.createInterface({ input: process.stdin });
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no "restarted" on stdin')), bound);
      rl.on('line', (line) => {
        if (line.trim() === 'restarted') {
          clearTimeout(timer);
          rl.close();
          resolve();
        }
      });
    });
  });

  await step('changes written after the restart reach both clients, which resumed by themselves', async () => {
    for (let i = 0; i < 5; i++) {
      await create(`after-${i}`);
    }
    // Written before either client came back (the server's retry: is
    // 2 s): these changes can only reach them by the replay from their
    // Last-Event-ID.
    check(a.connects.length === 1 && b.connects.length === 1,
      `a client reconnected before the writes (connects ${a.connects.length}, ${b.connects.length}); raise --events-retry`);
    await until(() => complete(a) && complete(b),
      `${written.length} changes (got ${a.received.length}, ${b.received.length})`);
    verify(a);
    verify(b);
    console.log(`FEED restart eventsource connects=${JSON.stringify(a.connects)} ` +
      `fetch-event-source connects=${JSON.stringify(b.connects)} written=${written.length}`);
  });
  es.close();
  ctrl.abort();
  console.log('restart complete');
  process.exit(0);
})().catch((err) => {
  console.log(`FAIL ${err && err.message ? err.message : err}`);
  process.exit(1);
});
