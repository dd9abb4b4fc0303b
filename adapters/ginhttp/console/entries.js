// The entry browser (#/entries: GET /admin/cache/<assignment> with the
// CRUD query language, any assignee, the filter builder or raw; one entry
// opened whole, edited with If-Match of the version shown, a conflict
// shown with the current version, and deleted) and the live change feed
// (#/feed: GET /cache/<assignment>/events, under the assignment's policy
// for the signed-in administrator, resumed with since= after a
// reconnection).

import { api, query, stream } from './api.js';
import { h, clear, field, table, announce, when, lines, named, confirmAction } from './dom.js';
import { filterBuilder } from './filters.js';
import { userCell } from './names.js';

const FIELDS = ['id', 'key', 'type', 'assignee.id', 'version', 'dateCreated', 'dateUpdated', 'expirationDate'];
const enc = encodeURIComponent;

// assignmentSelect lists the configured assignments (assignments.json,
// served with the console).
function assignmentSelect() {
  const s = h('select', { name: 'assignment' });
  fetch('assignments.json', { credentials: 'omit' }).then((r) => r.json()).then((names) => {
    for (const n of names) s.append(h('option', { value: n }, n));
    s.dispatchEvent(new Event('assignments'));
  }).catch(() => announce('Could not read the assignments.', true));
  return s;
}

const preview = (data) => {
  const s = JSON.stringify(data);
  return s && s.length > 80 ? `${s.slice(0, 79)}…` : (s || '');
};

