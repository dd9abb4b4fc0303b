// Building the page from nodes, never from HTML text: every text the API
// returns becomes a text node, so no answer can inject markup (and the
// Content-Security-Policy forbids inline script and style anyway).

// h creates an element: h('button', {type: 'button', onclick: f}, 'Text').
// Attributes named on* add listeners; class, for and boolean values are
// handled; null and false leave an attribute out.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') {
      el.addEventListener(k.slice(2), v);
    } else if (v === true) {
      el.setAttribute(k, '');
    } else {
      el.setAttribute(k, String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// clear empties an element.
export function clear(el) {
  el.replaceChildren();
  return el;
}

let fieldSeq = 0;

// field is a labelled control: the label's for names the control's id.
export function field(label, control, hint) {
  const id = control.id || `f${++fieldSeq}`;
  control.id = id;
  let hintEl = null;
  if (hint) {
    hintEl = h('span', { class: 'hint', id: `${id}-hint` }, hint);
    control.setAttribute('aria-describedby', hintEl.id);
  }
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hintEl);
}

// table builds a data table: columns are [header, cell(row)] pairs; a cell
// returns text or a node. Each cell carries its column's name
// (data-label): under 40rem the rows are stacked as cards, each cell
// under its column's name, so no column (the actions least of all) is
// off-screen (console.css).
export function table(caption, columns, rows, empty = 'Nothing to show.') {
  if (!rows.length) return h('p', { class: 'empty' }, empty);
  const t = h('table', { class: 'cards' },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, columns.map(([name]) => h('th', { scope: 'col' }, name)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, columns.map(([name, cell], i) => {
      const v = cell(r);
      return i === 0 ? h('th', { scope: 'row', 'data-label': name }, v) : h('td', { 'data-label': name }, v);
    })))));
  return h('div', { class: 'scroll', role: 'region', 'aria-label': caption, tabindex: '0' }, t);
}

// announce says msg in the page's status region (aria-live).
export function announce(msg, isError = false) {
  const s = document.getElementById('status');
  s.classList.toggle('error', isError);
  s.textContent = msg;
}

const pad = (n, w = 2) => String(n).padStart(w, '0');

// localText is d in the browser's zone, as the date pickers show it:
// YYYY-MM-DD HH:MM:SS.
export const localText = (d) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
  `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;

// zoneName is the browser's time zone, in which the console shows times.
export const zoneName = () => {
  try { return Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time'; } catch { return 'local time'; }
};

// when shows an RFC 3339 time in the browser's zone; the UTC value is in
// its title (on hover) and its datetime attribute.
export function when(v) {
  if (!v) return '—';
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) return String(v);
  const utc = d.toISOString();
  return h('time', { datetime: utc, title: `UTC ${utc}` }, localText(d));
}

// named is a control's visible text followed by words only a screen
// reader says, so that each row's "Disable" is "Disable alice" to it.
export const named = (visible, hidden) => [visible, h('span', { class: 'vh' }, ` ${hidden}`)];

// yesNo renders a boolean.
export const yesNo = (b) => (b ? 'yes' : 'no');

// lines splits a textarea's text into its non-empty trimmed lines.
export const lines = (text) => text.split('\n').map((l) => l.trim()).filter(Boolean);

// confirmAction asks before a destructive action in a modal dialog:
// resolves true when the person chose the action, false on Cancel or
// Escape. Focus starts on Cancel and returns where it was.
export function confirmAction(title, text, action) {
  return new Promise((resolve) => {
    const back = document.activeElement;
    const id = `dlg${++fieldSeq}`;
    const cancel = h('button', { type: 'button', class: 'secondary', autofocus: true }, 'Cancel');
    const ok = h('button', { type: 'button', class: 'danger confirm' }, action);
    const dlg = h('dialog', { class: 'confirm', 'aria-labelledby': `${id}-t`, 'aria-describedby': `${id}-d` },
      h('h2', { id: `${id}-t` }, title), h('p', { id: `${id}-d` }, text),
      h('div', { class: 'actions' }, cancel, ok));
    let answer = false;
    cancel.addEventListener('click', () => dlg.close());
    ok.addEventListener('click', () => { answer = true; dlg.close(); });
    dlg.addEventListener('close', () => {
      dlg.remove();
      if (back && back.isConnected) back.focus();
      resolve(answer);
    });
    document.body.append(dlg);
    dlg.showModal();
    cancel.focus();
  });
}
