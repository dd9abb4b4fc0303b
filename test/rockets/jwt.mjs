// cachegate's tokens through two standard JWT libraries, exactly as
// published: jose (jwtVerify with a remote JWKS) and oauth4webapi (its
// RFC 9068 validator, validateJwtAccessToken). test/e2e/jwt_clients_test.go
// starts the binary, runs this program and answers its requests to rotate
// the signing key; any failed step exits non-zero naming the step. Tokens
// and passwords are never printed.
//
// Protocol with the Go test: this program prints "ROTATE" (or
// "ROTATE-NOW") on a line of its own and waits for a line on standard
// input holding the new kid: the test has run `cachegate keys rotate`
// (published 1 min ahead of signing) or `keys rotate --now`, and seen the
// server list the new key (README.md, "Signing keys").
//
// Times are those of the README scaled down: the JWKS answers max-age=60
// and keys are published 2 min ahead; here jose's long-lived key set
// refetches after 1 s (cacheMaxAge) and keys are published 1 min ahead
// (the least the server accepts: the JWKS max-age).
// jose's cooldown stays at its default, 30 s: a token naming a kid the set
// does not hold within 30 s of its last fetch is refused. (oauth4webapi's
// own cache, below, waits 60 s before refetching for an unknown kid: the
// default 2 min ahead covers it.)
//
// Environment: CACHEGATE_URL, CACHEGATE_USERNAME, CACHEGATE_PASSWORD.

import * as readline from 'node:readline';
import * as jose from 'jose';
import * as oauth from 'oauth4webapi';

const base = mustEnv('CACHEGATE_URL');
const username = mustEnv('CACHEGATE_USERNAME');
const password = mustEnv('CACHEGATE_PASSWORD');
const issuer = 'cachegate';
const audience = 'cachegate';
const jwksURL = new URL('/.well-known/jwks.json', base);

function mustEnv(name) {
  const v = process.env[name];
  if (!v) {
    console.log(`FAIL environment: ${name} is not set`);
    process.exit(2);
  }
  return v;
}

const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

