// The entry browser (#/entries: GET /admin/cache/<assignment> with the
// CRUD query language, any assignee) and the live change feed (#/feed:
// GET /cache/<assignment>/events, under the assignment's policy for the
// signed-in administrator, resumed with since= after a reconnection).

import { api, query, stream } from './api.js';
import { h, clear, field, table, announce, when, lines } from './dom.js';

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
  const filter = h('textarea', { name: 'filter', rows: '2', spellcheck: 'false', placeholder: 'key||$starts||session-' });
  const or = h('textarea', { name: 'or', rows: '1', spellcheck: 'false' });
  const sortField = h('select', { name: 'sort-field' }, FIELDS.map((f) => h('option', { value: f, selected: f === 'dateUpdated' }, f)));
  const sortDir = h('select', { name: 'sort-direction' }, h('option', { value: 'DESC' }, 'descending'), h('option', { value: 'ASC' }, 'ascending'));
  const limit = h('select', { name: 'limit' }, ['10', '25', '50', '100'].map((n) => h('option', { value: n, selected: n === '25' }, n)));
  const form = h('form', { class: 'card', 'aria-label': 'Filter entries' },
    field('Assignment', assignment),
    field('Filter', filter, `One condition a line, ANDed: field||$operator||value. Fields: ${FIELDS.join(', ')}. Operators: $eq $ne $gt $lt $gte $lte $starts $ends $cont $excl $in $notin $isnull $notnull $between and the L forms ($contL …).`),
    field('Or', or, 'Conditions ORed with the filter, one a line.'),
    field('Sort by', sortField), field('Direction', sortDir), field('Page size', limit),
    h('button', { type: 'submit' }, 'Show entries'));
  const results = h('div', { class: 'results' });
  const pager = h('div', { class: 'pager' });
  let page = 1;

  async function load() {
    if (!assignment.value) return;
    const q = query([...lines(filter.value).map((l) => ['filter', l]), ...lines(or.value).map((l) => ['or', l]),
      ['sort', `${sortField.value},${sortDir.value}`], ['limit', limit.value], ['page', page]]);
    try {
      const res = await api('GET', `/admin/cache/${enc(assignment.value)}${q}`);
      clear(results).append(table(`Entries of ${assignment.value}`, [
        ['Key', (e) => e.key],
        ['Type', (e) => e.type],
        ['Assignee', (e) => h('code', {}, e.assignee && e.assignee.id)],
        ['Version', (e) => String(e.version)],
        ['Updated', (e) => when(e.dateUpdated)],
        ['Expires', (e) => when(e.expirationDate)],
        ['Data', (e) => h('code', {}, preview(e.data))],
      ], res.data, 'No entry matches.'));
      const pages = Math.max(res.pageCount || 1, 1);
      clear(pager).append(
        h('p', {}, `Page ${res.page || page} of ${pages}, ${res.total} entries`),
        h('button', { type: 'button', disabled: page <= 1, onclick: () => { page--; load(); } }, 'Previous page'),
        h('button', { type: 'button', disabled: page >= pages, onclick: () => { page++; load(); } }, 'Next page'));
    } catch (err) {
      clear(pager);
      clear(results).append(h('p', { class: 'error' }, `Could not list entries: ${err.message}`));
    }
  }
  form.addEventListener('submit', (e) => { e.preventDefault(); page = 1; load(); });
  assignment.addEventListener('assignments', load);

  main.append(h('h1', { tabindex: '-1' }, 'Entries'), form, results, pager);
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
