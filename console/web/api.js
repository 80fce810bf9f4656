// The console's only way to the server: the same APIs as any client, with the
// credential the user signed in with, sent as a header on every request. No cookie.
import { t } from './strings.js';

// base is the path the APIs are under: "/" or, behind a tenant path prefix, "/t/x/"
// (the last "console" segment of the path and what follows it dropped, so that a
// tenant named "myconsole" keeps its prefix).
export const base = location.pathname.replace(/console(\/[^/]*)?$/, '') || '/';

// KEY is where the credential is kept: one per API base, so that tenants served
// under path prefixes of one origin never get each other's credential.
const KEY = `coffer.console.credential:${base}`;

// credential returns {kind: "admin"|"platform"|"jwt", value} or null.
export function credential() {
  try {
    const c = JSON.parse(sessionStorage.getItem(KEY) || 'null');
    return c && typeof c.value === 'string' ? c : null;
  } catch {
    return null;
  }
}

export function setCredential(c) {
  if (c) sessionStorage.setItem(KEY, JSON.stringify(c));
  else sessionStorage.removeItem(KEY);
}

// authHeaders are the headers that carry a credential.
export function authHeaders(c = credential()) {
  if (!c) return {};
  switch (c.kind) {
    case 'admin': return { 'x-hasura-admin-secret': c.value };
    case 'platform': return { 'x-coffer-platform-secret': c.value };
    case 'jwt': return { Authorization: `Bearer ${c.value}` };
    default: return {};
  }
}

// jwtClaims decodes a JWT's payload (for display only: the server decides) and
// returns {role, userId, claims}, or null if it is not a JWT.
export function jwtClaims(token) {
  const parts = String(token).split('.');
  if (parts.length !== 3) return null;
  try {
    const b64 = parts[1].replace(/-/g, '+').replace(/_/g, '/');
    const json = new TextDecoder().decode(Uint8Array.from(atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4)), (ch) => ch.charCodeAt(0)));
    const payload = JSON.parse(json);
    let ns = payload['https://hasura.io/jwt/claims'];
    if (!ns) ns = Object.values(payload).find((v) => v && typeof v === 'object' && 'x-hasura-default-role' in v) || payload;
    return {
      role: String(ns['x-hasura-default-role'] ?? ''),
      userId: String(ns['x-hasura-user-id'] ?? payload.sub ?? ''),
      claims: payload,
    };
  } catch {
    return null;
  }
}

// APIError is a refusal or failure: code is the Connect code (or one mapped from
// the HTTP status), status the HTTP status, field the offending field if named.
export class APIError extends Error {
  constructor(code, message, status, field = '') {
    super(message || code);
    this.code = code;
    this.status = status;
    this.field = field;
  }

  // refused: the credential may not do this.
  get refused() { return this.code === 'permission_denied'; }

  // unauthenticated: the credential is missing or wrong.
  get unauthenticated() { return this.code === 'unauthenticated'; }

  // missing: the server does not have this call or field.
  get missing() {
    return this.code === 'unimplemented' || (this.status === 404 && this.code === 'not_found' && this.rpcMissing)
      || (this.code === 'invalid_argument' && /unknown field|unknown name|not.*known/i.test(this.message));
  }
}

const statusCodes = { 400: 'invalid_argument', 401: 'unauthenticated', 403: 'permission_denied', 404: 'not_found',
  409: 'already_exists', 412: 'failed_precondition', 413: 'resource_exhausted', 415: 'invalid_argument',
  429: 'resource_exhausted', 501: 'unimplemented', 503: 'unavailable', 507: 'resource_exhausted' };

// errorOf reads an error answer: Connect's {code, message} or /v1's {error:{message}}.
async function errorOf(resp) {
  let body = null;
  try { body = await resp.json(); } catch { /* not JSON */ }
  const code = (body && typeof body.code === 'string' && body.code) || statusCodes[resp.status] || 'unknown';
  let msg = (body && (body.message || (body.error && body.error.message))) || resp.headers.get('X-Error') || `HTTP ${resp.status}`;
  msg = String(msg);
  let fieldName = '';
  for (const d of (body && body.details) || []) {
    const v = d && d.debug && d.debug.fieldViolations;
    if (v && v[0] && v[0].field) { fieldName = String(v[0].field); break; }
  }
  const m = /^([A-Za-z_][\w]*(?:\[\d+\]|\.[\w$-]+)*): /.exec(msg);
  const err = new APIError(code, msg, resp.status, fieldName || (m ? m[1] : ''));
  err.rpcMissing = resp.status === 404 && !(body && body.code);
  return err;
}

