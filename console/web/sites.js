// Sites and their routes, stats and purge (SiteService: the tenant's admin).
import { h, field, notice, fmtBytes, confirmDialog } from './dom.js';
import { t } from './strings.js';
import { rpc, explain, kindOf, adminPage } from './api.js';

const TEMPLATE = JSON.stringify({ id: 'www', hosts: ['www.example.com'], routes: [{ path: '/*', target: { bucket: { id: 'default', prefix: 'www/' } } }] }, null, 2);

const lines = (s) => s.split('\n').map((x) => x.trim()).filter(Boolean);

function docForm(id, initial, submitLabel, onSubmit) {
  const doc = field(t('siteDoc'), { id, rows: 10, spellcheck: 'false', value: initial, class: 'mono' }, 'textarea');
  const form = h('form', { class: 'stack' }, doc.wrap, h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary' }, submitLabel)));
  form.addEventListener('submit', (e) => { e.preventDefault(); onSubmit(doc.control.value); });
  return form;
}

function purgeForm(s, msg) {
  const paths = field(t('purgePaths'), { rows: 2 }, 'textarea');
  const prefixes = field(t('purgePrefixes'), { rows: 2 }, 'textarea');
  const tags = field(t('purgeTags'), { rows: 2 }, 'textarea');
  const form = h('form', { class: 'grid', 'data-purge': s.id }, paths.wrap, prefixes.wrap, tags.wrap,
    h('div', { class: 'row' }, h('button', { type: 'submit' }, t('purge'))));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const { data } = await rpc('SiteService', 'PurgeSite', { siteId: s.id, paths: lines(paths.control.value),
        prefixes: lines(prefixes.control.value), tags: lines(tags.control.value) });
      notice(msg, 'ok', t('purged', data.removed || 0, data.broadcast ? t('yes') : t('no')));
    } catch (err) { notice(msg, kindOf(err), explain(err, 'actSites')); }
  });
  return form;
}

export async function render(main, route, { rerender }) {
  const page = await adminPage(main, 'sitesTitle', 'sites-msg', 'actSites', async () => (await rpc('SiteService', 'ListSites')).data.sites || []);
  if (!page) return;
  const { msg, data: sites } = page;
  const parse = (text) => { try { return JSON.parse(text); } catch (err) { notice(msg, 'error', t('errorPrefix', err.message)); return null; } };
  main.append(h('details', { class: 'card' }, h('summary', {}, t('newSite')), docForm('new-site', TEMPLATE, t('create'), async (text) => {
    const site = parse(text);
    if (!site) return;
    try { await rpc('SiteService', 'CreateSite', { site }); rerender(); } catch (err) { notice(msg, kindOf(err), explain(err, 'actSites')); }
  })));
  if (!sites.length) main.append(h('p', { class: 'muted', id: 'no-sites' }, t('noSites')));
  for (const s of sites) {
    const stats = h('p', { class: 'muted' });
    rpc('SiteService', 'GetSiteStats', { siteId: s.id }).then(({ data }) => {
      stats.textContent = t('siteStats', s.id, data.requests || 0, fmtBytes(data.bytes), `${Math.round((data.hitRatio || 0) * 100)}%`);
    }).catch((err) => { stats.textContent = explain(err, 'actSites'); });
    const del = h('button', { type: 'button', class: 'danger' }, t('delete'));
    del.addEventListener('click', async () => {
      if (!(await confirmDialog(t('confirmDeleteSite', s.id), t('delete'), t('cancel')))) return;
      try { await rpc('SiteService', 'DeleteSite', { id: s.id }); rerender(); } catch (err) { notice(msg, kindOf(err), explain(err, 'actSites')); }
    });
    const doc = { ...s };
    delete doc.createdAt;
    delete doc.updatedAt;
    const routes = h('ol', { class: 'routes' }, ...(s.routes || []).map((r) => h('li', {}, `${r.path} → ${Object.keys(r.target || {})[0] || '?'} ${JSON.stringify(Object.values(r.target || {})[0] || {})}`)));
    main.append(h('section', { class: 'card', 'data-site': s.id, 'aria-label': s.id },
      h('h2', {}, s.id), h('p', {}, `${t('siteHosts')}: ${(s.hosts || []).join(', ')}`), h('h3', {}, t('siteRoutes')), routes, stats,
      h('details', {}, h('summary', {}, t('purge')), purgeForm(s, msg)),
      h('details', {}, h('summary', {}, t('edit')), docForm(`site-${s.id}`, JSON.stringify(doc, null, 2), t('save'), async (text) => {
        const site = parse(text);
        if (!site) return;
        try { await rpc('SiteService', 'UpdateSite', { id: s.id, site }); notice(msg, 'ok', t('saved')); } catch (err) { notice(msg, kindOf(err), explain(err, 'actSites')); }
      })), del));
  }
}
