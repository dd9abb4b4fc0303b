// The audit trail (#/audit): a query form over GET /admin/audit (newest
// first, paged by its cursor) and the live stream of GET
// /admin/audit/events, whose events are announced as they arrive.

import { api, query, stream } from './api.js';
import { h, clear, field, table, announce, when, zoneName } from './dom.js';
import { userCell } from './names.js';

const TYPES = ['login.succeeded', 'login.failed', 'login.throttled', 'refresh.reused', 'logout',
  'session.expired', 'user.added', 'user.disabled', 'user.enabled', 'user.password_changed',
  'key.rotated', 'key.revoked', 'session.revoked', 'user.admin_granted', 'user.admin_revoked',
  'user.deleted', 'session.evicted', 'entry.updated', 'entry.deleted',
  // Recorded by the admin API before each fact had one type (docs/admin.md).
  'admin.user_added', 'admin.user_updated', 'admin.user_password_set', 'admin.user_deleted',
  'admin.sessions_revoked', 'admin.key_rotated', 'admin.key_revoked'];

// isoOrEmpty turns a datetime-local value (the browser's local time) into
// RFC 3339.
const isoOrEmpty = (v) => (v ? new Date(v).toISOString() : '');

const columns = [
  ['Time', (e) => when(e.time)],
  ['Type', (e) => e.type],
  ['User', (e) => (e.userId ? userCell(e.userId, e.username) : (e.username || '—'))],
  ['Actor', (e) => (e.actor ? userCell(e.actor.id, e.actor.username) : '—')],
  ['Address', (e) => e.address || '—'],
  ['Count', (e) => (e.count > 1 ? String(e.count) : '1')],
  ['Detail', (e) => [e.reason, typeof e.detail === 'string' ? e.detail : (e.detail && JSON.stringify(e.detail))].filter(Boolean).join('; ') || '—'],
];

export function auditPage(main) {
  document.title = 'Audit trail — cachegate console';
  const type = h('select', { name: 'type' }, h('option', { value: '' }, 'any type'),
    TYPES.map((t) => h('option', { value: t }, t)));
  const user = h('input', { name: 'user', autocomplete: 'off' });
  const address = h('input', { name: 'address', autocomplete: 'off' });
  const since = h('input', { name: 'since', type: 'datetime-local' });
  const until = h('input', { name: 'until', type: 'datetime-local' });
  const form = h('form', { class: 'card', 'aria-label': 'Query the audit trail' },
    field('Type', type), field('User', user, 'A username.'), field('Address', address),
    field('Since', since, `In your zone, ${zoneName()}.`), field('Until', until, `In your zone, ${zoneName()}.`), h('button', { type: 'submit' }, 'Search'));
  const results = h('div', { class: 'results' });
  const more = h('button', { type: 'button', hidden: true }, 'Older events');
  let rows = [];
  let next = null;

  async function load(append) {
    const q = query([['type', type.value], ['user', user.value.trim()], ['address', address.value.trim()],
      ['since', isoOrEmpty(since.value)], ['until', isoOrEmpty(until.value)], ['limit', 50],
      ['before', append ? next : '']]);
    try {
      const res = await api('GET', `/admin/audit${q}`);
      rows = append ? rows.concat(res.data) : res.data;
      next = res.next;
      more.hidden = !next;
      clear(results).append(table('Audit events, newest first', columns, rows, 'No event matches.'));
    } catch (err) {
      clear(results).append(h('p', { class: 'error' }, `Could not query the audit trail: ${err.message}`));
    }
  }
  form.addEventListener('submit', (e) => { e.preventDefault(); load(false); });
  more.addEventListener('click', () => load(true));

  // The live part: newest on top, at most 100 kept.
  const state = h('span', { class: 'state' }, 'connecting');
  const live = h('ol', { class: 'live', 'aria-live': 'polite', 'aria-relevant': 'additions', 'aria-label': 'Live audit events' });
  const toggle = h('button', { type: 'button', 'aria-pressed': 'true' }, 'Pause the live stream');
  let stop = null;
  const onEvent = (_name, e) => {
    const item = h('li', { class: 'event' }, when(e.time), ' ', h('strong', {}, e.type), ' ',
      e.username || e.userId || '', e.address ? ` from ${e.address}` : '',
      e.actor && e.actor.username ? ` by ${e.actor.username}` : '');
    live.prepend(item);
    while (live.children.length > 100) live.lastElementChild.remove();
  };
  const start = () => {
    stop = stream('/admin/audit/events', ['audit'], onEvent, (s) => { state.textContent = s; });
  };
  toggle.addEventListener('click', () => {
    if (stop) {
      stop();
      stop = null;
      toggle.textContent = 'Resume the live stream';
      toggle.setAttribute('aria-pressed', 'false');
      announce('Live audit stream paused.');
    } else {
      start();
      toggle.textContent = 'Pause the live stream';
      toggle.setAttribute('aria-pressed', 'true');
    }
  });

  main.append(h('h1', { tabindex: '-1' }, 'Audit trail'),
    h('section', { class: 'card', 'aria-labelledby': 'live-title' },
      h('h2', { id: 'live-title' }, 'Live'), h('p', {}, 'Stream: ', state, ' ', toggle), live),
    h('h2', {}, 'Search'), form, results, more);
  start();
  load(false);
  return () => { if (stop) stop(); };
}
