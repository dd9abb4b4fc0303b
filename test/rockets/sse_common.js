'use strict';
// What feed.js and feed_restart.js share: the browser globals
// @microsoft/fetch-event-source reads (see feed.js: under Node `window` is
// the global object, which has fetch and the timers, and `document` is
// never hidden), and the small helpers of a program whose steps a Go test
// reads. Required before the SSE libraries.

globalThis.window = globalThis;
globalThis.document = {
  hidden: false,
  addEventListener() {},
  removeEventListener() {},
};

// bound bounds every wait; no check asserts a latency.
const bound = 120_000;

function mustEnv(name) {
  const v = process.env[name];
  if (!v) {
    console.error(`${name} is not set`);
    process.exit(2);
  }
  return v;
}

function check(ok, what) {
  if (!ok) {
    throw new Error(what);
  }
}

// step runs fn and prints "ok   name", or "FAIL name: why" and exits 1.
async function step(name, fn) {
  const started = Date.now();
  try {
    await fn();
  } catch (err) {
    console.log(`FAIL ${name}: ${err && err.message ? err.message : err}`);
    process.exit(1);
  }
  console.log(`ok   ${name} (${Date.now() - started} ms)`);
}

// until resolves once cond() holds, polling; it fails after ms.
async function until(cond, what, ms = bound) {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

// signIn logs username in at base and returns its access token and the
// token's subject (the caller's user id).
async function signIn(base, username, password) {
  const res = await fetch(`${base}/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  check(res.status === 201, `login answered ${res.status}`);
  const access = (await res.json()).accessToken;
  const subject = JSON.parse(Buffer.from(access.split('.')[1], 'base64url').toString()).sub;
  check(subject, 'the access token has no subject');
  return { access, subject };
}

module.exports = { bound, mustEnv, check, step, until, signIn };
