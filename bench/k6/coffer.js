// k6 version of `coffer bench`: the same scenarios against the coffer (hasura-storage
// compatible) API, for people who prefer k6. One scenario per run:
//
//   coffer bench --fixtures-dir bench/k6/fixtures     # once: writes the JPEG fixture
//   k6 run -e TARGET=http://127.0.0.1:8000 -e ADMIN_SECRET=change-me \
//          -e SCENARIO=download_small_file bench/k6/coffer.js
//
// Environment:
//   TARGET        base URL of the server (default http://127.0.0.1:8000)
//   ADMIN_SECRET  x-hasura-admin-secret; setup() then creates a bucket of its own
//   TOKEN         JWT sent as Authorization: Bearer (instead of ADMIN_SECRET)
//   BUCKET        bucket to use (default: the new one with ADMIN_SECRET, else "default")
//   SCENARIO      download_small_file (default), download_medium_file, download_large_file,
//                 download_image, download_image_manipulated, upload_small_file, upload_large_file
//   WORKERS       virtual users at the top of the ramp (default: the scenario's own)
//   RAMP, HOLD    ramp from 1 VU to WORKERS over RAMP, then hold (defaults 10s and 60s)
//   STAGES        instead of RAMP/HOLD: "10@1m,0@1m,40@3m" (target@duration, as coffer bench)
//   FIXTURES_DIR  where the JPEG fixture is (default ./fixtures beside this script)
//
// setup() uploads the download fixture and teardown() deletes it (and the bucket it
// created). Uploads delete the file they created, untimed (coffer bench deletes its
// uploads after the run instead, so no DELETE shares the server with them). The
// upload sends the bucket in the X-Nhost-Bucket-Id header because k6 does not keep
// the order of multipart fields (and coffer wants bucket-id before the files).
import http from 'k6/http';
import { check, fail } from 'k6';

const TARGET = (__ENV.TARGET || 'http://127.0.0.1:8000').replace(/\/+$/, '');
const SCENARIOS = {
  download_small_file: { kind: 'download', fixture: 'bench-small-100KB.bin', size: 100000, workers: 100 },
  download_medium_file: { kind: 'download', fixture: 'bench-medium-5MB.bin', size: 5000000, workers: 100 },
  download_large_file: { kind: 'download', fixture: 'bench-large-45MB.bin', size: 45000000, workers: 50 },
  download_image: { kind: 'download', fixture: 'bench-image-4000x3000.jpg', image: true, workers: 100 },
  download_image_manipulated: { kind: 'download', fixture: 'bench-image-4000x3000.jpg', image: true, query: 'w=800&b=2', workers: 10 },
  upload_small_file: { kind: 'upload', fixture: 'bench-small-100KB.bin', size: 100000, workers: 50 },
  upload_large_file: { kind: 'upload', fixture: 'bench-large-45MB.bin', size: 45000000, workers: 10 },
};
const NAME = __ENV.SCENARIO || 'download_small_file';
const SC = SCENARIOS[NAME];
if (!SC) {
  throw new Error(`unknown SCENARIO ${NAME}; known: ${Object.keys(SCENARIOS).join(', ')}`);
}
if (__ENV.ADMIN_SECRET && __ENV.TOKEN) {
  throw new Error('give ADMIN_SECRET or TOKEN, not both');
}

// parseStages reads "10@1m,0@30s" into k6 stages, failing loudly on a bad item.
function parseStages(s) {
  return s.split(',').map((item, i) => {
    const m = /^\s*(\d+)\s*@\s*(\d+(?:\.\d+)?(?:ms|s|m|h)(?:\d+(?:\.\d+)?(?:ms|s|m|h))*)\s*$/.exec(item);
    if (!m) {
      throw new Error(`STAGES item ${i + 1} "${item}": want TARGET@DURATION, e.g. 40@3m`);
    }
    return { target: parseInt(m[1], 10), duration: m[2] };
  });
}

function stages() {
  if (__ENV.STAGES) {
    return { startVUs: 0, stages: parseStages(__ENV.STAGES) };
  }
  const target = parseInt(__ENV.WORKERS || `${SC.workers}`, 10);
  const ramp = __ENV.RAMP || '10s';
  const hold = __ENV.HOLD || '60s';
  return { startVUs: 1, stages: [{ target, duration: ramp }, { target, duration: hold }] };
}

export const options = {
  scenarios: { [NAME]: Object.assign({ executor: 'ramping-vus', gracefulRampDown: '10s' }, stages()) },
  discardResponseBodies: true, // downloads are counted, not kept
  summaryTrendStats: ['min', 'med', 'p(90)', 'p(95)', 'p(99)', 'max'],
};

