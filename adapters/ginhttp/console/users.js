// Users (#/users) and one user's sessions (#/users/<id>/sessions), on the
// admin API (docs/admin.md): list with the CRUD query language, create,
// disable/enable, set password, delete; list and revoke sessions.

import { api, query } from './api.js';
import { h, clear, field, table, announce, when, yesNo, lines, named } from './dom.js';

const PAGE = 20;
const enc = encodeURIComponent;

export function usersPage(main) {
  document.title = 'Users — cachegate console';
  let page = 1;
  const filter = h('textarea', { name: 'filter', rows: '2', spellcheck: 'false',
    placeholder: 'username||$contL||ann' });
  const sort = h('select', { name: 'sort' },
    h('option', { value: 'username,ASC' }, 'username, A to Z'),
    h('option', { value: 'dateCreated,DESC' }, 'newest first'),
    h('option', { value: 'dateCreated,ASC' }, 'oldest first'));
  const listForm = h('form', { class: 'card', 'aria-label': 'Filter users' },
    field('Filter', filter, 'One condition a line: field||$operator||value (fields: id, username, active, admin, dateCreated, dateUpdated). Conditions are ANDed.'),
    field('Sort', sort),
    h('button', { type: 'submit' }, 'Apply'));
  const results = h('div', { class: 'results' });
  const pager = h('div', { class: 'pager' });
  const editor = h('section', { class: 'card', 'aria-labelledby': 'pw-title', hidden: true });

  const username = h('input', { name: 'new-username', autocomplete: 'off', required: true });
  const password = h('input', { name: 'new-password', type: 'password', autocomplete: 'new-password', required: true });
  const admin = h('input', { name: 'new-admin', type: 'checkbox' });
  const createForm = h('form', { class: 'card', 'aria-labelledby': 'create-title' },
    h('h2', { id: 'create-title' }, 'Create a user'),
    field('Username', username), field('Password', password),
    h('div', { class: 'check' }, admin, h('label', { for: (admin.id = 'new-admin') }, 'Administrator')),
    h('button', { type: 'submit' }, 'Create user'));

  async function load() {
    const q = query([...lines(filter.value).map((l) => ['filter', l]), ['sort', sort.value],
      ['limit', PAGE], ['page', page]]);
    try {
      const res = await api('GET', `/admin/users${q}`);
      clear(results).append(table('Users', [
        ['Username', (u) => u.username],
        ['Active', (u) => yesNo(u.active)],
        ['Admin', (u) => yesNo(u.admin)],
        ['Created', (u) => when(u.dateCreated)],
        ['Actions', (u) => actions(u)],
      ], res.data, 'No user matches.'));
      clear(pager).append(
        h('p', {}, `Page ${res.page || page} of ${Math.max(res.pageCount || 1, 1)}, ${res.total} users`),
        h('button', { type: 'button', disabled: page <= 1, onclick: () => { page--; load(); } }, 'Previous page'),
        h('button', { type: 'button', disabled: page >= (res.pageCount || 1), onclick: () => { page++; load(); } }, 'Next page'));
    } catch (err) {
      clear(results).append(h('p', { class: 'error' }, `Could not list users: ${err.message}`));
    }
  }

  function actions(u) {
    const del = h('button', { type: 'button', class: 'danger' }, named('Delete', u.username));
    del.addEventListener('click', async () => {
      if (!del.classList.contains('confirm')) {
        del.classList.add('confirm');
        del.replaceChildren(...named('Confirm delete', u.username));
        return;
      }
      await act(() => api('DELETE', `/admin/users/${enc(u.id)}`), `Deleted ${u.username}.`);
    });
    return h('div', { class: 'actions' },
      h('a', { href: `#/users/${enc(u.id)}/sessions` }, named('Sessions', `of ${u.username}`)),
      h('button', { type: 'button', onclick: () => act(() => api('PATCH', `/admin/users/${enc(u.id)}`, { active: !u.active }),
        `${u.username} ${u.active ? 'disabled' : 'enabled'}.`) }, named(u.active ? 'Disable' : 'Enable', u.username)),
      h('button', { type: 'button', onclick: () => showPassword(u) }, named('Set password', `of ${u.username}`)),
      del);
  }

  function showPassword(u) {
    const pw = h('input', { name: 'set-password', type: 'password', autocomplete: 'new-password', required: true });
    const form = h('form', {}, field(`New password for ${u.username}`, pw),
      h('button', { type: 'submit' }, 'Save password'),
      h('button', { type: 'button', onclick: () => { editor.hidden = true; } }, 'Cancel'));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      await act(() => api('PUT', `/admin/users/${enc(u.id)}/password`, { password: pw.value }),
        `Password of ${u.username} set; their sessions ended.`);
      editor.hidden = true;
    });
    clear(editor).append(h('h2', { id: 'pw-title' }, `Set the password of ${u.username}`), form);
    editor.hidden = false;
    pw.focus();
  }

  async function act(call, done) {
    try {
      await call();
      announce(done);
    } catch (err) {
      announce(err.message, true);
    }
    await load();
  }

  listForm.addEventListener('submit', (e) => { e.preventDefault(); page = 1; load(); });
  createForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const u = await api('POST', '/admin/users', { username: username.value.trim(), password: password.value, admin: admin.checked });
      announce(`Created ${u.username}.`);
      username.value = '';
      password.value = '';
      admin.checked = false;
    } catch (err) {
      announce(`Could not create the user: ${err.message}`, true);
    }
    load();
  });

  main.append(h('h1', { tabindex: '-1' }, 'Users'), listForm, results, pager, editor, createForm);
  load();
}

export function sessionsPage(main, [id]) {
  document.title = 'Sessions — cachegate console';
  const title = h('h1', { tabindex: '-1' }, 'Sessions');
  const results = h('div', { class: 'results' });
  const revokeAll = h('button', { type: 'button', class: 'danger' }, 'Revoke all sessions');

  async function load() {
    try {
      const u = await api('GET', `/admin/users/${enc(id)}`);
      title.textContent = `Sessions of ${u.username}`;
      document.title = `Sessions of ${u.username} — cachegate console`;
      const res = await api('GET', `/admin/users/${enc(id)}/sessions`);
      clear(results).append(table(`Sessions of ${u.username}`, [
        ['Started', (s) => when(s.dateCreated)],
        ['Last used', (s) => when(s.lastUsed)],
        ['Address', (s) => s.address || '—'],
        ['User agent', (s) => s.userAgent || '—'],
        ['Expires', (s) => when(s.expiresAt)],
        ['Session id', (s) => h('code', {}, s.id)],
        ['Action', (s) => h('button', { type: 'button', class: 'danger',
          onclick: () => act(() => api('DELETE', `/admin/sessions/${enc(s.id)}`), 'Session revoked.') },
        named('Revoke', `session ${s.id}`))],
      ], res.data, 'No live session.'));
    } catch (err) {
      clear(results).append(h('p', { class: 'error' }, `Could not list sessions: ${err.message}`));
    }
  }

  async function act(call, done) {
    try {
      await call();
      announce(done);
    } catch (err) {
      announce(err.message, true);
    }
    await load();
  }

  revokeAll.addEventListener('click', () => act(() => api('DELETE', `/admin/users/${enc(id)}/sessions`), 'Every session revoked.'));
  main.append(title, h('p', {}, h('a', { href: '#/users' }, 'Back to users')), results, h('p', {}, revokeAll));
  load();
}
