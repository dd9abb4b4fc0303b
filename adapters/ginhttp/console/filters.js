// The filter builder: rows of field, operator and value that make the
// API's conditions (<field>||<operator>||<value>, ANDed), with the raw
// syntax, one condition a line, as an option. Switching keeps the
// conditions: rows become lines and lines that parse become rows.

import { h } from './dom.js';

const OPERATORS = [
  ['$eq', 'equals'], ['$ne', 'does not equal'], ['$gt', 'greater than'], ['$lt', 'less than'],
  ['$gte', 'at least'], ['$lte', 'at most'], ['$starts', 'starts with'], ['$ends', 'ends with'],
  ['$cont', 'contains'], ['$excl', 'does not contain'], ['$in', 'is one of (a,b)'], ['$notin', 'is none of (a,b)'],
  ['$between', 'between (a,b)'], ['$isnull', 'is empty'], ['$notnull', 'is not empty'],
  ['$eqL', 'equals, any case'], ['$neL', 'does not equal, any case'], ['$startsL', 'starts with, any case'],
  ['$endsL', 'ends with, any case'], ['$contL', 'contains, any case'], ['$exclL', 'does not contain, any case'],
  ['$inL', 'is one of, any case'], ['$notinL', 'is none of, any case'],
];
const NO_VALUE = new Set(['$isnull', '$notnull']);

let seq = 0;

// parse splits one raw condition; null when it is not field||$op[||value]
// with a known field and operator.
function parse(line, fields) {
  const parts = line.split('||');
  if (parts.length < 2 || !fields.includes(parts[0]) || !OPERATORS.some(([o]) => o === parts[1])) return null;
  return { field: parts[0], op: parts[1], value: parts.slice(2).join('||') };
}

// filterBuilder returns {el, conditions()}: el is the fieldset to put in
// a form, conditions() the lines to send as filter= parameters.
export function filterBuilder(label, fields, hint) {
  const id = `fb${++seq}`;
  const rows = h('ol', { class: 'conditions', 'aria-label': `${label}: conditions` });
  const raw = h('textarea', { id: `${id}-raw`, name: 'filter', rows: '3', spellcheck: 'false',
    placeholder: `${fields[0]}||$eq||value`, 'aria-describedby': `${id}-hint` });
  const rawBox = h('div', { class: 'field', hidden: true },
    h('label', { for: raw.id }, `${label} (raw)`), raw,
    h('span', { class: 'hint', id: `${id}-hint` }, hint));
  const add = h('button', { type: 'button', class: 'secondary' }, 'Add a condition');
  const toggle = h('button', { type: 'button', class: 'secondary', 'aria-pressed': 'false' }, 'Edit as raw text');
  const empty = h('p', { class: 'hint' }, 'No condition: every row.');

  const renumber = () => {
    [...rows.children].forEach((li, i) => {
      const n = i + 1;
      li.querySelector('.f-field').setAttribute('aria-label', `Field of condition ${n}`);
      li.querySelector('.f-op').setAttribute('aria-label', `Operator of condition ${n}`);
      li.querySelector('.f-value').setAttribute('aria-label', `Value of condition ${n}`);
      li.querySelector('.f-remove').setAttribute('aria-label', `Remove condition ${n}`);
    });
    empty.hidden = rows.children.length > 0;
  };

  function addRow(c = { field: fields[0], op: '$eq', value: '' }) {
    const field = h('select', { class: 'f-field' }, fields.map((f) => h('option', { value: f, selected: f === c.field }, f)));
    const op = h('select', { class: 'f-op' }, OPERATORS.map(([o, text]) => h('option', { value: o, selected: o === c.op }, `${o} ${text}`)));
    const value = h('input', { class: 'f-value', autocomplete: 'off', spellcheck: 'false', value: c.value });
    const sync = () => { value.disabled = NO_VALUE.has(op.value); if (value.disabled) value.value = ''; };
    op.addEventListener('change', sync);
    sync();
    const li = h('li', { class: 'condition' }, field, op, value,
      h('button', { type: 'button', class: 'secondary f-remove', onclick: () => { li.remove(); renumber(); rows.querySelector('select')?.focus(); } }, 'Remove'));
    rows.append(li);
    renumber();
    return field;
  }

  const fromRows = () => [...rows.children].map((li) => {
    const f = li.querySelector('.f-field').value;
    const o = li.querySelector('.f-op').value;
    const v = li.querySelector('.f-value').value;
    return NO_VALUE.has(o) ? `${f}||${o}` : `${f}||${o}||${v}`;
  });
  const fromRaw = () => raw.value.split('\n').map((l) => l.trim()).filter(Boolean);
  const isRaw = () => toggle.getAttribute('aria-pressed') === 'true';

  add.addEventListener('click', () => addRow().focus());
  toggle.addEventListener('click', () => {
    if (!isRaw()) {
      raw.value = fromRows().join('\n');
      rows.hidden = true; add.hidden = true; empty.hidden = true; rawBox.hidden = false;
      toggle.setAttribute('aria-pressed', 'true');
      toggle.textContent = 'Use the filter builder';
      raw.focus();
      return;
    }
    const lines = fromRaw();
    const parsed = lines.map((l) => parse(l, fields));
    if (parsed.some((c) => !c)) {
      // A line the builder cannot show stays raw rather than being lost.
      rawBox.querySelector('.hint').textContent = `${hint} The builder cannot show every line: fix or remove it first.`;
      return;
    }
    rows.replaceChildren();
    parsed.forEach((c) => addRow(c));
    rows.hidden = false; add.hidden = false; rawBox.hidden = true;
    rawBox.querySelector('.hint').textContent = hint;
    toggle.setAttribute('aria-pressed', 'false');
    toggle.textContent = 'Edit as raw text';
    renumber();
    toggle.focus();
  });

  const el = h('fieldset', { class: 'filter' }, h('legend', {}, label), rows, empty, rawBox,
    h('div', { class: 'actions' }, add, toggle));
  renumber();
  return { el, conditions: () => (isRaw() ? fromRaw() : fromRows()), addRow };
}