export function entriesPage(main) {
  document.title = 'Entries — cachegate console';
  const assignment = assignmentSelect();
  const filter = filterBuilder('Filter', FIELDS,
    `One condition a line, ANDed: field||$operator||value. Fields: ${FIELDS.join(', ')}. Operators: $eq $ne $gt $lt $gte $lte $starts $ends $cont $excl $in $notin $isnull $notnull $between and the L forms ($contL …).`);
  const or = h('textarea', { name: 'or', rows: '1', spellcheck: 'false' });
  const sortField = h('select', { name: 'sort-field' }, FIELDS.map((f) => h('option', { value: f, selected: f === 'dateUpdated' }, f)));
  const sortDir = h('select', { name: 'sort-direction' }, h('option', { value: 'DESC' }, 'descending'), h('option', { value: 'ASC' }, 'ascending'));
  const limit = h('select', { name: 'limit' }, ['10', '25', '50', '100'].map((n) => h('option', { value: n, selected: n === '25' }, n)));
  const form = h('form', { class: 'card', 'aria-label': 'Filter entries' },
    field('Assignment', assignment), filter.el,
    field('Or', or, 'Raw conditions ORed with the filter, one a line.'),
    field('Sort by', sortField), field('Direction', sortDir), field('Page size', limit),
    h('button', { type: 'submit' }, 'Show entries'));
  const results = h('div', { class: 'results' });
  const pager = h('div', { class: 'pager' });
  const detail = h('section', { class: 'card', 'aria-labelledby': 'entry-title', hidden: true });
  let page = 1;

  async function load() {
    if (!assignment.value) return;
    const q = query([...filter.conditions().map((l) => ['filter', l]), ...lines(or.value).map((l) => ['or', l]),
      ['sort', `${sortField.value},${sortDir.value}`], ['limit', limit.value], ['page', page]]);
    const a = assignment.value;
    try {
      const res = await api('GET', `/admin/cache/${enc(a)}${q}`);
      clear(results).append(table(`Entries of ${a}`, [
        ['Key', (e) => e.key],
        ['Type', (e) => e.type],
        ['Assignee', (e) => userCell(e.assignee && e.assignee.id)],
        ['Version', (e) => String(e.version)],
        ['Updated', (e) => when(e.dateUpdated)],
        ['Expires', (e) => when(e.expirationDate)],
        ['Data', (e) => h('code', {}, preview(e.data))],
        ['Action', (e) => h('button', { type: 'button', onclick: () => open(a, e.id) }, named('Open', e.key))],
      ], res.data, 'No entry matches.'));
      const pages = Math.max(res.pageCount || 1, 1);
      clear(pager).append(
        h('p', {}, `Page ${res.page || page} of ${pages}, ${res.total} entries`),
        h('button', { type: 'button', disabled: page <= 1, onclick: () => { page--; load(); } }, 'Previous page'),
        h('button', { type: 'button', disabled: page >= pages, onclick: () => { page++; load(); } }, 'Next page'));
    } catch (err) {
      clear(pager).append(h('p', {}, 'No entries listed.'));
      clear(results).append(h('p', { class: 'error' }, `Could not list entries: ${err.message}`));
    }
  }

  // open shows one entry whole, with its edit form and delete button;
  // the version shown is the one If-Match names.
  async function open(a, id) {
    let e;
    try {
      e = await api('GET', `/admin/cache/${enc(a)}/${enc(id)}`);
    } catch (err) {
      announce(`Could not open the entry: ${err.message}`, true);
      return;
    }
    const key = h('input', { name: 'entry-key', autocomplete: 'off', required: true, value: e.key });
    const type = h('input', { name: 'entry-type', autocomplete: 'off', required: true, value: e.type });
    const data = h('textarea', { name: 'entry-data', rows: '8', spellcheck: 'false' });
    data.value = JSON.stringify(e.data, null, 2);
    const expires = h('input', { name: 'entry-expires', autocomplete: 'off', placeholder: '7 days' });
    const conflict = h('div', { class: 'conflict', hidden: true, role: 'alert' });
    const save = h('form', { 'aria-label': `Edit ${e.key}` },
      field('Key', key), field('Type', type), field('Data (JSON)', data),
      field('Expires in', expires, 'A duration (1h, 7 days); empty: the assignment\'s default. Saving recomputes the expiry from now.'),
      conflict,
      h('div', { class: 'actions' }, h('button', { type: 'submit' }, `Save as version ${e.version + 1}`),
        h('button', { type: 'button', class: 'danger', onclick: () => remove(a, e) }, named('Delete', `entry ${e.key}`)),
        h('button', { type: 'button', class: 'secondary', onclick: () => { detail.hidden = true; } }, 'Close')));
    save.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      let parsed;
      try { parsed = JSON.parse(data.value); } catch {
        announce('The data is not valid JSON.', true);
        data.focus();
        return;
      }
      const body = { key: key.value, type: type.value, data: parsed, assignee: { id: e.assignee.id } };
      if (expires.value.trim()) body.expiresIn = expires.value.trim();
      try {
        const saved = await api('PUT', `/admin/cache/${enc(a)}/${enc(e.id)}`, body, { 'If-Match': `"${e.version}"` });
        await open(a, saved.id);
        announce(`Saved ${saved.key}: version ${saved.version}.`);
        load();
      } catch (err) {
        if (err.status !== 412) {
          announce(`Could not save: ${err.message}`, true);
          return;
        }
        await showConflict(a, e, conflict);
      }
    });
    clear(detail).append(h('h2', { id: 'entry-title', tabindex: '-1' }, `Entry ${e.key}`),
      h('dl', { class: 'facts' },
        h('dt', {}, 'Id'), h('dd', {}, h('code', {}, e.id)),
        h('dt', {}, 'Assignee'), h('dd', {}, userCell(e.assignee && e.assignee.id)),
        h('dt', {}, 'Version'), h('dd', { class: 'version' }, String(e.version)),
        h('dt', {}, 'Created'), h('dd', {}, when(e.dateCreated)),
        h('dt', {}, 'Updated'), h('dd', {}, when(e.dateUpdated)),
        h('dt', {}, 'Expires'), h('dd', {}, when(e.expirationDate))),
      h('h3', {}, 'Data'), h('pre', { class: 'data', tabindex: '0', 'aria-label': `Data of ${e.key}` }, JSON.stringify(e.data, null, 2)),
      h('h3', {}, 'Edit'), save);
    detail.hidden = false;
    detail.querySelector('h2').focus();
  }

  // showConflict says the entry changed since it was opened: the version
  // now stored, its data, and a way to reload it (dropping the edit).
  async function showConflict(a, e, box) {
    let cur = null;
    try { cur = await api('GET', `/admin/cache/${enc(a)}/${enc(e.id)}`); } catch { /* deleted meanwhile */ }
    clear(box).append(
      h('p', {}, cur
        ? `Not saved: the entry changed since you opened version ${e.version}. The current version is ${cur.version}.`
        : `Not saved: the entry was deleted since you opened version ${e.version}.`),
      cur ? h('pre', { class: 'data', tabindex: '0', 'aria-label': `Data of version ${cur.version}` }, JSON.stringify(cur.data, null, 2)) : null,
      cur ? h('button', { type: 'button', onclick: () => open(a, e.id) }, `Reload version ${cur.version} (drops your edit)`) : null);
    box.hidden = false;
    announce(cur ? `Conflict: version ${cur.version} is current.` : 'Conflict: the entry was deleted.', true);
  }

  async function remove(a, e) {
    if (!(await confirmAction(`Delete the entry ${e.key}?`,
      `The entry ${e.key} (version ${e.version}) of ${a} is deleted for its assignee too.`, 'Delete entry'))) return;
    try {
      await api('DELETE', `/admin/cache/${enc(a)}/${enc(e.id)}`, undefined, { 'If-Match': `"${e.version}"` });
      detail.hidden = true;
      announce(`Deleted ${e.key}.`);
    } catch (err) {
      if (err.status === 412) {
        announce(`Not deleted: the entry changed since you opened version ${e.version}; open it again.`, true);
      } else {
        announce(`Could not delete: ${err.message}`, true);
      }
    }
    load();
  }

  form.addEventListener('submit', (e) => { e.preventDefault(); page = 1; load(); });
  assignment.addEventListener('assignments', load);

  main.append(h('h1', { tabindex: '-1' }, 'Entries'), form, results, pager, detail);
}