// rotate asks the Go test to rotate the key and returns the new kid.
async function rotate(request) {
  console.log(request);
  const { value, done } = await lines.next();
  if (done || !value.trim()) {
    throw new Error(`no kid came back for ${request}`);
  }
  return value.trim();
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function login() {
  const res = await fetch(new URL('/auth/login', base), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  if (res.status !== 201) {
    throw new Error(`login answered ${res.status}`);
  }
  const body = await res.json();
  return { access: body.accessToken, refresh: body.refreshToken };
}

// kidOf reads the kid header of a token without verifying it.
const kidOf = (token) => jose.decodeProtectedHeader(token).kid;

// The long-lived key set of a resource server: one for the whole run.
const jwks = jose.createRemoteJWKSet(jwksURL, { cacheMaxAge: 1000 });

const verifyAccess = (token, set = jwks) =>
  jose.jwtVerify(token, set, { typ: 'at+jwt', issuer, audience, algorithms: ['EdDSA'] });

// oauth4webapi caches the key set per authorization-server object (at
// most 300 s; a token naming an unknown kid refetches it when it is 60 s
// old), times that do not scale down: the loop across the rotation gives
// it a fresh object, an empty cache, per token (fresh = true).
const as = { issuer, jwks_uri: jwksURL.href };
const validate = (token, fresh = false) =>
  oauth.validateJwtAccessToken(
    fresh ? { ...as } : as,
    new Request(new URL('/cache/user', base), { headers: { authorization: `Bearer ${token}` } }),
    audience,
    { [oauth.allowInsecureRequests]: true },
  );

// codeOf names a refusal by its library code (jose's err.code,
// oauth4webapi's err.code) and message, never the token.
const codeOf = (err) => `${(err && err.code) || (err && err.name) || 'error'}: ${err && err.message}`;

async function refused(what, promise, wantCode) {
  try {
    await promise;
  } catch (err) {
    if (wantCode && err.code !== wantCode) {
      throw new Error(`${what} refused as ${codeOf(err)}, want ${wantCode}`);
    }
    return err;
  }
  throw new Error(`${what} was accepted`);
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
    console.log(`FAIL ${name}: ${err && err.message ? err.message : String(err)}`);
  }
}

async function main() {
  let pair;
  await step('login', async () => {
    pair = await login();
  });
  await step("jose verifies the access token with the JWKS, typ 'at+jwt', audience and issuer", async () => {
    const { payload, protectedHeader } = await verifyAccess(pair.access);
    if (protectedHeader.typ !== 'at+jwt' || payload.client_id !== 'cachegate') {
      throw new Error(`typ ${protectedHeader.typ}, client_id ${payload.client_id}`);
    }
  });
  await step("oauth4webapi's RFC 9068 validator accepts the access token", async () => {
    const claims = await validate(pair.access);
    for (const c of ['iss', 'exp', 'aud', 'sub', 'client_id', 'iat', 'jti']) {
      if (claims[c] === undefined) {
        throw new Error(`no ${c} claim`);
      }
    }
  });
  await step('jose without its typ option refuses the refresh token as an access token (audience)', async () => {
    await refused(
      'the refresh token',
      jose.jwtVerify(pair.refresh, jwks, { issuer, audience, algorithms: ['EdDSA'] }),
      'ERR_JWT_CLAIM_VALIDATION_FAILED',
    );
  });
  await step("oauth4webapi's validator refuses the refresh token", async () => {
    await refused('the refresh token', validate(pair.refresh));
  });

  // Rotation, published ahead: one long-lived key set across it.
  const oldKid = kidOf(pair.access);
  let newKid;
  await step('keys rotate publishes a new key (1 min ahead of signing)', async () => {
    newKid = await rotate('ROTATE');
    if (newKid === oldKid) {
      throw new Error('the rotation kept the kid');
    }
  });
  await step('every token issued across the rotation verifies with the long-lived key set', async () => {
    const deadline = Date.now() + 90000;
    let signedByNew = 0;
    let before = 0;
    while (signedByNew < 10) {
      if (Date.now() > deadline) {
        throw new Error(`after 90 s, ${signedByNew} tokens of the new key (${before} of the old)`);
      }
      const { access } = await login();
      const kid = kidOf(access);
      try {
        await verifyAccess(access);
        await validate(access, true);
      } catch (err) {
        throw new Error(`a token of the ${kid === newKid ? 'new' : 'old'} key refused: ${codeOf(err)}`);
      }
      if (kid === newKid) {
        signedByNew++;
      } else if (kid === oldKid) {
        before++;
      } else {
        throw new Error('a token of a third key');
      }
      // A login a second while the old key signs, then quicker.
      await sleep(kid === newKid ? 200 : 1000);
    }
    if (before === 0) {
      throw new Error('no token of the old key after the rotation: the new key signed at once');
    }
  });

  // The control: a key set that fetched just before `keys rotate --now`
  // meets a token of the new key within its cooldown and refuses it:
  // what publishing ahead prevents.
  await step('a key set that fetched before keys rotate --now refuses the new key within its cooldown', async () => {
    const cached = jose.createRemoteJWKSet(jwksURL, { cacheMaxAge: 60000 });
    await verifyAccess((await login()).access, cached);
    const nowKid = await rotate('ROTATE-NOW');
    const { access } = await login();
    if (kidOf(access) !== nowKid) {
      throw new Error('the server does not sign with the --now key');
    }
    await refused('a token of the --now key', verifyAccess(access, cached), 'ERR_JWKS_NO_MATCHING_KEY');
  });

  if (failed) {
    process.exit(1);
  }
  console.log('jwt clients complete');
  process.exit(0);
}

main().catch((err) => {
  console.log(`FAIL unexpected: ${err && err.message ? err.message : String(err)}`);
  process.exit(1);
});
