// The file details panel: what the server knows of a file, a preview, and the
// actions on it (rename, metadata, replace, presign, download, delete).
import { h, clear, append, field, notice, options, fmtBytes, fmtTime, confirmDialog } from './dom.js';
import { t } from './strings.js';
import { rpc, send, blobURL, v1, explain, kindOf } from './api.js';

const PREVIEW_MAX = 50e6; // bytes fetched into a blob: URL at most
const TEXT_MAX = 65536;

function isText(type) {
  return /^text\//.test(type) || /^application\/(json|xml|yaml|x-yaml|javascript|x-ndjson)\b/.test(type) || /\+(json|xml)$/.test(type);
}

// preview fills box with the file's preview; blob: URLs made go to urls.
async function preview(box, f, urls) {
  const type = f.mimeType || '';
  const id = encodeURIComponent(f.id);
  const size = Number(f.size);
  const keep = (u) => { urls.push(u); return u; };
  try {
    if (/^image\/(png|jpeg|gif|webp|avif|heif|heic)$/.test(type)) {
      let u;
      try {
        u = keep(await blobURL(`files/${id}?w=800`));
      } catch (err) {
        if (size > PREVIEW_MAX) throw err;
        u = keep(await blobURL(`files/${id}`)); // no transformations on this server: the original
      }
      box.append(h('img', { src: u, alt: f.name, class: 'preview-img', id: 'preview-img' }));
    } else if (type === 'image/svg+xml' && size <= PREVIEW_MAX) {
      // An <img> never runs an SVG's scripts.
      box.append(h('img', { src: keep(await blobURL(`files/${id}`)), alt: f.name, class: 'preview-img', id: 'preview-img' }));
    } else if (isText(type)) {
      const resp = await v1('GET', `files/${id}`, { headers: { Range: `bytes=0-${TEXT_MAX - 1}` } });
      box.append(h('pre', { class: 'preview-text', id: 'preview-text', tabindex: 0 }, await resp.text()));
    } else if (type === 'application/pdf' && size <= PREVIEW_MAX) {
      const resp = await v1('GET', `files/${id}`);
      const blob = new Blob([await resp.arrayBuffer()], { type: 'application/pdf' });
      box.append(h('iframe', { src: keep(URL.createObjectURL(blob)), title: f.name, class: 'preview-pdf', id: 'preview-pdf' }));
    } else if (/^(audio|video)\//.test(type)) {
      let src = null;
      try {
        src = sameOrigin((await rpc('FileService', 'PresignFile', { id: f.id })).data.url); // streamed, with Range
      } catch (err) {
        if (size > PREVIEW_MAX) throw err;
      }
      if (!src) { // no presigned URL, or one on another origin (the CSP's media-src is 'self')
        if (size > PREVIEW_MAX) {
          box.append(h('p', { class: 'muted' }, t('previewTooBig', fmtBytes(size))));
          return;
        }
        src = keep(await blobURL(`files/${id}`));
      }
      box.append(h(type.startsWith('audio/') ? 'audio' : 'video', { src, controls: true, preload: 'metadata', class: 'preview-media', id: 'preview-media' }));
    } else if (size > PREVIEW_MAX) {
      box.append(h('p', { class: 'muted' }, t('previewTooBig', fmtBytes(size))));
    } else {
      box.append(h('p', { class: 'muted' }, t('previewNone')));
    }
  } catch (err) {
    box.append(h('p', { class: `notice ${kindOf(err)}` }, explain(err, 'actReadFile')));
  }
}

function facts(f) {
  const dl = h('dl', { class: 'facts', id: 'facts' });
  const row = (k, v, id) => append(dl, [h('dt', {}, k), h('dd', { id }, v === '' ? t('none') : v)]);
  row(t('fName'), f.name, 'fact-name');
  row(t('fId'), f.id, 'fact-id');
  row(t('fBucket'), f.bucketId, 'fact-bucket');
  row(t('fSize'), `${fmtBytes(f.size)} (${Number(f.size).toLocaleString()} B)`, 'fact-size');
  row(t('fType'), f.mimeType || '', 'fact-type');
  row(t('fETag'), f.etag || '', 'fact-etag');
  row(t('fUploader'), f.uploadedByUserId || '', 'fact-uploader');
  row(t('fCreated'), fmtTime(f.createdAt), 'fact-created');
  row(t('fUpdated'), fmtTime(f.updatedAt), 'fact-updated');
  return dl;
}

