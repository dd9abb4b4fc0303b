// The set-up page (docs/admin.md, "The first admin"): the one-time link
// serve logs is /console/setup#token=…; the token is in the fragment, which
// the browser never sends, and this page posts it to POST /auth/setup
// with the first administrator's username and password. On success it
// sends the user to the sign-in page.

const status = document.getElementById('status');
const form = document.getElementById('setup');

function say(text, error = false) {
  status.classList.toggle('error', error);
  status.textContent = text;
}

// The token is read once and taken out of the address bar, so it stays
// out of the browser's history.
const token = new URLSearchParams(location.hash.slice(1)).get('token') || '';
if (location.hash) history.replaceState(null, '', location.pathname + location.search);

// The skip link focuses main without touching the address.
document.getElementById('skip').addEventListener('click', (e) => {
  e.preventDefault();
  document.getElementById('main').focus();
});

function disable() {
  for (const el of form.elements) el.disabled = true;
}

if (!token) {
  disable();
  say('This page needs the set-up link from the server\'s start-up log (…/console/setup#token=…).', true);
}

form.addEventListener('submit', async (e) => {
  e.preventDefault();
  const username = form.elements.username.value;
  const password = form.elements.password.value;
  if (password !== form.elements.confirm.value) {
    say('The two passwords differ.', true);
    form.elements.confirm.focus();
    return;
  }
  const button = form.querySelector('button');
  button.disabled = true;
  say('Creating the administrator…');
  let res;
  try {
    res = await fetch('/auth/setup', {
      method: 'POST',
      headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
      body: JSON.stringify({ token, username, password }),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    button.disabled = false;
    say('The server did not answer: try again.', true);
    return;
  }
  if (res.status === 201) {
    disable();
    say(`Administrator ${username} created. Taking you to the sign-in page…`);
    setTimeout(() => location.assign('./#/signin'), 1500);
    return;
  }
  let body = null;
  try { body = await res.json(); } catch { /* not JSON */ }
  const msg = Array.isArray(body && body.message) ? body.message.join(', ') : (body && body.message) || `HTTP ${res.status}`;
  const code = (body && body.errorCode) || '';
  say(msg, true);
  if (['SETUP_LINK_USED', 'SETUP_LINK_EXPIRED', 'SETUP_LINK_INVALID', 'SETUP_NOT_LOCAL', 'ADMIN_EXISTS'].includes(code)) {
    disable();
  } else {
    button.disabled = false;
  }
});
