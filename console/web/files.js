// The files browser: buckets, then a bucket's names as folders (by "/"), paged by
// the server (FileService.ListFiles), searchable by name prefix, with uploads by
// drag and drop or the file input, multi-select delete and a details panel.
import { h, clear, append, field, notice, fmtBytes, fmtTime, confirmDialog } from './dom.js';
import { t } from './strings.js';
import { rpc, send, blobURL, explain, kindOf } from './api.js';
import { renderDetails } from './details.js';

const PAGE = 100;
let noDelimiter = false; // the server's ListFiles has no delimiter: folders from each page
const tokens = new Map(); // bucket+prefix -> stack of earlier page tokens
let sort = { key: 'name', dir: 1 };

// bucketList draws the buckets the credential may list, or, if it may not, a
// form to open a bucket by id.
async function bucketList(main, link) {
  main.append(h('h1', {}, t('bucketsListTitle')));
  const msg = h('div', { role: 'status' });
  main.append(msg);
  try {
    const { data } = await rpc('BucketService', 'ListBuckets');
    const ul = h('ul', { class: 'buckets', id: 'bucket-list' });
    for (const b of data.buckets || []) ul.append(h('li', {}, h('a', { href: link('files', [b.id]) }, b.id)));
    main.append(ul);
  } catch (err) {
    notice(msg, kindOf(err), explain(err, 'actListBuckets'));
  }
  const id = field(t('bucketId'), { value: 'default', name: 'bucket', autocomplete: 'off' });
  const form = h('form', { class: 'row inline', id: 'open-bucket' }, h('h2', { class: 'sr' }, t('openBucket')), id.wrap,
    h('button', { type: 'submit' }, t('open')));
  form.addEventListener('submit', (e) => { e.preventDefault(); location.hash = link('files', [id.control.value.trim()]); });
  main.append(h('section', { 'aria-label': t('openBucket') }, h('h2', {}, t('openBucket')), form));
}

// list fetches one page: files and folder prefixes, interleaved by name.
async function list(bucket, prefix, token) {
  const body = { bucketId: bucket, prefix, pageSize: PAGE, pageToken: token || '' };
  if (!noDelimiter) body.delimiter = '/';
  let res;
  try {
    res = await rpc('FileService', 'ListFiles', body);
  } catch (err) {
    if (!noDelimiter && err.missing && /delimiter/.test(err.message)) {
      noDelimiter = true;
      return list(bucket, prefix, token);
    }
    throw err;
  }
  const files = res.data.files || [];
  let folders = res.data.prefixes || [];
  let shown = files;
  if (noDelimiter) {
    const seen = new Set();
    shown = [];
    for (const f of files) {
      const rest = f.name.slice(prefix.length);
      const i = rest.indexOf('/');
      if (i >= 0) seen.add(prefix + rest.slice(0, i + 1));
      else shown.push(f);
    }
    folders = [...seen];
  }
  const entries = [...folders.map((p) => ({ folder: true, name: p })), ...shown.map((f) => ({ folder: false, name: f.name, f }))];
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { entries, next: res.data.nextPageToken || '', ms: res.ms };
}

// thumbs loads image thumbnails through the transform API, a few at a time.
function thumbLoader(urls) {
  const queue = [];
  let running = 0;
  let stopped = false;
  const pump = () => {
    while (!stopped && running < 3 && queue.length) {
      const [img, id] = queue.shift();
      running += 1;
      blobURL(`files/${encodeURIComponent(id)}?w=96&h=96`)
        .then((u) => { if (stopped) { URL.revokeObjectURL(u); return; } urls.push(u); img.src = u; img.classList.add('loaded'); })
        .catch(() => { img.classList.add('failed'); })
        .finally(() => { running -= 1; pump(); });
    }
  };
  return {
    add(img, id) { queue.push([img, id]); pump(); },
    stop() { stopped = true; },
  };
}

function sortEntries(entries) {
  const key = sort.key;
  const val = (e) => {
    if (key === 'name') return e.name;
    if (e.folder) return key === 'size' ? -1 : '';
    if (key === 'size') return Number(e.f.size);
    if (key === 'type') return e.f.mimeType || '';
    return e.f.updatedAt || '';
  };
  return [...entries].sort((a, b) => {
    const x = val(a); const y = val(b);
    return (x < y ? -1 : x > y ? 1 : 0) * sort.dir;
  });
}

function crumbs(bucket, prefix, link) {
  const nav = h('nav', { 'aria-label': t('breadcrumb'), class: 'crumbs' });
  const ol = h('ol');
  ol.append(h('li', {}, h('a', { href: link('files') }, t('rootCrumb'))));
  ol.append(h('li', {}, h('a', { href: link('files', [bucket]), 'aria-current': prefix ? null : 'page' }, bucket)));
  let acc = '';
  for (const seg of prefix.split('/').filter(Boolean)) {
    acc += `${seg}/`;
    ol.append(h('li', {}, h('a', { href: link('files', [bucket], { prefix: acc }), 'aria-current': acc === prefix ? 'page' : null }, seg)));
  }
  nav.append(ol);
  return nav;
}