// prettyJSON indents a JSON text without re-encoding it, so that numbers stay as
// written (1.50, 12345678901234567890) and keys in their order.
export function prettyJSON(s) {
  s = s || '{}';
  try { JSON.parse(s); } catch { return s; }
  let out = '';
  let ind = 0;
  const nl = () => `\n${'  '.repeat(ind)}`;
  for (let i = 0; i < s.length; i += 1) {
    const c = s[i];
    if (c === '"') {
      let j = i + 1;
      while (s[j] !== '"') j += s[j] === '\\' ? 2 : 1;
      out += s.slice(i, j + 1);
      i = j;
    } else if (c === '{' || c === '[') {
      const k = s.slice(i + 1).search(/\S/) + i + 1;
      if (s[k] === (c === '{' ? '}' : ']')) { out += c + s[k]; i = k; continue; }
      ind += 1;
      out += c + nl();
    } else if (c === '}' || c === ']') {
      ind -= 1;
      out += nl() + c;
    } else if (c === ',') {
      out += `,${nl()}`;
    } else if (c === ':') {
      out += ': ';
    } else if (!/\s/.test(c)) {
      out += c;
    }
  }
  return out;
}

function renameForm(f, msg, changed) {
  const name = field(t('newName'), { value: f.name, id: 'rename-input', autocomplete: 'off', spellcheck: 'false' });
  const form = h('form', { class: 'stack', id: 'rename' }, h('h3', {}, t('rename')), name.wrap, h('button', { type: 'submit' }, t('rename')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await rpc('FileService', 'UpdateFile', { id: f.id, name: name.control.value });
      notice(msg, 'ok', t('renamed'));
      changed();
    } catch (err) { notice(msg, kindOf(err), explain(err, 'actRename')); }
  });
  return form;
}

function metadataForm(f, msg, changed) {
  const ta = field(t('fMetadata'), { id: 'metadata-input', rows: 6, spellcheck: 'false', value: prettyJSON(f.metadataJson) }, 'textarea');
  const form = h('form', { class: 'stack', id: 'metadata' }, ta.wrap, h('button', { type: 'submit' }, t('saveMetadata')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const text = ta.control.value.trim() || '{}';
    try {
      const v = JSON.parse(text);
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
    } catch (err) { notice(msg, 'error', t('metadataBad', err.message)); return; }
    try {
      // Sent as typed: the server keeps key order and numbers as written.
      await rpc('FileService', 'UpdateFile', { id: f.id, metadataJson: text });
      notice(msg, 'ok', t('saved'));
      changed();
    } catch (err) { notice(msg, kindOf(err), explain(err, 'actMetadata')); }
  });
  return form;
}

function replaceForm(f, msg, changed) {
  const input = field(t('replaceChoose'), { type: 'file', id: 'replace-input' });
  const bar = h('progress', { max: 100, value: 0, id: 'replace-progress', 'aria-label': t('replace') });
  input.control.addEventListener('change', async () => {
    const file = input.control.files[0];
    if (!file) return;
    const form = new FormData();
    // The file keeps its name (a replace would otherwise take the upload's).
    form.append('metadata', new Blob([JSON.stringify({ name: f.name })], { type: 'application/json' }));
    form.append('file', file, file.name);
    try {
      await send({ method: 'PUT', path: `files/${encodeURIComponent(f.id)}`, form, onprogress: (p) => { bar.value = Math.round(p * 100); } });
      notice(msg, 'ok', t('replaced'));
      changed();
    } catch (err) { notice(msg, kindOf(err), explain(err, 'actReplace')); }
  });
  return h('div', { class: 'stack', id: 'replace' }, h('h3', {}, t('replace')), input.wrap, bar);
}

