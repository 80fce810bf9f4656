// The console's shell: hash routes (#/files/default?prefix=a/), the navigation,
// the theme, sign-in state. Each page is a module whose render(main, route)
// draws it and may return a cleanup function (timers, blob URLs).
import { h, clear, append } from './dom.js';
import { t } from './strings.js';
import { credential, setCredential, jwtClaims } from './api.js';
import * as signin from './signin.js';
import * as files from './files.js';
import * as buckets from './buckets.js';
import * as rules from './rules.js';
import * as webhooks from './webhooks.js';
import * as sites from './sites.js';
import * as tenants from './tenants.js';
import * as server from './server.js';

const pages = {
  files: { mod: files, label: 'navFiles' },
  buckets: { mod: buckets, label: 'navBuckets', admin: true },
  rules: { mod: rules, label: 'navRules', admin: true },
  webhooks: { mod: webhooks, label: 'navWebhooks', admin: true },
  sites: { mod: sites, label: 'navSites', admin: true },
  tenants: { mod: tenants, label: 'navTenants', platform: true },
  server: { mod: server, label: 'navServer', admin: true },
};

// parseHash splits "#/files/b?prefix=x" into {page, parts, query}.
export function parseHash(hash = location.hash) {
  const raw = hash.replace(/^#\/?/, '');
  const [path, qs = ''] = raw.split('?');
  const parts = path.split('/').filter(Boolean).map((p) => {
    try { return decodeURIComponent(p); } catch { return p; }
  });
  return { page: parts[0] || '', parts: parts.slice(1), query: new URLSearchParams(qs) };
}

// link builds a hash for a page, path parts and query values ("" dropped).
export function link(page, parts = [], query = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== '' && v !== null && v !== undefined) q.set(k, v);
  const s = q.toString();
  return `#/${[page, ...parts].map(encodeURIComponent).join('/')}${s ? `?${s}` : ''}`;
}

// who describes the signed-in credential.
function who(c) {
  if (c.kind === 'admin') return t('signedInAdmin');
  if (c.kind === 'platform') return t('signedInPlatform');
  const cl = jwtClaims(c.value);
  return cl ? t('signedInJWT', cl.role || '?', cl.userId || '?') : t('signedInJWTNoClaims');
}

// visible says whether a page is in the navigation for credential c; the pages
// themselves still ask the server, which decides.
function visible(p, c) {
  if (p.platform) return c.kind === 'platform' || c.kind === 'admin';
  if (c.kind === 'platform') return false;
  if (p.admin && c.kind === 'jwt') {
    const cl = jwtClaims(c.value);
    return !!cl && cl.role === 'admin';
  }
  return true;
}

const THEMES = ['system', 'light', 'dark'];

function applyTheme(theme) {
  if (theme === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
}

function themeButton() {
  let theme = localStorage.getItem('coffer.console.theme') || 'system';
  applyTheme(theme);
  const label = () => t('themeLabel', t(`theme${theme[0].toUpperCase()}${theme.slice(1)}`));
  const btn = h('button', { type: 'button', class: 'ghost', id: 'theme' }, label());
  btn.addEventListener('click', () => {
    theme = THEMES[(THEMES.indexOf(theme) + 1) % THEMES.length];
    localStorage.setItem('coffer.console.theme', theme);
    applyTheme(theme);
    btn.textContent = label();
  });
  return btn;
}

let cleanup = null;
let generation = 0;

function drawShell(route, c) {
  const shell = clear(document.getElementById('shell'));
  const skip = h('button', { type: 'button', class: 'skip' }, t('skip'));
  skip.addEventListener('click', () => document.getElementById('main').focus());
  const header = h('header', { class: 'top' },
    skip,
    h('a', { class: 'brand', href: c ? link('files') : link('signin') }, t('appName')),
    c ? h('span', { class: 'who', id: 'who' }, who(c)) : null,
    h('span', { class: 'spacer' }),
    themeButton(),
    c ? h('button', { type: 'button', class: 'ghost', id: 'signout', on: { click: () => { setCredential(null); location.hash = link('signin'); } } }, t('signOut')) : null);
  append(shell, [header]);
  if (!c) return;
  const nav = h('nav', { 'aria-label': t('mainNav'), class: 'nav' });
  const ul = h('ul');
  for (const [name, p] of Object.entries(pages)) {
    if (!visible(p, c)) continue;
    ul.append(h('li', {}, h('a', { href: link(name), 'aria-current': route.page === name ? 'page' : null }, t(p.label))));
  }
  nav.append(ul);
  shell.append(nav);
}

async function render() {
  if (cleanup) { try { cleanup(); } catch { /* ignore */ } cleanup = null; }
  const route = parseHash();
  const c = credential();
  const my = ++generation;
  // Each render draws into a view of its own, so that a render still awaiting the
  // server when the route changes draws into a detached view, not the new page.
  const main = document.createElement('div');
  main.className = 'view';
  clear(document.getElementById('main')).append(main);
  if (!c && route.page !== 'signin') {
    location.replace(link('signin'));
    return;
  }
  drawShell(route, c);
  let mod = signin;
  if (route.page !== 'signin') {
    const p = pages[route.page] || pages[c.kind === 'platform' ? 'tenants' : 'files'];
    mod = p.mod;
    if (!pages[route.page]) route.page = c.kind === 'platform' ? 'tenants' : 'files';
  }
  document.getElementById('main').dataset.page = route.page || 'signin';
  const r = await mod.render(main, route, { link, rerender: render });
  if (typeof r !== 'function') return;
  if (my === generation) cleanup = r;
  else r(); // the route changed meanwhile: this page is gone
}

addEventListener('hashchange', render);
render();
