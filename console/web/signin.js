// Sign in: the credential is checked with one call the server answers for it, then
// kept in sessionStorage for this tab.
import { h, field, options, notice } from './dom.js';
import { t } from './strings.js';
import { rpc, setCredential, jwtClaims, APIError } from './api.js';

// probe checks c against the server: refused with UNAUTHENTICATED if it is wrong.
// A PERMISSION_DENIED answer means the credential is valid but may not do that.
async function probe(c) {
  try {
    if (c.kind === 'admin') await rpc('BucketService', 'ListBuckets', {}, c);
    else if (c.kind === 'platform') await rpc('TenantService', 'ListTenants', { pageSize: 1 }, c);
    else await rpc('FileService', 'ListFiles', { bucketId: 'default', pageSize: 1 }, c);
  } catch (err) {
    if (err instanceof APIError && err.unauthenticated) throw err;
    // Any other refusal (no rule for the default bucket, no tenants here): the
    // credential itself was accepted.
  }
}

export function render(main, route, { link }) {
  const kind = field(t('credKind'), { name: 'kind' }, 'select');
  kind.control.append(...options([['admin', t('credAdmin')], ['platform', t('credPlatform')], ['jwt', t('credJWT')]], 'admin'));
  const value = field(t('credValue'), { type: 'password', name: 'value', autocomplete: 'off', required: true, spellcheck: 'false' });
  const msg = h('div', { role: 'alert', id: 'signin-msg' });
  const submit = h('button', { type: 'submit', class: 'primary' }, t('signIn'));
  const form = h('form', { class: 'card narrow', id: 'signin' },
    h('h1', {}, t('signInTitle')), h('p', { class: 'muted' }, t('signInIntro')), kind.wrap, value.wrap, submit, msg);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const c = { kind: kind.control.value, value: value.control.value.trim() };
    if (!c.value) { notice(msg, 'error', t('signInEmpty')); return; }
    if (c.kind === 'jwt' && !jwtClaims(c.value)) { notice(msg, 'error', t('signInJWTBad')); return; }
    submit.disabled = true;
    notice(msg, 'info', t('signInChecking'));
    try {
      await probe(c);
      setCredential(c);
      location.hash = link(c.kind === 'platform' ? 'tenants' : 'files');
    } catch (err) {
      notice(msg, 'error', t('signInBad', err.message));
    } finally {
      submit.disabled = false;
    }
  });
  main.append(form);
  value.control.focus();
}