// serverTime returns the server's time for an answer from its Server-Timing header
// (the "app" phase, else the sum), in ms, or null.
export function serverTime(resp) {
  const hdr = resp.headers.get('Server-Timing');
  if (!hdr) return null;
  let app = null;
  let sum = 0;
  for (const part of hdr.split(',')) {
    const [name, ...params] = part.trim().split(';');
    const dur = params.map((p) => p.trim()).find((p) => p.startsWith('dur='));
    if (!dur) continue;
    const v = Number(dur.slice(4));
    if (Number.isNaN(v)) continue;
    if (name.trim() === 'app' || name.trim() === 'total') app = v;
    sum += v;
  }
  return app ?? sum;
}

// rpc calls coffer.admin.v1.<service>/<method> in Connect JSON; resolves
// {data, ms} (ms: server time) or rejects with an APIError.
export async function rpc(service, method, body = {}, cred = credential()) {
  const resp = await fetch(`${base}coffer.admin.v1.${service}/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...authHeaders(cred) },
    body: JSON.stringify(body),
    credentials: 'omit',
    cache: 'no-store',
  });
  if (!resp.ok) throw await errorOf(resp);
  return { data: await resp.json(), ms: serverTime(resp) };
}

// v1 calls a /v1 route; resolves the Response or rejects with an APIError.
export async function v1(method, path, { body, headers = {} } = {}) {
  const resp = await fetch(`${base}v1/${path}`, {
    method, body, headers: { ...authHeaders(), ...headers }, credentials: 'omit', cache: 'no-store',
  });
  if (!resp.ok) throw await errorOf(resp);
  return resp;
}

// metricsText reads /metrics with the credential.
export async function metricsText() {
  const resp = await fetch(`${base}metrics`, { headers: authHeaders(), credentials: 'omit', cache: 'no-store' });
  if (!resp.ok) throw await errorOf(resp);
  return resp.text();
}

// blobURL fetches a /v1 path and returns a blob: URL of it (revoke it when done).
export async function blobURL(path, headers = {}) {
  const resp = await v1('GET', path, { headers });
  return URL.createObjectURL(await resp.blob());
}

// send uploads (POST /v1/files) or replaces (PUT /v1/files/{id}) with
// XMLHttpRequest, reporting upload progress (0..1); resolves the parsed answer.
export function send({ method, path, form, onprogress }) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, `${base}v1/${path}`);
    for (const [k, v] of Object.entries(authHeaders())) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => { if (e.lengthComputable && onprogress) onprogress(e.loaded / e.total); };
    xhr.onload = () => {
      let body = null;
      try { body = JSON.parse(xhr.responseText); } catch { /* empty */ }
      if (xhr.status >= 200 && xhr.status < 300) {
        if (onprogress) onprogress(1);
        resolve(body);
        return;
      }
      const msg = (body && body.error && body.error.message) || xhr.getResponseHeader('X-Error') || `HTTP ${xhr.status}`;
      reject(new APIError(statusCodes[xhr.status] || 'unknown', String(msg), xhr.status));
    };
    xhr.onerror = () => reject(new APIError('unavailable', 'network error', 0));
    xhr.send(form);
  });
}

// explain turns an error into the sentence the page shows, saying plainly when the
// credential was refused.
export function explain(err, action) {
  if (!(err instanceof APIError)) return t('errorPrefix', err && err.message ? err.message : String(err));
  if (err.refused) return t('refused', t(action), err.message);
  if (err.unauthenticated) return t('unauthenticated', err.message);
  if (err.missing || err.code === 'failed_precondition') return t('notAvailable', err.code, err.message);
  return t('errorPrefix', `${err.code}: ${err.message}`);
}

// kindOf is the class of the notice for err.
export function kindOf(err) {
  return err instanceof APIError && (err.refused || err.unauthenticated) ? 'refused' : 'error';
}

// adminPage starts a page: its heading and message box in main, then load(); on a
// refusal the box says so and the page shows nothing else (resolves null).
export async function adminPage(main, titleKey, id, action, load) {
  main.append(document.createElement('h1'));
  main.lastChild.textContent = t(titleKey);
  const msg = document.createElement('div');
  msg.setAttribute('role', 'alert');
  msg.id = id;
  main.append(msg);
  try {
    return { msg, data: await load() };
  } catch (err) {
    msg.className = `notice ${kindOf(err)}`;
    msg.textContent = `${explain(err, action)} ${t('refusedNoData')}`;
    return null;
  }
}
