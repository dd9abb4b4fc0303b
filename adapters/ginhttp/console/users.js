// Users (#/users), one user's sessions (#/users/<id>/sessions) and every
// user's sessions (#/sessions), on the admin API (docs/admin.md): list
// with the CRUD query language (the filter builder or raw), create,
// disable/enable, grant/revoke admin, set password, delete; list and
// revoke sessions. Every destructive action asks first.

import { api, query } from './api.js';
import { h, clear, field, table, announce, when, yesNo, named, confirmAction } from './dom.js';
import { filterBuilder } from './filters.js';
import { userCell, remember } from './names.js';

const PAGE = 20;
const enc = encodeURIComponent;
const USER_FIELDS = ['username', 'id', 'active', 'admin', 'dateCreated', 'dateUpdated'];

// pagerFor fills pager with the page count and its buttons; with res
// null (the list failed) it says there is no page rather than keeping
// the last one's count.
function pagerFor(pager, res, page, noun, go) {
  if (!res) {
    clear(pager).append(h('p', {}, `No ${noun} listed.`));
    return;
  }
  const pages = Math.max(res.pageCount || 1, 1);
  clear(pager).append(
    h('p', {}, `Page ${res.page || page} of ${pages}, ${res.total} ${noun}`),
    h('button', { type: 'button', disabled: page <= 1, onclick: () => go(page - 1) }, 'Previous page'),
    h('button', { type: 'button', disabled: page >= pages, onclick: () => go(page + 1) }, 'Next page'));
}

// act runs a change, says how it went and reloads the list.
async function act(call, done, load) {
  try {
    await call();
    announce(done);
  } catch (err) {
    announce(err.message, true);
  }
  await load();
}

export function usersPage(main) {
  document.title = 'Users — cachegate console';
  let page = 1;
  const filter = filterBuilder('Filter', USER_FIELDS,
    'One condition a line: field||$operator||value (fields: id, username, active, admin, dateCreated, dateUpdated). Conditions are ANDed.');
  const sort = h('select', { name: 'sort' },
    h('option', { value: 'username,ASC' }, 'username, A to Z'),
    h('option', { value: 'dateCreated,DESC' }, 'newest first'),
    h('option', { value: 'dateCreated,ASC' }, 'oldest first'));
  const listForm = h('form', { class: 'card', 'aria-label': 'Filter users' },
    filter.el, field('Sort', sort), h('button', { type: 'submit' }, 'Apply'));
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
    const q = query([...filter.conditions().map((l) => ['filter', l]), ['sort', sort.value], ['limit', PAGE], ['page', page]]);
    try {
      const res = await api('GET', `/admin/users${q}`);
      for (const u of res.data) remember(u.id, u.username);
      clear(results).append(table('Users', [
        ['Username', (u) => u.username],
        ['Active', (u) => yesNo(u.active)],
        ['Admin', (u) => yesNo(u.admin)],
        ['Created', (u) => when(u.dateCreated)],
        ['Actions', (u) => actions(u)],
      ], res.data, 'No user matches.'));
      pagerFor(pager, res, page, 'users', (p) => { page = p; load(); });
    } catch (err) {
      clear(results).append(h('p', { class: 'error' }, `Could not list users: ${err.message}`));
      pagerFor(pager, null, page, 'users');
    }
  }

  function actions(u) {
    const patch = (body, done) => act(() => api('PATCH', `/admin/users/${enc(u.id)}`, body), done, load);
    const disable = async () => {
      if (await confirmAction(`Disable ${u.username}?`,
        `${u.username} can no longer sign in, and every session of theirs ends now.`, 'Disable')) {
        await patch({ active: false }, `${u.username} disabled.`);
      }
    };
    const revokeAdmin = async () => {
      if (await confirmAction(`Revoke the admin role of ${u.username}?`,
        `${u.username} loses the admin API and this console within a second.`, 'Revoke admin')) {
        await patch({ admin: false }, `${u.username} is no longer an administrator.`);
      }
    };
    const del = async () => {
      if (await confirmAction(`Delete ${u.username}?`,
        `The account ${u.username} and every session of theirs are removed. This cannot be undone.`, 'Delete user')) {
        await act(() => api('DELETE', `/admin/users/${enc(u.id)}`), `Deleted ${u.username}.`, load);
      }
    };
    return h('div', { class: 'actions' },
      h('a', { href: `#/users/${enc(u.id)}/sessions` }, named('Sessions', `of ${u.username}`)),
      u.active
        ? h('button', { type: 'button', class: 'danger', onclick: disable }, named('Disable', u.username))
        : h('button', { type: 'button', onclick: () => patch({ active: true }, `${u.username} enabled.`) }, named('Enable', u.username)),
      u.admin
        ? h('button', { type: 'button', class: 'danger', onclick: revokeAdmin }, named('Revoke admin', `of ${u.username}`))
        : h('button', { type: 'button', onclick: () => patch({ admin: true }, `${u.username} is now an administrator.`) },
          named('Make admin', u.username)),
      h('button', { type: 'button', onclick: () => showPassword(u) }, named('Set password', `of ${u.username}`)),
      h('button', { type: 'button', class: 'danger', onclick: del }, named('Delete', u.username)));
  }

  function showPassword(u) {
    const pw = h('input', { name: 'set-password', type: 'password', autocomplete: 'new-password', required: true });
    const form = h('form', {}, field(`New password for ${u.username}`, pw),
      h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Save password'),
        h('button', { type: 'button', class: 'secondary', onclick: () => { editor.hidden = true; } }, 'Cancel')));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      await act(() => api('PUT', `/admin/users/${enc(u.id)}/password`, { password: pw.value }),
        `Password of ${u.username} set; their sessions ended.`, load);
      editor.hidden = true;
    });
    clear(editor).append(h('h2', { id: 'pw-title' }, `Set the password of ${u.username}`), form);
    editor.hidden = false;
    pw.focus();
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