// uploader is the drop zone, the file input and the per-file progress list.
function uploader(bucket, prefix, onDone) {
  const input = h('input', { type: 'file', multiple: true, id: 'upload-input', class: 'sr-file' });
  const label = h('label', { for: 'upload-input', class: 'button' }, t('chooseFiles'));
  const progressList = h('ul', { class: 'uploads', id: 'uploads', 'aria-label': t('uploads') });
  const zone = h('div', { class: 'dropzone', id: 'dropzone' }, h('span', {}, t('uploadZone', bucket)), ' ', label, input);
  const start = async (fileList) => {
    const items = [...fileList].map((file) => {
      const bar = h('progress', { max: 100, value: 0, 'aria-label': file.name });
      const state = h('span', { class: 'upload-state' }, '0%');
      const li = h('li', { 'data-name': file.name }, h('span', { class: 'upload-name' }, file.name), bar, state);
      progressList.append(li);
      return { file, bar, state, li };
    });
    let ok = 0;
    for (const it of items) {
      const form = new FormData();
      form.append('bucket-id', bucket);
      form.append('metadata[]', new Blob([JSON.stringify({ name: prefix + it.file.name })], { type: 'application/json' }));
      form.append('file[]', it.file, it.file.name);
      try {
        await send({
          method: 'POST', path: 'files', form,
          onprogress: (p) => { it.bar.value = Math.round(p * 100); it.state.textContent = `${Math.round(p * 100)}%`; },
        });
        it.state.textContent = t('uploadDone');
        it.li.classList.add('done');
        ok += 1;
      } catch (err) {
        it.state.textContent = t('uploadFailed', explain(err, 'actUpload'));
        it.li.classList.add(kindOf(err));
      }
    }
    if (ok) onDone();
  };
  input.addEventListener('change', () => { if (input.files.length) start(input.files); input.value = ''; });
  zone.addEventListener('dragover', (e) => { e.preventDefault(); zone.classList.add('over'); });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    zone.classList.remove('over');
    if (e.dataTransfer && e.dataTransfer.files.length) start(e.dataTransfer.files);
  });
  return h('section', { class: 'upload', 'aria-label': t('uploads') }, zone, progressList);
}

