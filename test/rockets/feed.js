'use strict';
// The change feed (GET /cache/user/events) read by two real Server-Sent
// Events clients, exactly as published on npm (never modified):
//
// (a) `eventsource`, the WHATWG EventSource for Node (v4: it reads the
//     stream through fetch, and takes a custom fetch, through which this
//     program sends the Authorization header and can stop reading). The
//     subscriber stops reading while many large entries are written, until
//     the server cuts it (lagging, write deadline); it then resumes
//     reading what its socket still holds, and reconnects BY ITSELF after
//     the server's `retry:` with `Last-Event-ID`. Every change written
//     must arrive exactly once, with its data intact.
// (b) `@microsoft/fetch-event-source`, which dispatches a message for every
//     blank-line-terminated block: across several heartbeats it must get
//     no empty message, and then its events.
//
// fetch-event-source is written for browsers: it reads `window.fetch`,
// `window.setTimeout`/`clearTimeout` and, unless `openWhenHidden` is set,
// listens to `document`'s visibilitychange. Under Node the minimal shim
// of sse_common.js gives it `window` = the global object (which has fetch and the
// timers) and a `document` that is never hidden and whose listeners are
// no-ops; `openWhenHidden: true` is passed as well. Its parser
// (getLines/getMessages) runs unchanged on the real bytes.
//
// test/e2e/feed_test.go starts the binary with a short heartbeat and
// retry and runs this program. Protocol on stdout/stdin: after stalling
// and writing, it prints "FEED written <n>" and waits for a line "resume"
// on stdin, which the Go test sends once the server logged that it cut
// the stream. Any failed check exits non-zero naming it. Tokens and
// passwords are never printed.
//
// Environment: CACHEGATE_URL, CACHEGATE_USERNAME, CACHEGATE_PASSWORD,
// CACHEGATE_FEED_WRITES (entries written while stalled, default 2000),
// CACHEGATE_FEED_DATA_BYTES (size of each entry's padding, default 8192),
// CACHEGATE_FEED_RETRY_MS (the server's --events-retry, checked against
// the stream's first line when set).

const crypto = require('node:crypto');
const readline = require('node:readline');

const { bound, mustEnv, check, step, until, signIn } = require('./sse_common.js');
const { EventSource } = require('eventsource');
const { fetchEventSource } = require('@microsoft/fetch-event-source');

const base = mustEnv('CACHEGATE_URL');
const username = mustEnv('CACHEGATE_USERNAME');
const password = mustEnv('CACHEGATE_PASSWORD');
const writes = Number(process.env.CACHEGATE_FEED_WRITES || 2000);
const dataBytes = Number(process.env.CACHEGATE_FEED_DATA_BYTES || 8192);
// The server's --events-retry in milliseconds, when the caller knows it.
const retryMs = process.env.CACHEGATE_FEED_RETRY_MS;

let access;
let subject;

async function login() {
  ({ access, subject } = await signIn(base, username, password));
}

