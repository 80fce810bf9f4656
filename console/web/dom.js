// DOM helpers. Text is always set as text (createTextNode, textContent): nothing
// here parses HTML, so a file name or an error message can never become markup.
import { t } from './strings.js';

// h makes an element: attrs are properties or attributes ("class", "for", aria-*,
// data-*), "on" an object of event listeners; children are nodes, strings (as
// text), arrays of them, or null/false (skipped).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'on') {
      for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
    } else if (k === 'class') {
      el.className = v;
    } else if (k === 'for') {
      el.htmlFor = v;
    } else if (k === 'value' || k === 'checked' || k === 'disabled' || k === 'selected' || k === 'hidden') {
      el[k] = v;
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

// append adds children (as h takes them) to el.
export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// clear removes el's children.
export function clear(el) {
  el.replaceChildren();
  return el;
}

let ids = 0;
// uid returns a fresh element id.
export function uid(prefix = 'f') {
  ids += 1;
  return `${prefix}-${ids}`;
}

// field is a labelled form control: a <label> and the control (input by default).
export function field(label, attrs = {}, tag = 'input') {
  const id = attrs.id || uid();
  const control = h(tag, { ...attrs, id });
  const wrap = h('div', { class: attrs.type === 'checkbox' ? 'field check' : 'field' });
  if (attrs.type === 'checkbox') append(wrap, [control, h('label', { for: id }, label)]);
  else append(wrap, [h('label', { for: id }, label), control]);
  return { wrap, control };
}

// thead is a table's head: a column header for each string key; the keys in num
// head columns of numbers, right-aligned as their cells (td.num) are.
export function thead(keys, num = []) {
  return h('thead', {}, h('tr', {}, ...keys.map((k) => h('th', { scope: 'col', class: num.includes(k) ? 'num' : null }, t(k)))));
}

// select makes a <select> of [value, text] options.
export function options(values, current) {
  return values.map(([v, text]) => h('option', { value: v, selected: v === current }, text));
}

// notice shows a message in el: kind is "ok", "error", "refused" or "info".
export function notice(el, kind, text) {
  clear(el);
  if (!text) return el;
  el.className = `notice ${kind}`;
  append(el, [text]);
  return el;
}

// fmtBytes is a size for people: 1.5 MB, 320 B.
export function fmtBytes(n) {
  n = Number(n || 0);
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i += 1; }
  return `${i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)} ${units[i]}`;
}

// fmtTime is a timestamp in the reader's locale.
export function fmtTime(ts) {
  if (!ts) return '';
  const d = new Date(ts);
  return Number.isNaN(d.getTime()) ? String(ts) : d.toLocaleString();
}

// confirmDialog asks a yes/no question in a modal <dialog>; resolves true on yes.
export function confirmDialog(question, yesLabel, noLabel) {
  return new Promise((resolve) => {
    const yes = h('button', { type: 'button', class: 'danger', 'data-confirm': 'yes' }, yesLabel);
    const no = h('button', { type: 'button', 'data-confirm': 'no' }, noLabel);
    const dlg = h('dialog', { class: 'confirm', 'aria-label': question },
      h('p', {}, question), h('div', { class: 'row' }, no, yes));
    const done = (v) => { dlg.close(); dlg.remove(); resolve(v); };
    yes.addEventListener('click', () => done(true));
    no.addEventListener('click', () => done(false));
    dlg.addEventListener('cancel', (e) => { e.preventDefault(); done(false); });
    document.body.append(dlg);
    dlg.showModal();
    no.focus();
  });
}

// debounce calls fn ms after the last call.
export function debounce(fn, ms) {
  let timer = 0;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}
