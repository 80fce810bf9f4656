// Webhook subscriptions, their delivery log and redelivery (WebhookService: admin).
import { h, clear, field, notice, options, fmtTime, confirmDialog, thead } from './dom.js';
import { t } from './strings.js';
import { rpc, explain, kindOf, adminPage } from './api.js';

const EVENTS = ['file.created', 'file.replaced', 'file.deleted', 'file.metadata_updated', 'bucket.created', 'bucket.deleted', 'file.rejected'];
const STATES = [['', t('whAny')], ['DELIVERY_STATE_PENDING', 'pending'], ['DELIVERY_STATE_DELIVERED', 'delivered'], ['DELIVERY_STATE_DEAD', 'dead']];

async function deliveries(box, hook, msg) {
  clear(box);
  const state = field(t('whState'), { id: `state-${hook.id}` }, 'select');
  state.control.append(...options(STATES, ''));
  const table = h('div', { class: 'table-wrap' });
  const load = async () => {
    clear(table);
    try {
      const { data } = await rpc('WebhookService', 'ListDeliveries', { webhookId: hook.id, state: state.control.value || undefined, limit: 100 });
      const tbody = h('tbody');
      for (const d of data.deliveries || []) {
        const re = h('button', { type: 'button' }, t('whRedeliver'));
        re.addEventListener('click', async () => {
          try {
            await rpc('WebhookService', 'RedeliverDelivery', { webhookId: hook.id, deliveryId: String(d.id) });
            notice(msg, 'ok', t('whRedelivered', d.id));
            load();
          } catch (err) { notice(msg, kindOf(err), explain(err, 'actWebhooks')); }
        });
        tbody.append(h('tr', { 'data-delivery': d.id }, h('td', { class: 'num' }, String(d.id)), h('td', {}, d.eventType || ''),
          h('td', {}, String(d.state || '').replace('DELIVERY_STATE_', '').toLowerCase()), h('td', { class: 'num' }, String(d.attempts || 0)),
          h('td', { class: 'num' }, String(d.lastStatus || '')), h('td', { class: 'wrap' }, d.lastError || ''), h('td', {}, fmtTime(d.updatedAt)), h('td', {}, re)));
      }
      table.append(h('table', { class: 'deliveries' }, thead(['colId', 'colEvent', 'colState', 'colAttempts', 'colStatus', 'colError', 'colWhen', 'colActions'],
        ['colId', 'colAttempts', 'colStatus']), tbody));
    } catch (err) { notice(msg, kindOf(err), explain(err, 'actWebhooks')); }
  };
  state.control.addEventListener('change', load);
  box.append(h('h3', {}, t('whDeliveries')), state.wrap, table);
  await load();
}

export async function render(main, route, { rerender }) {
  const page = await adminPage(main, 'webhooksTitle', 'webhooks-msg', 'actWebhooks', async () => (await rpc('WebhookService', 'ListWebhooks')).data.webhooks || []);
  if (!page) return;
  const { msg, data: hooks } = page;
  const url = field(t('whURL'), { type: 'url', required: true, id: 'wh-url', autocomplete: 'off' });
  const bucket = field(t('whBucket'), { id: 'wh-bucket', autocomplete: 'off' });
  const checks = EVENTS.map((ev) => field(ev, { type: 'checkbox', value: ev, name: 'events' }));
  const form = h('form', { class: 'grid', id: 'new-webhook' }, url.wrap, bucket.wrap,
    h('fieldset', {}, h('legend', {}, t('whEvents')), ...checks.map((c) => c.wrap)),
    h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary' }, t('create'))));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const { data } = await rpc('WebhookService', 'CreateWebhook', {
        url: url.control.value, bucketId: bucket.control.value, events: checks.filter((c) => c.control.checked).map((c) => c.control.value) });
      await rerender();
      notice(document.getElementById('webhooks-msg'), 'ok', t('whSecret', data.webhook.url, data.webhook.secret));
    } catch (err) { notice(msg, kindOf(err), explain(err, 'actWebhooks')); }
  });
  main.append(h('details', { class: 'card' }, h('summary', {}, t('newWebhook')), form));
  const tbody = h('tbody');
  const logBox = h('section', { id: 'deliveries', 'aria-live': 'polite' });
  for (const w of hooks) {
    const show = h('button', { type: 'button' }, t('whDeliveries'));
    show.addEventListener('click', () => deliveries(logBox, w, msg));
    const del = h('button', { type: 'button', class: 'danger' }, t('delete'));
    del.addEventListener('click', async () => {
      if (!(await confirmDialog(t('confirmDeleteWebhook', w.url), t('delete'), t('cancel')))) return;
      try { await rpc('WebhookService', 'DeleteWebhook', { id: w.id }); rerender(); } catch (err) { notice(msg, kindOf(err), explain(err, 'actWebhooks')); }
    });
    tbody.append(h('tr', { 'data-webhook': w.id }, h('td', { class: 'wrap' }, w.url), h('td', {}, w.bucketId || '*'),
      h('td', {}, (w.events || []).join(', ') || '*'), h('td', {}, fmtTime(w.createdAt)), h('td', {}, show, ' ', del)));
  }
  main.append(h('div', { class: 'table-wrap' }, h('table', { id: 'webhooks' },
    thead(['colURL', 'colBucket', 'colEvents', 'colWhen', 'colActions']), tbody)), logBox);
}
