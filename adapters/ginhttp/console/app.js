// The console's entry point: hash routing (#/users, #/users/<id>/sessions,
// #/sessions, #/audit, #/keys, #/entries, #/feed, #/signin), the sign-in
// page and the frame (who is signed in, the navigation, the time zone the
// times are shown in). A message in the status region lasts until the
// next action or page. Each page is a function
// render(main, params) that may return a cleanup function (closing its
// event streams) called when the page is left.

import { api, login, logout, claims, isAdmin, tokens, whenSignedOut } from './api.js';
import { h, clear, field, announce, zoneName } from './dom.js';
import { usersPage, sessionsPage, allSessionsPage } from './users.js';
import { auditPage } from './audit.js';
import { keysPage } from './keys.js';
import { entriesPage, feedPage } from './entries.js';

const routes = [
  [/^#\/users$/, usersPage],
  [/^#\/users\/([^/]+)\/sessions$/, sessionsPage],
  [/^#\/sessions$/, allSessionsPage],
  [/^#\/audit$/, auditPage],
  [/^#\/keys$/, keysPage],
  [/^#\/entries$/, entriesPage],
  [/^#\/feed$/, feedPage],
];

let cleanup = null;
// carried is a message for the page a navigation opens (the status of the
// page left is cleared).
let carried = null;
// names caches the signed-in user's name by id: access tokens carry only
// the id (sub).
const names = new Map();

function go(hash, msg, isError = false) {
  carried = [msg, isError];
  location.hash = hash;
}

function signInPage(main) {
  document.title = 'Sign in — cachegate console';
  const user = h('input', { name: 'username', autocomplete: 'username', required: true });
  const pass = h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const submit = h('button', { type: 'submit' }, 'Sign in');
  const form = h('form', { class: 'card', 'aria-labelledby': 'signin-title' },
    field('Username', user), field('Password', pass), submit);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    submit.disabled = true;
    try {
      await login(user.value.trim(), pass.value);
      pass.value = '';
      if (!isAdmin()) {
        await logout();
        announce('This account is not an administrator: the console is for administrators.', true);
        return;
      }
      go('#/users', 'Signed in.');
    } catch (err) {
      announce(`Sign-in failed: ${err.message}`, true);
    } finally {
      submit.disabled = false;
    }
  });
  main.append(h('h1', { id: 'signin-title', tabindex: '-1' }, 'Sign in'),
    h('p', {}, 'Sign in with an administrator account.'), form,
    h('p', { id: 'first-admin' }, 'No administrator yet? Create the first on the server\'s database with ',
      h('code', {}, 'cachegate users add --username NAME --admin --password-stdin'),
      ' (the password on standard input), then sign in here.'));
}

function frame(signedIn) {
  const c = claims();
  document.getElementById('nav').hidden = !signedIn;
  document.getElementById('signout').hidden = !signedIn;
  const who = document.getElementById('who');
  who.textContent = signedIn && c ? `Signed in as ${names.get(c.sub) || 'an administrator'}` : '';
  if (signedIn && c && !names.has(c.sub)) {
    api('GET', `/admin/users/${encodeURIComponent(c.sub)}`).then((u) => {
      names.set(c.sub, u.username);
      who.textContent = `Signed in as ${u.username}`;
    }).catch(() => { /* the page shows its own errors */ });
  }
  document.getElementById('zone').textContent = signedIn ? `Times in ${zoneName()} (UTC on hover)` : '';
  for (const a of document.querySelectorAll('#nav a')) {
    if (location.hash === a.getAttribute('href') || location.hash.startsWith(`${a.getAttribute('href')}/`)) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

// settle shows the message carried to the page being opened, or clears
// the status the page left behind.
function settle() {
  const [msg, isError] = carried || ['', false];
  carried = null;
  announce(msg, isError);
}

function render() {
  if (cleanup) { cleanup(); cleanup = null; }
  const main = clear(document.getElementById('main'));
  const signedIn = !!tokens.access && isAdmin();
  if (!signedIn) {
    if (location.hash !== '#/signin') { location.replace('#/signin'); return; }
    settle();
    frame(false);
    signInPage(main);
  } else {
    const hash = location.hash;
    const route = routes.find(([re]) => re.test(hash));
    if (!route) { location.replace('#/users'); return; }
    settle();
    frame(true);
    const params = hash.match(route[0]).slice(1).map(decodeURIComponent);
    const r = route[1](main, params);
    if (typeof r === 'function') cleanup = r;
  }
  const title = main.querySelector('h1');
  if (title) title.focus();
}

window.addEventListener('hashchange', () => {
  // Only #/… is a page: the skip link's #main is not.
  if (location.hash.startsWith('#/')) render();
});

// The next action clears the last message: a button pressed or a form
// sent (before the action's own handler, which may say something new).
document.addEventListener('click', (e) => {
  if (e.target instanceof Element && e.target.closest('button, a[href^="#/"]')) announce('');
}, true);
document.addEventListener('submit', () => announce(''), true);

document.getElementById('skip').addEventListener('click', (e) => {
  e.preventDefault();
  document.getElementById('main').focus();
});

document.getElementById('signout').addEventListener('click', async () => {
  await logout();
  go('#/signin', 'Signed out.');
});

whenSignedOut(() => {
  if (location.hash !== '#/signin') go('#/signin', 'Your session ended: sign in again.', true);
  else announce('Your session ended: sign in again.', true);
});

// An expired access token is refreshed by the page's first API call.
render();
