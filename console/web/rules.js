// The rules editor (checked by RuleService.ValidateRules as you type, the error
// shown at the line its path names) and the "who may do what" tester
// (RuleService.CheckAccess).
import { h, clear, field, notice, options, debounce } from './dom.js';
import { t } from './strings.js';
import { rpc, explain, kindOf } from './api.js';

// segments splits "rules[0].read.filter.size._gtx" into ["rules", 0, "read", ...].
export function segments(path) {
  const out = [];
  for (const m of String(path).matchAll(/([^.[\]]+)|\[(\d+)\]/g)) out.push(m[2] !== undefined ? Number(m[2]) : m[1]);
  return out;
}

const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// lineOf returns the 1-based line of text where path points, following its
// segments through a YAML (block or flow) or JSON document: a key is the next
// "key:" (or "\"key\":") after the position so far, an index the n-th item of the
// list that follows. It finds the deepest segment it can; 0 if none.
export function lineOf(text, path) {
  let pos = 0;
  let found = -1;
  for (const seg of segments(path)) {
    if (typeof seg === 'string') {
      const re = new RegExp(`(^|[\\s{,])["']?${esc(seg)}["']?\\s*:`, 'gm');
      re.lastIndex = pos;
      const m = re.exec(text);
      if (!m) break;
      pos = m.index + m[0].length;
      found = m.index + m[1].length;
    } else {
      const at = itemAt(text, pos, seg);
      if (at < 0) break;
      pos = at;
      found = at;
    }
  }
  return found < 0 ? 0 : text.slice(0, found).split('\n').length;
}

// itemAt returns the offset of the n-th item of the list starting at or after pos:
// a JSON/flow list "[a, {...}]" or YAML block items "- ".
function itemAt(text, pos, n) {
  const rest = text.slice(pos);
  const lead = /^\s*/.exec(rest)[0].length;
  if (rest[lead] === '[') {
    let depth = 0; let idx = 0; let inStr = false;
    for (let i = pos + lead; i < text.length; i += 1) {
      const c = text[i];
      if (inStr) { if (c === '\\') i += 1; else if (c === '"') inStr = false; continue; }
      if (c === '"') { inStr = true; continue; }
      if (c === '[' || c === '{') {
        depth += 1;
        if (depth === 2 && idx === n) return i;
        if (depth === 1) continue;
      } else if (c === ']' || c === '}') {
        depth -= 1;
        if (depth === 0) return -1;
      } else if (c === ',' && depth === 1) {
        idx += 1;
      } else if (depth === 1 && idx === n && !/\s/.test(c)) {
        return i;
      }
    }
    return -1;
  }
  const re = /^([ \t]*)- /gm;
  re.lastIndex = pos;
  const first = re.exec(text);
  if (!first) return -1;
  const indent = first[1].length;
  let idx = 0;
  let m = first;
  while (m) {
    if (m[1].length === indent) {
      if (idx === n) return m.index + m[1].length;
      idx += 1;
    } else if (m[1].length < indent) {
      return -1;
    }
    m = re.exec(text);
  }
  return -1;
}

function editor(initial) {
  const gutter = h('pre', { class: 'gutter', 'aria-hidden': 'true', id: 'rules-gutter' });
  const ta = h('textarea', { id: 'rules-doc', spellcheck: 'false', wrap: 'off', rows: 18, value: initial });
  const drawGutter = (bad = 0) => {
    clear(gutter);
    const n = ta.value.split('\n').length;
    for (let i = 1; i <= n; i += 1) {
      gutter.append(h('span', { class: i === bad ? 'bad' : '', 'data-line': i }, `${i === bad ? '▶ ' : ''}${i}`), '\n');
    }
    gutter.scrollTop = ta.scrollTop;
  };
  ta.addEventListener('scroll', () => { gutter.scrollTop = ta.scrollTop; });
  drawGutter();
  return { ta, gutter, drawGutter };
}

