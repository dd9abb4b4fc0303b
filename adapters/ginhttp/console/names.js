// Usernames beside user ids: a small cache of GET /admin/users/<id>, one
// request per id however many cells show it (the answers that carry a
// username, such as the audit trail's and the session list's, fill it
// without a request).

import { api } from './api.js';
import { h } from './dom.js';

const known = new Map();

// remember records a name an answer carried.
export function remember(id, name) {
  if (id && name) known.set(id, Promise.resolve(name));
}

// username resolves to the user's name, or '' for an id that names no
// user (deleted since) or that cannot be read.
export function username(id) {
  if (!id) return Promise.resolve('');
  if (!known.has(id)) {
    known.set(id, api('GET', `/admin/users/${encodeURIComponent(id)}`).then((u) => u.username)
      .catch((err) => { if (err.status !== 404) known.delete(id); return ''; }));
  }
  return known.get(id);
}

// userCell shows a user: the name (resolved when not given) beside the
// id.
export function userCell(id, name) {
  if (!id) return name || '—';
  remember(id, name);
  const label = h('span', { class: 'uname' }, name || '…');
  if (!name) {
    username(id).then((n) => { label.textContent = n || '(no such user)'; });
  }
  return h('span', { class: 'user' }, label, ' ', h('code', { class: 'uid' }, id));
}