// create writes one entry of the caller with data and returns it.
async function create(key, data) {
  const res = await fetch(`${base}/cache/user`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${access}` },
    body: JSON.stringify({ key, type: 'feed', data, assignee: { id: subject }, expiresIn: null }),
  });
  const body = await res.text();
  check(res.status === 201, `POST ${key} answered ${res.status}: ${body.slice(0, 200)}`);
  return JSON.parse(body);
}

// A switch between reading and not reading a response body: while paused,
// nothing is read from the connection, so the socket's buffers fill and
// the server's writes block, as with a client that stopped reading.
const stall = {
  paused: false,
  waiters: [],
  pause() { this.paused = true; },
  resume() {
    this.paused = false;
    for (const w of this.waiters.splice(0)) w();
  },
  wait() {
    return this.paused ? new Promise((r) => this.waiters.push(r)) : null;
  },
};

// stallableFetch is the fetch given to EventSource: the real fetch with
// the Authorization header, its body read only while the stall is off.
// It records each request's Last-Event-ID.
const connects = [];
async function stallableFetch(url, init) {
  const headers = { ...(init && init.headers), Authorization: `Bearer ${access}` };
  connects.push({ lastEventId: headers['Last-Event-ID'] ?? null, at: Date.now() });
  const res = await fetch(url, { ...init, headers });
  if (!res.body) {
    return res;
  }
  const reader = res.body.getReader();
  const body = new ReadableStream({
    async pull(ctrl) {
      const w = stall.wait();
      if (w) await w;
      const { done, value } = await reader.read();
      if (done) {
        ctrl.close();
      } else {
        ctrl.enqueue(value);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}

// pad returns n characters of random base64url text.
function pad(n) {
  return crypto.randomBytes(Math.ceil((n * 3) / 4)).toString('base64url').slice(0, n);
}

async function scenarioStalledEventSource() {
  // What was written, by entry id, and what arrived, by entry id.
  const written = new Map();
  const received = new Map();
  const problems = [];
  let opens = 0;
  let errors = 0;
  const ends = [];
  let firstErrorAt = 0;

  const es = new EventSource(`${base}/cache/user/events`, { fetch: stallableFetch });
  es.addEventListener('open', () => { opens++; });
  es.addEventListener('error', () => { errors++; firstErrorAt = firstErrorAt || Date.now(); });
  // Every event the server sends is named: an unnamed message would be a
  // block the server did not mean as an event.
  es.onmessage = (e) => problems.push(`unnamed message event: ${String(e.data).slice(0, 80)}`);
  es.addEventListener('end', (e) => { ends.push(e.data); });
  es.addEventListener('reset', (e) => problems.push(`reset: ${e.data}`));
  es.addEventListener('created', (e) => {
    let entry;
    try {
      entry = JSON.parse(e.data);
    } catch (err) {
      problems.push(`event ${e.lastEventId}: data is not JSON (${e.data.length} bytes, ends ${JSON.stringify(e.data.slice(-40))})`);
      return;
    }
    const seen = received.get(entry.id);
    if (seen) {
      problems.push(`entry ${entry.key} arrived twice (ids ${seen.rev} and ${e.lastEventId})`);
      return;
    }
    received.set(entry.id, { rev: e.lastEventId, data: entry.data, key: entry.key });
  });

  await step('(a) eventsource opens the stream with the Authorization header', async () => {
    await until(() => opens === 1, 'the open event', 15_000);
  });

  await step('(a) live changes arrive while the subscriber reads', async () => {
    for (let i = 0; i < 5; i++) {
      const e = await create(`before-${i}`, { i, before: true });
      written.set(e.id, e);
    }
    await until(() => received.size === 5, 'the first 5 changes', 15_000);
  });

  await step(`(a) the subscriber stops reading; ${writes} entries of ${dataBytes} bytes are written`, async () => {
    stall.pause();
    const workers = 4;
    let next = 0;
    await Promise.all(Array.from({ length: workers }, async () => {
      while (next < writes) {
        const i = next++;
        const data = { i, pad: pad(dataBytes) };
        const e = await create(`stalled-${i}`, data);
        written.set(e.id, e);
      }
    }));
    console.log(`FEED written ${writes}`);
  });

  await step('(a) the server cuts the stalled stream (the Go test says when)', async () => {
    const rl = readline.createInterface({ input: process.stdin });
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no "resume" on stdin')), bound);
      rl.on('line', (line) => {
        if (line.trim() === 'resume') {
          clearTimeout(timer);
          rl.close();
          resolve();
        }
      });
    });
    stall.resume();
  });

  await step('(a) eventsource reconnects by itself with Last-Event-ID and gets every change exactly once, intact', async () => {
    await until(() => received.size >= written.size || problems.length > 0,
      `${written.size} changes (got ${received.size})`, 60_000);
    check(problems.length === 0, problems.slice(0, 5).join('; '));
    for (const [id, e] of written) {
      const got = received.get(id);
      check(got, `entry ${e.key} never arrived`);
      check(JSON.stringify(got.data) === JSON.stringify(e.data), `entry ${e.key} arrived with other data`);
      check(got.key === e.key, `entry ${e.key} arrived as ${got.key}`);
    }
    check(received.size === written.size, `${received.size} changes for ${written.size} written`);
    check(errors >= 1 && opens >= 2 && connects.length >= 2, `opens ${opens}, errors ${errors}: no reconnection`);
    const resumed = connects.slice(1).map((c) => c.lastEventId);
    check(resumed.every((id) => id !== null && /^[0-9]+$/.test(id)),
      `a reconnection without Last-Event-ID: ${JSON.stringify(resumed)}`);
    const revs = [...received.values()].map((r) => Number(r.rev));
    for (let i = 1; i < revs.length; i++) {
      check(revs[i] > revs[i - 1], `ids out of order: ${revs[i - 1]} then ${revs[i]}`);
    }
    // Reported, not checked: the delay before the reconnection follows the
    // server's retry: (eventsource's own default is 3000 ms).
    console.log(`FEED a connects=${connects.length} opens=${opens} errors=${errors} ends=${JSON.stringify(ends)} ` +
      `resumed_from=${JSON.stringify(resumed)} received=${received.size} written=${written.size} ` +
      `reconnected_after_ms=${connects[1].at - firstErrorAt}`);
  });
  es.close();
}

async function scenarioFetchEventSource() {
  const messages = [];
  let heartbeats = 0;
  let opened = false;
  let start = '';
  const ctrl = new AbortController();
  // The body passes through unchanged; the heartbeat lines in it are
  // counted, to know that several went through the library's parser.
  const countingFetch = async (url, init) => {
    const res = await fetch(url, init);
    const decoder = new TextDecoder();
    let tail = '';
    const counted = res.body.pipeThrough(new TransformStream({
      transform(chunk, c) {
        const text = tail + decoder.decode(chunk, { stream: true });
        if (start.length < 64) start += text.slice(0, 64);
        heartbeats += text.split(': heartbeat\n').length - 1;
        tail = text.slice(-11); // shorter than a heartbeat line: none is counted twice
        c.enqueue(chunk);
      },
    }));
    return new Response(counted, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  const done = fetchEventSource(`${base}/cache/user/events`, {
    headers: { Authorization: `Bearer ${access}` },
    openWhenHidden: true,
    fetch: countingFetch,
    signal: ctrl.signal,
    async onopen(res) {
      check(res.status === 200, `the stream answered ${res.status}`);
      opened = true;
    },
    onmessage(m) { messages.push(m); },
    onerror(err) { throw err; },
  });
  done.catch((err) => { console.log(`FAIL (b) fetch-event-source: ${err && err.message}`); process.exit(1); });

  await step('(b) fetch-event-source receives no empty message across several heartbeats', async () => {
    await until(() => opened, 'the stream to open', 15_000);
    await until(() => heartbeats >= 5, 'five heartbeats', 30_000);
    check(messages.length === 0, `messages before any change: ${JSON.stringify(messages.slice(0, 3))}`);
    if (retryMs) {
      const want = `retry: ${retryMs}\n: stream open\n`;
      check(start.startsWith(want), `the stream starts ${JSON.stringify(start)}, want ${JSON.stringify(want)}`);
    }
  });

  await step('(b) fetch-event-source then gets each change as one message, after heartbeats too', async () => {
    const want = [];
    for (let i = 0; i < 3; i++) {
      want.push(await create(`fes-${i}`, { fes: i }));
    }
    const beats = heartbeats;
    await until(() => heartbeats >= beats + 3, 'three more heartbeats', 30_000);
    want.push(await create('fes-after-heartbeats', { fes: 'after' }));
    await until(() => messages.length >= want.length, `${want.length} messages (got ${messages.length})`, 30_000);
    check(messages.length === want.length, `${messages.length} messages for ${want.length} changes`);
    messages.forEach((m, i) => {
      check(m.event === 'created' && m.data !== '', `message ${i}: event ${JSON.stringify(m.event)}, data ${m.data.length} bytes`);
      const e = JSON.parse(m.data);
      check(e.id === want[i].id && JSON.stringify(e.data) === JSON.stringify(want[i].data), `message ${i} is not change ${i}`);
      check(/^[0-9]+$/.test(m.id), `message ${i} has id ${JSON.stringify(m.id)}`);
    });
    console.log(`FEED b heartbeats=${heartbeats} messages=${messages.length}`);
  });
  ctrl.abort();
  await done;
}

(async () => {
  await step('login (POST /auth/login)', login);
  await scenarioStalledEventSource();
  await scenarioFetchEventSource();
  console.log('feed complete');
  process.exit(0);
})().catch((err) => {
  console.log(`FAIL ${err && err.message ? err.message : err}`);
  process.exit(1);
});
