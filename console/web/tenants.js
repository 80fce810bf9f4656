// Tenants, their usage and quotas (TenantService: the platform admin only).
import { h, field, notice, fmtBytes, confirmDialog, thead } from './dom.js';
import { t } from './strings.js';
import { rpc, explain, kindOf, adminPage } from './api.js';

function bar(used, max) {
  if (!Number(max)) return null;
  const pct = Math.min(100, Math.round((Number(used || 0) / Number(max)) * 100));
  return h('meter', { min: 0, max: 100, value: pct, high: 90, 'aria-label': `${pct}%` });
}

async function usageCell(td, tn) {
  try {
    const u = (await rpc('TenantService', 'GetTenantUsage', { id: tn.id })).data.usage || {};
    const q = tn.quota || {};
    td.append(t('tnUsageText', fmtBytes(u.bytes), Number(u.files || 0), fmtBytes(u.servedBytes), Number(u.requests || 0)));
    if (Number(q.maxBytes)) td.append(h('div', {}, t('tnOf', fmtBytes(u.bytes), fmtBytes(q.maxBytes)), ' ', bar(u.bytes, q.maxBytes)));
    if (Number(q.maxFiles)) td.append(h('div', {}, t('tnOf', Number(u.files || 0), Number(q.maxFiles)), ' ', bar(u.files, q.maxFiles)));
  } catch (err) {
    td.append(explain(err, 'actTenants'));
  }
}

export async function render(main, route, { rerender }) {
  const page = await adminPage(main, 'tenantsTitle', 'tenants-msg', 'actTenants', async () => {
    const all = [];
    let token = '';
    do {
      const { data } = await rpc('TenantService', 'ListTenants', { pageSize: 200, pageToken: token });
      all.push(...(data.tenants || []));
      token = data.nextPageToken || '';
    } while (token && all.length < 2000);
    return all;
  });
  if (!page) return;
  const { msg, data: tenants } = page;
  main.append(h('p', { class: 'muted' }, t('tnBuckets')));
  const id = field(t('tnId'), { id: 'tn-id', required: true, autocomplete: 'off' });
  const hosts = field(t('tnHosts'), { id: 'tn-hosts', autocomplete: 'off' });
  const secret = field(t('tnSecret'), { id: 'tn-secret', type: 'password', minlength: 16, autocomplete: 'off' });
  const maxBytes = field(t('tnMaxBytes'), { id: 'tn-max-bytes', type: 'number', min: 0, value: '0' });
  const maxFiles = field(t('tnMaxFiles'), { id: 'tn-max-files', type: 'number', min: 0, value: '0' });
  const form = h('form', { class: 'grid', id: 'new-tenant' }, id.wrap, hosts.wrap, secret.wrap, maxBytes.wrap, maxFiles.wrap,
    h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary' }, t('create'))));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await rpc('TenantService', 'CreateTenant', {
        id: id.control.value.trim(),
        hosts: hosts.control.value.split(',').map((s) => s.trim()).filter(Boolean),
        settings: secret.control.value ? { adminSecrets: [secret.control.value] } : {},
        quota: { maxBytes: String(Number(maxBytes.control.value || 0)), maxFiles: String(Number(maxFiles.control.value || 0)) },
      });
      rerender();
    } catch (err) { notice(msg, kindOf(err), explain(err, 'actTenants')); }
  });
  main.append(h('details', { class: 'card' }, h('summary', {}, t('newTenant')), form));
  const tbody = h('tbody');
  for (const tn of tenants) {
    const usage = h('td');
    usageCell(usage, tn);
    const state = String(tn.state || '').replace('TENANT_STATE_', '').toLowerCase();
    const act = async (method, confirmText) => {
      if (confirmText && !(await confirmDialog(confirmText, t('yes'), t('cancel')))) return;
      try { await rpc('TenantService', method, { id: tn.id }); rerender(); } catch (err) { notice(msg, kindOf(err), explain(err, 'actTenants')); }
    };
    const toggle = state === 'suspended'
      ? h('button', { type: 'button', on: { click: () => act('ResumeTenant') } }, t('resume'))
      : h('button', { type: 'button', on: { click: () => act('SuspendTenant') } }, t('suspend'));
    const del = h('button', { type: 'button', class: 'danger', on: { click: () => act('DeleteTenant', t('confirmDeleteTenant', tn.id)) } }, t('delete'));
    const port = location.port ? `:${location.port}` : '';
    const hostLinks = (tn.hosts || []).map((host) => h('a', { href: `${location.protocol}//${host}${port}/console/`, rel: 'noreferrer' }, host));
    tbody.append(h('tr', { 'data-tenant': tn.id }, h('th', { scope: 'row' }, tn.id), h('td', {}, ...hostLinks.flatMap((a) => [a, ' '])),
      h('td', {}, state), usage, h('td', {}, toggle, ' ', del)));
  }
  main.append(h('div', { class: 'table-wrap' }, h('table', { id: 'tenants' },
    thead(['tnId', 'siteHosts', 'tnState', 'tnUsage', 'colActions']), tbody)));
}