function presignForm(f, msg) {
  const expiry = field(t('presignExpiry'), { id: 'presign-expiry' }, 'select');
  expiry.control.append(...options([['', t('presignDefault')], ['300', '5 min'], ['3600', '1 h'], ['86400', '1 day'], ['604800', '7 days']], ''));
  const out = h('input', { readonly: true, id: 'presign-url', class: 'mono', 'aria-label': t('presignURL') });
  const expires = h('p', { class: 'muted', id: 'presign-expires' });
  const copy = h('button', { type: 'button', id: 'presign-copy', disabled: true }, t('copy'));
  const make = h('button', { type: 'button', id: 'presign-make' }, t('presignMake'));
  make.addEventListener('click', async () => {
    const body = { id: f.id };
    if (expiry.control.value) body.expiresInSeconds = String(expiry.control.value);
    try {
      const { data } = await rpc('FileService', 'PresignFile', body);
      out.value = data.url;
      expires.textContent = t('presignExpires', data.expiresInSeconds);
      copy.disabled = false;
    } catch (err) { notice(msg, kindOf(err), explain(err, 'actPresign')); }
  });
  copy.addEventListener('click', async () => {
    out.select();
    try { await navigator.clipboard.writeText(out.value); } catch { document.execCommand('copy'); }
    notice(msg, 'ok', t('copied'));
  });
  return h('div', { class: 'stack', id: 'presign' }, h('h3', {}, t('presign')), expiry.wrap, make,
    h('label', { for: 'presign-url' }, t('presignURL')), h('div', { class: 'row' }, out, copy), expires);
}

function downloadButton(f, msg, urls) {
  const btn = h('button', { type: 'button', id: 'download' }, t('download'));
  btn.addEventListener('click', async () => {
    try {
      let u = null;
      try {
        u = sameOrigin((await rpc('FileService', 'PresignFile', { id: f.id })).data.url); // streamed by the browser
      } catch { /* presigning off: through memory, below */ }
      if (!u) { // a URL on another origin would ignore `download` and leave the console
        u = await blobURL(`files/${encodeURIComponent(f.id)}`);
        urls.push(u);
      }
      const a = h('a', { href: u, download: f.name.split('/').pop() || 'file' });
      document.body.append(a);
      a.click();
      a.remove();
    } catch (err) { notice(msg, kindOf(err), explain(err, 'actReadFile')); }
  });
  return btn;
}

// sameOrigin returns u if it is on the console's origin (so the CSP lets media load
// it and a download stays a download), else null.
function sameOrigin(u) {
  try {
    return new URL(u, location.href).origin === location.origin ? u : null;
  } catch {
    return null;
  }
}

// renderDetails fills panel with file id's details; returns a cleanup function.
export async function renderDetails(panel, id, { close, changed, deleted }) {
  const urls = [];
  const msg = h('div', { role: 'alert', id: 'details-msg' });
  const redraw = async () => {
    for (const u of urls.splice(0)) URL.revokeObjectURL(u); // the previous drawing's previews
    clear(panel);
    const head = h('div', { class: 'row between' }, h('h2', {}, t('details')), h('a', { href: close, class: 'button ghost', id: 'details-close' }, t('close')));
    panel.append(head, msg);
    let f;
    try {
      f = (await rpc('FileService', 'GetFile', { id })).data.file;
    } catch (err) {
      notice(msg, kindOf(err), explain(err, 'actReadFile'));
      return;
    }
    const box = h('div', { class: 'preview', id: 'preview', 'aria-label': t('preview') });
    const del = h('button', { type: 'button', class: 'danger', id: 'delete-file' }, t('deleteFile'));
    del.addEventListener('click', async () => {
      if (!(await confirmDialog(t('confirmDeleteFile', f.name), t('delete'), t('cancel')))) return;
      try {
        await rpc('FileService', 'DeleteFile', { id: f.id });
        deleted();
      } catch (err) { notice(msg, kindOf(err), explain(err, 'actDelete')); }
    });
    const after = async () => { changed(); await redraw(); };
    const test = h('a', { href: `#/rules?bucket=${encodeURIComponent(f.bucketId)}&file=${encodeURIComponent(f.id)}`, id: 'test-access' }, t('testAccess'));
    panel.append(facts(f), box, test, metadataForm(f, msg, after), renameForm(f, msg, after), presignForm(f, msg),
      replaceForm(f, msg, after), h('div', { class: 'row' }, downloadButton(f, msg, urls), del));
    await preview(box, f, urls);
  };
  await redraw();
  return () => { for (const u of urls) URL.revokeObjectURL(u); };
}