// revokeButton revokes one session after asking.
function revokeButton(s, who, load) {
  return h('button', { type: 'button', class: 'danger', onclick: async () => {
    if (await confirmAction('Revoke this session?',
      `The device signed in as ${who} (${s.userAgent || 'unknown agent'}, ${s.address || 'unknown address'}) is signed out: its tokens stop working within a second.`,
      'Revoke session')) {
      await act(() => api('DELETE', `/admin/sessions/${enc(s.id)}`), 'Session revoked.', load);
    }
  } }, named('Revoke', `session ${s.id}`));
}

export function sessionsPage(main, [id]) {
  document.title = 'Sessions — cachegate console';
  const title = h('h1', { tabindex: '-1' }, 'Sessions');
  const results = h('div', { class: 'results' });
  const revokeAll = h('button', { type: 'button', class: 'danger' }, 'Revoke all sessions');
  let name = 'this user';

  async function load() {
    try {
      const u = await api('GET', `/admin/users/${enc(id)}`);
      name = u.username;
      remember(u.id, u.username);
      title.textContent = `Sessions of ${u.username}`;
      document.title = `Sessions of ${u.username} — cachegate console`;
      const res = await api('GET', `/admin/users/${enc(id)}/sessions`);
      clear(results).append(h('p', {}, 'User: ', userCell(u.id, u.username)), table(`Sessions of ${u.username}`, [
        ['Started', (s) => when(s.dateCreated)],
        ['Last used', (s) => when(s.lastUsed)],
        ['Address', (s) => s.address || '—'],
        ['User agent', (s) => s.userAgent || '—'],
        ['Expires', (s) => when(s.expiresAt)],
        ['Session id', (s) => h('code', {}, s.id)],
        ['Action', (s) => revokeButton(s, u.username, load)],
      ], res.data, 'No live session.'));
    } catch (err) {
      clear(results).append(h('p', { class: 'error' }, `Could not list sessions: ${err.message}`));
    }
  }

  revokeAll.addEventListener('click', async () => {
    if (await confirmAction(`Revoke every session of ${name}?`,
      `Every device signed in as ${name} is signed out; the account stays active.`, 'Revoke all sessions')) {
      await act(() => api('DELETE', `/admin/users/${enc(id)}/sessions`), 'Every session revoked.', load);
    }
  });
  main.append(title, h('p', {}, h('a', { href: '#/users' }, 'Back to users')), results, h('p', {}, revokeAll));
  load();
}

export function allSessionsPage(main) {
  document.title = 'All sessions — cachegate console';
  const results = h('div', { class: 'results' });
  const pager = h('div', { class: 'pager' });
  let page = 1;

  async function load() {
    try {
      const res = await api('GET', `/admin/sessions${query([['limit', PAGE], ['page', page]])}`);
      clear(results).append(table('Live sessions of every user', [
        ['User', (s) => h('span', {}, userCell(s.userId, s.username), ' ',
          h('a', { href: `#/users/${enc(s.userId)}/sessions` }, named('All', `sessions of ${s.username || s.userId}`)))],
        ['Started', (s) => when(s.dateCreated)],
        ['Last used', (s) => when(s.lastUsed)],
        ['Address', (s) => s.address || '—'],
        ['User agent', (s) => s.userAgent || '—'],
        ['Session id', (s) => h('code', {}, s.id)],
        ['Action', (s) => revokeButton(s, s.username || s.userId, load)],
      ], res.data, 'No live session.'));
      pagerFor(pager, res, page, 'sessions', (p) => { page = p; load(); });
    } catch (err) {
      clear(results).append(h('p', { class: 'error' }, `Could not list sessions: ${err.message}`));
      pagerFor(pager, null, page, 'sessions');
    }
  }

  main.append(h('h1', { tabindex: '-1' }, 'All sessions'),
    h('p', {}, 'Every live session, the last used first.'), results, pager);
  load();
}
