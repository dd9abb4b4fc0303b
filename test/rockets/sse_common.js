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

module.exports = { bound, mustEnv, check, step, until };