export function feedPage(main) {
  document.title = 'Change feed — cachegate console';
  const assignment = assignmentSelect();
  const key = h('input', { name: 'key', autocomplete: 'off' });
  const type = h('input', { name: 'type', autocomplete: 'off' });
  const assignee = h('input', { name: 'assignee', autocomplete: 'off' });
  const button = h('button', { type: 'submit' }, 'Watch');
  const form = h('form', { class: 'card', 'aria-label': 'Watch the change feed' },
    field('Assignment', assignment), field('Key', key, 'Optional: only this key.'),
    field('Type', type, 'Optional: only this type.'), field('Assignee id', assignee, 'Optional: only this assignee.'),
    button);
  const state = h('span', { class: 'state' }, 'stopped');
  const live = h('ol', { class: 'live', 'aria-live': 'polite', 'aria-relevant': 'additions', 'aria-label': 'Live changes' });
  let stop = null;

  const onEvent = (name, e, id) => {
    if (name === 'reset') {
      live.prepend(h('li', { class: 'event' }, 'Some changes were no longer retained: list the entries again.'));
      return;
    }
    live.prepend(h('li', { class: 'event' }, h('strong', {}, name), ` #${id} `, e.key || '', ' ',
      e.type ? `(${e.type}) ` : '', 'version ', String(e.version ?? ''), ' ', when(e.dateUpdated)));
    while (live.children.length > 200) live.lastElementChild.remove();
  };

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (stop) {
      stop();
      stop = null;
      button.textContent = 'Watch';
      return;
    }
    const q = query([['key', key.value.trim()], ['type', type.value.trim()], ['assignee.id', assignee.value.trim()]]);
    stop = stream(`/cache/${enc(assignment.value)}/events${q}`, ['created', 'updated', 'deleted', 'expired', 'reset'],
      onEvent, (s) => { state.textContent = s; }, 'since');
    button.textContent = 'Stop watching';
  });

  main.append(h('h1', { tabindex: '-1' }, 'Change feed'),
    h('p', {}, 'Changes as they happen, under the assignment\'s access policy for you (an owner assignment shows your own entries\' changes).'),
    form, h('p', {}, 'Stream: ', state), live);
  return () => { if (stop) stop(); };
}
