// The API client: bearer tokens only, never cookies (credentials: 'omit'),
// so the console needs no CSRF defence. Tokens live in localStorage under
// the keys @concepta/react-auth-provider uses (accessToken, refreshToken),
// so a Rockets app on the same origin and the console share a sign-in. On
// a 401 the pair is refreshed once at POST /token/refresh (one refresh at a
// time) and the call repeated; a second 401 signs out.

const ACCESS = 'accessToken';
const REFRESH = 'refreshToken';

export const tokens = {
  get access() { return localStorage.getItem(ACCESS); },
  get refresh() { return localStorage.getItem(REFRESH); },
  set(pair) {
    localStorage.setItem(ACCESS, pair.accessToken);
    localStorage.setItem(REFRESH, pair.refreshToken);
  },
  clear() {
    localStorage.removeItem(ACCESS);
    localStorage.removeItem(REFRESH);
  },
};

// ApiError carries the project's error shape {statusCode, message, errorCode}.
export class ApiError extends Error {
  constructor(status, body) {
    const msg = body && body.message;
    super(Array.isArray(msg) ? msg.map((m) => m.property || String(m)).join(', ') : (msg || `HTTP ${status}`));
    this.status = status;
    this.code = (body && body.errorCode) || '';
  }
}

let onSignedOut = () => {};

// whenSignedOut sets what happens when the session is gone.
export function whenSignedOut(f) { onSignedOut = f; }

function send(method, path, body, auth = true, extra = {}) {
  const headers = { Accept: 'application/json', ...extra };
  if (auth && tokens.access) headers.Authorization = `Bearer ${tokens.access}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  return fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'omit',
    cache: 'no-store',
  });
}

async function readError(res) {
  let body = null;
  try { body = await res.json(); } catch { /* not JSON */ }
  return new ApiError(res.status, body);
}

let refreshing = null;

// refresh exchanges the refresh token for a new pair, once at a time.
export function refresh() {
  if (!refreshing) {
    refreshing = (async () => {
      const rt = tokens.refresh;
      if (!rt) throw new ApiError(401, { message: 'signed out' });
      const res = await send('POST', '/token/refresh', { refreshToken: rt }, false);
      if (!res.ok) {
        tokens.clear();
        throw await readError(res);
      }
      tokens.set(await res.json());
    })().finally(() => { refreshing = null; });
  }
  return refreshing;
}

// api calls the API and returns the decoded answer (null for 204);
// headers are sent besides the usual ones (If-Match).
export async function api(method, path, body, headers = {}) {
  let res = await send(method, path, body, true, headers);
  if (res.status === 401 && tokens.refresh) {
    try {
      await refresh();
      res = await send(method, path, body, true, headers);
    } catch { /* answered below as signed out */ }
  }
  if (res.status === 401) {
    tokens.clear();
    onSignedOut();
  }
  if (!res.ok) throw await readError(res);
  if (res.status === 204) return null;
  return res.json();
}

// login signs in and stores the pair.
export async function login(username, password) {
  const res = await send('POST', '/auth/login', { username, password }, false);
  if (!res.ok) throw await readError(res);
  tokens.set(await res.json());
}

// logout ends the session on the server (best effort) and forgets it.
export async function logout() {
  try {
    if (tokens.access) await send('POST', '/auth/logout', undefined);
  } finally {
    tokens.clear();
  }
}

// claims decodes the access token's payload (no verification: the
// server checks every call; this only chooses what to show).
export function claims() {
  const t = tokens.access;
  if (!t) return null;
  try {
    const b64 = t.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    const json = decodeURIComponent(Array.from(atob(b64), (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join(''));
    return JSON.parse(json);
  } catch {
    return null;
  }
}

// isAdmin says whether the access token carries the admin role.
export function isAdmin() {
  const c = claims();
  return !!(c && Array.isArray(c.roles) && c.roles.includes('admin'));
}

// query builds a query string from [name, value] pairs, skipping empties.
export function query(pairs) {
  const p = new URLSearchParams();
  for (const [k, v] of pairs) if (v !== '' && v !== null && v !== undefined) p.append(k, v);
  const s = p.toString();
  return s ? `?${s}` : '';
}

// stream opens an EventSource on path with the access token in
// ?access_token= (EventSource cannot send headers). When the server ends
// the stream (event: end, at the token's expiry or the session's end) or
// refuses it, the pair is refreshed once and the stream reopened; resumeParam
// names the query parameter that resumes after the last id seen (the change
// feed's since), if the route has one. It returns a stop function.
export function stream(path, events, onEvent, onState, resumeParam) {
  let es = null;
  let stopped = false;
  let lastId = '';
  let failures = 0;
  const open = () => {
    if (stopped) return;
    const sep = path.includes('?') ? '&' : '?';
    const resume = resumeParam && lastId ? `&${resumeParam}=${encodeURIComponent(lastId)}` : '';
    es = new EventSource(`${path}${sep}access_token=${encodeURIComponent(tokens.access || '')}${resume}`);
    es.onopen = () => { failures = 0; onState('live'); };
    for (const name of events) {
      es.addEventListener(name, (e) => {
        if (e.lastEventId) lastId = e.lastEventId;
        let data = null;
        try { data = JSON.parse(e.data); } catch { data = e.data; }
        onEvent(name, data, e.lastEventId);
      });
    }
    const reopen = async () => {
      es.close();
      if (stopped) return;
      onState('reconnecting');
      if (++failures > 3) { onState('stopped'); return; }
      try { await refresh(); } catch { onState('stopped'); onSignedOut(); return; }
      setTimeout(open, 500 * failures);
    };
    es.addEventListener('end', reopen);
    es.onerror = () => {
      if (es.readyState === EventSource.CLOSED) reopen();
      else onState('reconnecting');
    };
  };
  open();
  return () => {
    stopped = true;
    if (es) es.close();
    onState('stopped');
  };
}
