// The live server view: /metrics polled with the credential (admins; others are
// refused by the server), drawn as small SVG charts, and ServerService's state.
import { h, clear, notice, thead } from './dom.js';
import { t } from './strings.js';
import { rpc, metricsText, explain, kindOf } from './api.js';

const POLL_MS = 2000;
const POINTS = 60;
const SVG = 'http://www.w3.org/2000/svg';

// parseMetrics reads Prometheus text into [{name, labels, value}].
export function parseMetrics(text) {
  const out = [];
  for (const line of text.split('\n')) {
    if (!line || line[0] === '#') continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    for (const l of (m[3] || '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return out;
}

// snapshot sums what the charts need from one scrape.
export function snapshot(samples) {
  const s = { count: 0, buckets: new Map(), hits: {}, misses: {}, queue: 0, busy: 0 };
  for (const x of samples) {
    if (x.name === 'coffer_http_request_duration_seconds_count') s.count += x.value;
    else if (x.name === 'coffer_http_request_duration_seconds_bucket') s.buckets.set(x.labels.le, (s.buckets.get(x.labels.le) || 0) + x.value);
    else if (x.name === 'coffer_cache_hits_total') s.hits[x.labels.cache] = x.value;
    else if (x.name === 'coffer_cache_misses_total') s.misses[x.labels.cache] = x.value;
    else if (x.name === 'coffer_image_queue_depth') s.queue = x.value;
    else if (x.name === 'coffer_image_workers_busy') s.busy = x.value;
  }
  return s;
}

// p99 is the upper bound (ms) of the histogram bucket holding the 99th
// percentile of the requests between two snapshots; null without requests.
export function p99(prev, cur) {
  const les = [...cur.buckets.keys()].sort((a, b) => (a === '+Inf' ? 1 : b === '+Inf' ? -1 : Number(a) - Number(b)));
  const total = cur.count - prev.count;
  if (total <= 0) return null;
  for (const le of les) {
    if (cur.buckets.get(le) - (prev.buckets.get(le) || 0) >= 0.99 * total) return le === '+Inf' ? Infinity : Number(le) * 1000;
  }
  return null;
}

// paths draws values (oldest first) across a w×h box as SVG path data: line joins
// neighbouring values, dots marks a value alone between gaps. null is a gap (nothing
// is known there: no point, no line across it); Infinity sits at the top edge.
export function paths(values, w = 240, h = 60) {
  const finite = values.filter((v) => v !== null && Number.isFinite(v));
  const max = Math.max(1e-9, ...finite);
  const step = w / Math.max(1, values.length - 1);
  const at = (v, i) => `${+(i * step).toFixed(2)},${+(h - 2 - (Math.min(v, max) / max) * (h - 6)).toFixed(2)}`;
  const line = [];
  const dots = [];
  values.forEach((v, i) => {
    if (v === null) return;
    const joined = i > 0 && values[i - 1] !== null;
    if (joined) line.push(`L${at(v, i)}`);
    else if (i + 1 < values.length && values[i + 1] !== null) line.push(`M${at(v, i)}`);
    else dots.push(`M${at(v, i)}h0`);
  });
  return { line: line.join(' '), dots: dots.join(' ') };
}

// chart is a small line chart; push(v) adds a value, null when it is undefined
// (a ratio of nothing). The values are on the svg's data-values ("" for a gap).
function chart(title, id) {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 240 60');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', title);
  svg.classList.add('chart');
  const line = document.createElementNS(SVG, 'path');
  const dots = document.createElementNS(SVG, 'path');
  dots.classList.add('dots');
  svg.append(line, dots);
  const now = h('span', { class: 'now', 'data-chart': id });
  const fig = h('figure', { class: 'card chart-card', id }, h('figcaption', {}, title, ' ', now), svg);
  const data = [];
  return {
    fig,
    push(value) {
      const v = value === null || Number.isNaN(value) ? null : value;
      data.push(v);
      if (data.length > POINTS) data.shift();
      const d = paths(data);
      line.setAttribute('d', d.line);
      dots.setAttribute('d', d.dots);
      svg.dataset.values = data.map((x) => (x === null ? '' : String(x))).join(',');
      now.textContent = t('lastValue', v === null ? '–' : Number.isFinite(v) ? (Math.round(v * 10) / 10).toString() : '∞');
    },
  };
}

async function state(box) {
  clear(box);
  try {
    const [ver, caches, img] = await Promise.all([
      rpc('ServerService', 'GetVersion'), rpc('ServerService', 'GetCacheStats'), rpc('ServerService', 'GetImageWorkers')]);
    const w = img.data;
    box.append(h('p', {}, t('version', ver.data.version || '')),
      h('p', {}, t('imageWorkers', w.enabled ? t('on') : t('off'), w.busy || 0, w.workers || 0, w.queued || 0, w.queueLimit || 0)));
    const tbody = h('tbody', {}, ...(caches.data.caches || []).map((c) => h('tr', {}, h('th', { scope: 'row' }, c.name),
      h('td', { class: 'num' }, String(c.hits || 0)), h('td', { class: 'num' }, String(c.misses || 0)), h('td', { class: 'num' }, String(c.evictions || 0)))));
    box.append(h('div', { class: 'table-wrap' }, h('table', { id: 'caches' }, h('caption', {}, t('cachesCaption')),
      thead(['colCache', 'colHits', 'colMisses', 'colEvictions'], ['colHits', 'colMisses', 'colEvictions']), tbody)));
  } catch (err) {
    box.append(h('p', { class: `notice ${kindOf(err)}` }, explain(err, 'actServer')));
  }
}

export async function render(main) {
  main.append(h('h1', {}, t('serverTitle')));
  const msg = h('div', { role: 'alert', id: 'server-msg' });
  const charts = h('div', { class: 'charts', id: 'charts' });
  const info = h('section', { id: 'server-state' });
  main.append(msg, h('p', { class: 'muted' }, t('pollEvery', POLL_MS / 1000)), charts, info);
  const rps = chart(t('chartRPS'), 'chart-rps');
  const lat = chart(t('chartP99'), 'chart-p99');
  const queue = chart(t('chartQueue'), 'chart-queue');
  const hit = {};
  charts.append(rps.fig, lat.fig, queue.fig);
  let prev = null;
  let prevAt = 0;
  let stopped = false;
  let timer = 0;
  const poll = async () => {
    try {
      const cur = snapshot(parseMetrics(await metricsText()));
      const at = performance.now();
      if (prev) {
        rps.push(((cur.count - prev.count) * 1000) / (at - prevAt));
        lat.push(p99(prev, cur));
      }
      queue.push(cur.queue);
      for (const name of Object.keys(cur.hits)) {
        if (!hit[name]) { hit[name] = chart(t('chartHit', name), `chart-hit-${name}`); charts.append(hit[name].fig); }
        const dh = cur.hits[name] - (prev ? prev.hits[name] || 0 : 0);
        const dm = (cur.misses[name] || 0) - (prev ? prev.misses[name] || 0 : 0);
        hit[name].push(dh + dm > 0 ? (100 * dh) / (dh + dm) : null);
      }
      prev = cur;
      prevAt = at;
      notice(msg, 'ok', '');
      msg.className = '';
    } catch (err) {
      notice(msg, kindOf(err), `${explain(err, 'actMetrics')} ${t('refusedNoData')}`);
      charts.hidden = true;
      return; // no polling for a credential the server refuses
    }
    if (!stopped) timer = setTimeout(poll, POLL_MS);
  };
  await poll();
  await state(info);
  return () => { stopped = true; clearTimeout(timer); };
}