// patternBytes returns size pseudo-random bytes (a 64 KiB xorshift block repeated,
// each repetition XORed with its index, like coffer bench's generator, though not
// byte-identical to it).
function patternBytes(size, seed) {
  const block = new Uint8Array(65536);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < block.length; i++) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    block[i] = x & 0xff;
  }
  const out = new Uint8Array(size);
  for (let off = 0, n = 0; off < size; off += block.length, n++) {
    const part = block.subarray(0, Math.min(block.length, size - off));
    out.set(part, off);
    if (n > 0) {
      const mark = n & 0xff;
      for (let j = off; j < off + part.length; j++) out[j] ^= mark;
    }
  }
  return out.buffer;
}

// The image is needed by setup() only: __VU is 0 in the init context that setup runs
// in, so the virtual users do not each hold a copy.
const FIXTURES_DIR = __ENV.FIXTURES_DIR || './fixtures';
const IMAGE = SC.image && __VU === 0 ? open(`${FIXTURES_DIR}/${SC.fixture}`, 'b') : null;
// Upload content: every VU sends the same bytes, generated once per VU.
const UPLOAD = SC.kind === 'upload' && __VU > 0 ? patternBytes(SC.size, 7) : null;

function authHeaders(extra) {
  const h = Object.assign({}, extra);
  if (__ENV.ADMIN_SECRET) h['x-hasura-admin-secret'] = __ENV.ADMIN_SECRET;
  if (__ENV.TOKEN) h.Authorization = `Bearer ${__ENV.TOKEN}`;
  return h;
}

// upload posts one file into bucket and returns its id (or null).
function upload(bucket, name, data, contentType, tags) {
  const res = http.post(`${TARGET}/v1/files`, { 'file[]': http.file(data, name, contentType) }, {
    headers: authHeaders({ 'X-Nhost-Bucket-Id': bucket }),
    responseType: 'text',
    tags,
  });
  if (res.status !== 201) {
    return { res, id: null };
  }
  const files = res.json('processedFiles');
  return { res, id: files && files.length === 1 ? files[0].id : null };
}

function del(id) {
  return http.del(`${TARGET}/v1/files/${id}`, null, { headers: authHeaders(), tags: { name: 'cleanup' } });
}

export function setup() {
  let bucket = __ENV.BUCKET || 'default';
  let own = false;
  if (!__ENV.BUCKET && __ENV.ADMIN_SECRET) {
    bucket = `bench-k6-${Date.now().toString(36)}`;
    const body = JSON.stringify({ id: bucket, maxUploadFileSize: 100000000 });
    const res = http.post(`${TARGET}/v1/buckets`, body, { headers: authHeaders({ 'Content-Type': 'application/json' }), tags: { name: 'setup' } });
    if (res.status !== 201) fail(`creating bucket ${bucket}: ${res.status} ${res.body}`);
    own = true;
  }
  let fileId = null;
  if (SC.kind === 'download') {
    const data = SC.image ? IMAGE : patternBytes(SC.size, 1);
    const type = SC.image ? 'image/jpeg' : 'application/octet-stream';
    const { res, id } = upload(bucket, SC.fixture, data, type, { name: 'setup' });
    if (!id) fail(`uploading fixture ${SC.fixture}: ${res.status} ${res.body}`);
    fileId = id;
  }
  return { bucket, own, fileId };
}

export default function (data) {
  if (SC.kind === 'download') {
    const q = SC.query ? `?${SC.query}` : '';
    const res = http.get(`${TARGET}/v1/files/${data.fileId}${q}`, { headers: authHeaders(), tags: { name: NAME } });
    check(res, { 'status 2xx': (r) => r.status >= 200 && r.status < 300 });
    return;
  }
  const name = `bench-upload-${__VU}-${__ITER}-${SC.fixture}`;
  const { res, id } = upload(data.bucket, name, UPLOAD, 'application/octet-stream', { name: NAME });
  check(res, { 'status 201': (r) => r.status === 201 });
  if (id) del(id);
}

export function teardown(data) {
  if (data.fileId) del(data.fileId);
  if (data.own) {
    const res = http.del(`${TARGET}/v1/buckets/${data.bucket}`, null, { headers: authHeaders(), tags: { name: 'cleanup' } });
    if (res.status !== 204) console.warn(`deleting bucket ${data.bucket}: ${res.status} ${res.body}`);
  }
}
