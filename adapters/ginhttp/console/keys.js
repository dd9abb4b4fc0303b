// Signing keys (#/keys): list, rotate (published ahead, or now), revoke.

import { api } from './api.js';
import { h, clear, table, announce, when, named, confirmAction } from './dom.js';

export function keysPage(main) {
  document.title = 'Keys — cachegate console';
  const results = h('div', { class: 'results' });
  const now = h('input', { name: 'now', type: 'checkbox', id: 'rotate-now' });
  const rotate = h('form', { class: 'card', 'aria-labelledby': 'rotate-title' },
    h('h2', { id: 'rotate-title' }, 'Rotate'),
    h('p', {}, 'A new key is published in the JWKS first and signs after the publish-ahead delay; "now" makes it sign at once (emergencies).'),
    h('div', { class: 'check' }, now, h('label', { for: 'rotate-now' }, 'Sign with the new key now')),
    h('button', { type: 'submit' }, 'Rotate the signing key'));

  async function load() {
    try {
      const res = await api('GET', '/admin/keys');
      clear(results).append(table('Signing keys', [
        ['Key id', (k) => h('code', {}, k.kid)],
        ['Algorithm', (k) => k.algorithm],
        ['State', (k) => k.state],
        ['Created', (k) => when(k.dateCreated)],
        ['Signs from', (k) => when(k.signsFrom)],
        ['Retired', (k) => when(k.retiredAt)],
        ['Revoked', (k) => when(k.revokedAt)],
        ['Action', (k) => (k.state === 'revoked' ? '—' : revokeButton(k))],
      ], res.data, 'No key.'));
    } catch (err) {
      clear(results).append(h('p', { class: 'error' }, `Could not list keys: ${err.message}`));
    }
  }

  function revokeButton(k) {
    return h('button', { type: 'button', class: 'danger', onclick: async () => {
      if (!(await confirmAction(`Revoke the key ${k.kid}?`,
        'Every token it signed stops working at once, on every replica.', 'Revoke key'))) return;
      try {
        await api('POST', `/admin/keys/${encodeURIComponent(k.kid)}/revoke`);
        announce(`Key ${k.kid} revoked.`);
      } catch (err) {
        announce(err.message, true);
      }
      load();
    } }, named('Revoke', `key ${k.kid}`));
  }

  rotate.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const k = await api('POST', '/admin/keys/rotate', { now: now.checked });
      announce(`New key ${k.kid} (${k.state}).`);
    } catch (err) {
      announce(`Could not rotate: ${err.message}`, true);
    }
    load();
  });

  main.append(h('h1', { tabindex: '-1' }, 'Signing keys'), results, rotate);
  load();
}