export async function render(main, route, { link }) {
  const bucket = route.parts[0];
  if (!bucket) { await bucketList(main, link); return undefined; }
  const prefix = route.query.get('prefix') || '';
  const q = route.query.get('q') || '';
  const token = route.query.get('pt') || '';
  const fileId = route.query.get('file') || '';
  const key = `${bucket}\n${prefix}${q}`;
  if (!token) tokens.set(key, []);
  const stack = tokens.get(key) || [];
  const urls = [];
  const thumbs = thumbLoader(urls);

  const layout = h('div', { class: fileId ? 'split' : '' });
  const left = h('section', { class: 'listing', 'aria-label': t('filesTitle') });
  const right = h('aside', { class: 'details', id: 'details', 'aria-label': t('details') });
  layout.append(left);
  if (fileId) layout.append(right);
  main.append(h('h1', {}, t('filesTitle')), crumbs(bucket, prefix, link), layout);

  const search = field(t('search'), { type: 'search', value: q, name: 'q', id: 'search', autocomplete: 'off' });
  const searchForm = h('form', { class: 'row inline', role: 'search' }, search.wrap, h('button', { type: 'submit' }, t('searchButton')));
  searchForm.addEventListener('submit', (e) => {
    e.preventDefault();
    location.hash = link('files', [bucket], { prefix, q: search.control.value });
  });
  const msg = h('div', { role: 'alert', id: 'files-msg' });
  const tableWrap = h('div', { class: 'table-wrap' });
  const status = h('p', { class: 'muted', id: 'server-time', role: 'status' });
  const pager = h('div', { class: 'row pager' });
  const delBtn = h('button', { type: 'button', class: 'danger', id: 'delete-selected', disabled: true }, t('deleteSelected', 0));
  const refresh = () => location.hash === link('files', [bucket], { prefix, q, pt: token, file: fileId })
    ? draw() : (location.hash = link('files', [bucket], { prefix, q, file: fileId }));
  left.append(searchForm, uploader(bucket, prefix, () => refresh()), h('div', { class: 'row' }, delBtn), msg, tableWrap, pager, status);

  let entries = [];
  const selected = new Set();
  const updateDel = () => { delBtn.disabled = selected.size === 0; delBtn.textContent = t('deleteSelected', selected.size); };

  const drawTable = () => {
    for (const u of urls.splice(0)) URL.revokeObjectURL(u); // the previous table's thumbnails
    clear(tableWrap);
    if (!entries.length) { tableWrap.append(h('p', { class: 'muted' }, t('emptyFolder'))); return; }
    const head = (label, k) => {
      const btn = h('button', { type: 'button', class: 'sort', 'aria-label': t('sortBy', label) }, label,
        sort.key === k ? (sort.dir > 0 ? ' ▲' : ' ▼') : '');
      btn.addEventListener('click', () => { sort = { key: k, dir: sort.key === k ? -sort.dir : 1 }; drawTable(); });
      return h('th', { scope: 'col', class: k === 'size' ? 'num' : null, 'aria-sort': sort.key === k ? (sort.dir > 0 ? 'ascending' : 'descending') : null }, btn);
    };
    const all = h('input', { type: 'checkbox', 'aria-label': t('selectAll'), id: 'select-all' });
    all.addEventListener('change', () => {
      for (const cb of tableWrap.querySelectorAll('input[data-id]')) {
        cb.checked = all.checked;
        if (all.checked) selected.add(cb.dataset.id); else selected.delete(cb.dataset.id);
      }
      updateDel();
    });
    const tbody = h('tbody');
    for (const e of sortEntries(entries)) {
      if (e.folder) {
        const label = e.name.slice(prefix.length);
        tbody.append(h('tr', { class: 'folder' }, h('td'), h('td', { class: 'thumb' }, h('span', { class: 'icon-folder', 'aria-hidden': 'true' })),
          h('td', {}, h('a', { href: link('files', [bucket], { prefix: e.name }) }, label)), h('td', {}, ''), h('td', {}, t('folder')), h('td', {}, '')));
        continue;
      }
      const f = e.f;
      const cb = h('input', { type: 'checkbox', 'data-id': f.id, 'aria-label': t('selectFile', f.name), checked: selected.has(f.id) });
      cb.addEventListener('change', () => { if (cb.checked) selected.add(f.id); else selected.delete(f.id); updateDel(); });
      const thumb = h('td', { class: 'thumb' });
      if (/^image\/(png|jpeg|gif|webp|avif|heif|heic)$/.test(f.mimeType || '')) {
        const img = h('img', { alt: t('thumbAlt', f.name), width: 48, height: 48, 'data-thumb': f.id });
        thumbs.add(img, f.id);
        thumb.append(img);
      }
      const shortName = f.name.startsWith(prefix) ? f.name.slice(prefix.length) : f.name;
      tbody.append(h('tr', { 'data-file': f.id, class: f.id === fileId ? 'current' : '' }, h('td', {}, cb), thumb,
        h('td', { class: 'name' }, h('a', { href: link('files', [bucket], { prefix, q, pt: token, file: f.id }), class: 'file-link' }, shortName)),
        h('td', { class: 'num' }, fmtBytes(f.size)), h('td', {}, f.mimeType || ''), h('td', {}, fmtTime(f.updatedAt))));
    }
    tableWrap.append(h('table', { class: 'files', id: 'files' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, all), h('th', { scope: 'col' }, h('span', { class: 'sr' }, t('colPreview'))),
        head(t('colName'), 'name'), head(t('colSize'), 'size'), head(t('colType'), 'type'), head(t('colUpdated'), 'updated'))),
      tbody));
  };

  const draw = async () => {
    notice(msg, 'info', '');
    try {
      const res = await list(bucket, prefix + q, token);
      entries = res.entries;
      selected.clear();
      updateDel();
      drawTable();
      status.textContent = res.ms === null ? t('serverTimeNone') : t('serverTime', res.ms.toFixed(1));
      clear(pager);
      const prev = h('button', { type: 'button', disabled: !token, id: 'prev-page' }, t('prevPage'));
      prev.addEventListener('click', () => { const p = stack.pop() || ''; location.hash = link('files', [bucket], { prefix, q, pt: p }); });
      const next = h('button', { type: 'button', disabled: !res.next, id: 'next-page' }, t('nextPage'));
      next.addEventListener('click', () => { stack.push(token); tokens.set(key, stack); location.hash = link('files', [bucket], { prefix, q, pt: res.next }); });
      append(pager, [prev, h('span', { class: 'muted' }, t('pageInfo', stack.length + 1, entries.length)), next]);
      if (noDelimiter && !document.getElementById('no-delimiter')) left.insertBefore(h('p', { class: 'notice info', id: 'no-delimiter' }, t('noDelimiter')), tableWrap);
    } catch (err) {
      clear(tableWrap);
      notice(msg, kindOf(err), explain(err, 'actListFiles'));
    }
  };

  delBtn.addEventListener('click', async () => {
    const ids = [...selected];
    if (!ids.length || !(await confirmDialog(t('confirmDeleteFiles', ids.length), t('delete'), t('cancel')))) return;
    let done = 0;
    for (const id of ids) {
      try { await rpc('FileService', 'DeleteFile', { id }); done += 1; } catch (err) { notice(msg, kindOf(err), explain(err, 'actDelete')); }
    }
    if (done) {
      await draw();
      if (!msg.textContent) notice(msg, 'ok', t('deleted', done));
    }
  });

  await draw();
  let detailsCleanup = null;
  if (fileId) {
    detailsCleanup = await renderDetails(right, fileId, {
      close: link('files', [bucket], { prefix, q, pt: token }),
      changed: () => draw(),
      deleted: () => { location.hash = link('files', [bucket], { prefix, q, pt: token }); },
    });
  }
  return () => {
    thumbs.stop();
    for (const u of urls) URL.revokeObjectURL(u);
    if (detailsCleanup) detailsCleanup();
  };
}