function rulesEditor(main) {
  const msg = h('div', { role: 'status', id: 'rules-status', 'aria-live': 'polite' });
  const saveMsg = h('div', { role: 'alert', id: 'rules-save-msg' });
  const ed = editor('');
  const label = h('label', { for: 'rules-doc' }, t('rulesEditor'));
  const save = h('button', { type: 'button', class: 'primary', id: 'rules-save' }, t('rulesSave'));
  const section = h('section', { 'aria-labelledby': 'rules-h' }, h('h1', { id: 'rules-h' }, t('rulesTitle')),
    h('p', { class: 'muted' }, t('rulesIntro')), label, h('div', { class: 'code' }, ed.gutter, ed.ta), msg,
    h('div', { class: 'row' }, save), saveMsg);
  main.append(section);
  let seq = 0;
  const showError = (err) => {
    const line = err.field ? lineOf(ed.ta.value, err.field) : 0;
    ed.drawGutter(line);
    ed.ta.setAttribute('aria-invalid', 'true');
    notice(msg, kindOf(err) === 'refused' ? 'refused' : 'error',
      err.code === 'invalid_argument' ? (line ? t('rulesErrorAt', line, err.message) : t('rulesError', err.message)) : explain(err, 'actRules'));
    msg.dataset.line = String(line);
  };
  const validate = async () => {
    const my = ++seq;
    notice(msg, 'info', t('rulesChecking'));
    try {
      await rpc('RuleService', 'ValidateRules', { document: ed.ta.value });
      if (my !== seq) return;
      ed.drawGutter();
      ed.ta.removeAttribute('aria-invalid');
      notice(msg, 'ok', t('rulesValid'));
      msg.dataset.line = '0';
    } catch (err) {
      if (my === seq) showError(err);
    }
  };
  ed.ta.addEventListener('input', () => { ed.drawGutter(Number(msg.dataset.line || 0)); });
  ed.ta.addEventListener('input', debounce(validate, 300));
  save.addEventListener('click', async () => {
    try {
      const { data } = await rpc('RuleService', 'PutRules', { document: ed.ta.value });
      ed.ta.value = JSON.stringify(JSON.parse(data.document), null, 2);
      ed.drawGutter();
      notice(saveMsg, 'ok', t('rulesSaved'));
    } catch (err) {
      showError(err);
      notice(saveMsg, kindOf(err), explain(err, 'actRules'));
    }
  });
  return { ed, msg, section };
}

function tester(main, route) {
  const role = field(t('tRole'), { id: 't-role', value: 'user', autocomplete: 'off' });
  const user = field(t('tUser'), { id: 't-user', autocomplete: 'off' });
  const bucket = field(t('tBucket'), { id: 't-bucket', value: route.query.get('bucket') || 'default', autocomplete: 'off' });
  const action = field(t('tAction'), { id: 't-action' }, 'select');
  action.control.append(...options([['read', 'read'], ['create', 'create (upload)'], ['update', 'update (replace)'], ['delete', 'delete']], 'read'));
  const fileId = field(t('tFile'), { id: 't-file', autocomplete: 'off', value: route.query.get('file') || '' });
  const name = field(t('tName'), { id: 't-name', autocomplete: 'off' });
  const meta = field(t('tMeta'), { id: 't-meta', autocomplete: 'off' });
  const size = field(t('tSize'), { id: 't-size', type: 'number', min: 0, value: '0' });
  const mime = field(t('tMime'), { id: 't-mime', autocomplete: 'off' });
  const session = field(t('tSession'), { id: 't-session', autocomplete: 'off' });
  const out = h('div', { role: 'status', id: 'tester-result', 'aria-live': 'polite' });
  const form = h('form', { class: 'grid', id: 'tester' }, role.wrap, user.wrap, bucket.wrap, action.wrap, fileId.wrap, name.wrap,
    meta.wrap, size.wrap, mime.wrap, session.wrap, h('div', { class: 'row' }, h('button', { type: 'submit' }, t('tCheck'))));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    let sess = {};
    try { sess = session.control.value.trim() ? JSON.parse(session.control.value) : {}; } catch (err) { notice(out, 'error', err.message); return; }
    const body = { role: role.control.value, userId: user.control.value, bucketId: bucket.control.value,
      action: action.control.value, fileId: fileId.control.value, name: name.control.value, metadataJson: meta.control.value,
      mimeType: mime.control.value };
    if (Number(size.control.value) > 0) body.size = String(Number(size.control.value));
    const entries = Object.entries(sess || {});
    if (entries.length) body.session = Object.fromEntries(entries.map(([k, v]) => [k, String(v)]));
    try {
      const { data } = await rpc('RuleService', 'CheckAccess', body);
      clear(out);
      out.className = `notice ${data.allowed ? 'ok' : 'refused'}`;
      out.append(h('strong', { id: 'tester-verdict' }, data.allowed ? t('tAllowed') : t('tRefused')));
      if (data.rule) out.append(h('div', {}, t('tRule', data.rule)));
      if (data.reason) out.append(h('div', {}, t('tReason', data.reason)));
    } catch (err) {
      notice(out, kindOf(err), explain(err, 'actCheckAccess'));
    }
  });
  main.append(h('section', { 'aria-labelledby': 'tester-h' }, h('h2', { id: 'tester-h' }, t('testerTitle')),
    h('p', { class: 'muted' }, t('testerIntro')), form, out));
}

export async function render(main, route) {
  const { ed, msg, section } = rulesEditor(main);
  tester(main, route);
  try {
    const { data } = await rpc('RuleService', 'GetRules');
    ed.ta.value = JSON.stringify(JSON.parse(data.document || '{"rules":[]}'), null, 2);
    ed.drawGutter();
  } catch (err) {
    // No rules shown to a credential that may not read them.
    section.querySelectorAll('textarea, button').forEach((el) => { el.disabled = true; });
    notice(msg, kindOf(err), explain(err, 'actRules'));
  }
}
