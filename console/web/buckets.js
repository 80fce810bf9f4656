// Buckets and their settings (BucketService: admin only).
import { h, field, notice, fmtBytes, confirmDialog, thead } from './dom.js';
import { t } from './strings.js';
import { rpc, explain, kindOf, adminPage } from './api.js';

// settingsForm is the form of a bucket's settings; read() returns BucketSettings.
function settingsForm(b, idField) {
  const f = {
    public: field(t('bPublic'), { type: 'checkbox', checked: !!b.public, name: 'public' }),
    max: field(t('bMaxSize'), { type: 'number', min: 0, value: String(b.maxUploadFileSize ?? 0), name: 'max' }),
    min: field(t('bMinSize'), { type: 'number', min: 0, value: String(b.minUploadFileSize ?? 1), name: 'min' }),
    mime: field(t('bMime'), { value: (b.allowedMimeTypes || []).join(', '), name: 'mime', autocomplete: 'off' }),
    exp: field(t('bExpiry'), { type: 'number', min: 1, max: 604800, value: String(b.downloadExpiration ?? 30), name: 'exp' }),
    cache: field(t('bCache'), { value: b.cacheControl || '', name: 'cache', autocomplete: 'off' }),
    presign: field(t('bPresign'), { type: 'checkbox', checked: b.presignedUrlsEnabled !== false, name: 'presign' }),
    inline: field(t('bInline'), { type: 'checkbox', checked: !!b.allowInline, name: 'inline' }),
    cacheShared: field(t('bCacheShared'), { type: 'checkbox', checked: !!b.cacheControlShared, name: 'cacheShared' }),
  };
  const form = h('form', { class: 'grid' }, idField ? idField.wrap : null, ...Object.values(f).map((x) => x.wrap));
  const read = () => ({
    public: f.public.control.checked,
    maxUploadFileSize: String(Number(f.max.control.value || 0)),
    minUploadFileSize: String(Number(f.min.control.value || 0)),
    allowedMimeTypes: { types: f.mime.control.value.split(',').map((s) => s.trim()).filter(Boolean) },
    downloadExpiration: String(Number(f.exp.control.value || 30)),
    cacheControl: f.cache.control.value,
    presignedUrlsEnabled: f.presign.control.checked,
    allowInline: f.inline.control.checked,
    cacheControlShared: f.cacheShared.control.checked,
  });
  return { form, read };
}

export async function render(main, route, { link, rerender }) {
  const page = await adminPage(main, 'bucketsTitle', 'buckets-msg', 'actManageBuckets', async () => (await rpc('BucketService', 'ListBuckets')).data.buckets || []);
  if (!page) return;
  const { msg, data: buckets } = page;
  const idField = field(t('bucketId'), { name: 'id', id: 'new-bucket-id', autocomplete: 'off', required: true });
  const create = settingsForm({ presignedUrlsEnabled: true }, idField);
  create.form.id = 'new-bucket';
  create.form.append(h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary' }, t('create'))));
  create.form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const id = idField.control.value.trim();
    try {
      await rpc('BucketService', 'CreateBucket', { id, settings: create.read() });
      sessionStorage.setItem('coffer.console.flash', t('bCreated', id));
      rerender();
    } catch (err) { notice(msg, kindOf(err), explain(err, 'actManageBuckets')); }
  });
  const flash = sessionStorage.getItem('coffer.console.flash');
  if (flash) { notice(msg, 'ok', flash); sessionStorage.removeItem('coffer.console.flash'); }
  main.append(h('details', { class: 'card' }, h('summary', {}, t('newBucket')), create.form));

  const tbody = h('tbody');
  for (const b of buckets) {
    const edit = settingsForm(b);
    edit.form.append(h('div', { class: 'row' }, h('button', { type: 'submit' }, t('save'))));
    edit.form.addEventListener('submit', async (e) => {
      e.preventDefault();
      try {
        await rpc('BucketService', 'UpdateBucket', { id: b.id, settings: edit.read() });
        notice(msg, 'ok', t('bSaved', b.id));
      } catch (err) { notice(msg, kindOf(err), explain(err, 'actManageBuckets')); }
    });
    const del = h('button', { type: 'button', class: 'danger' }, t('delete'));
    del.addEventListener('click', async () => {
      if (!(await confirmDialog(t('confirmDeleteBucket', b.id), t('delete'), t('cancel')))) return;
      try {
        await rpc('BucketService', 'DeleteBucket', { id: b.id });
        rerender();
      } catch (err) { notice(msg, kindOf(err), explain(err, 'actManageBuckets')); }
    });
    tbody.append(h('tr', { 'data-bucket': b.id },
      h('th', { scope: 'row' }, h('a', { href: link('files', [b.id]) }, b.id)),
      h('td', {}, b.public ? t('yes') : t('no')),
      h('td', { class: 'num' }, Number(b.maxUploadFileSize) ? fmtBytes(b.maxUploadFileSize) : t('none')),
      h('td', {}, (b.allowedMimeTypes || []).join(', ') || t('none')),
      h('td', { class: 'num' }, String(b.downloadExpiration ?? '')),
      h('td', {}, h('details', {}, h('summary', {}, t('bEdit', b.id)), edit.form), del)));
  }
  main.append(h('div', { class: 'table-wrap' }, h('table', { id: 'buckets' },
    thead(['bucketId', 'bPublic', 'bMaxSize', 'bMime', 'bExpiry', 'colActions'], ['bMaxSize', 'bExpiry']),
    tbody)));
}
