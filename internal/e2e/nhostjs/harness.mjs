// Small helpers for run.mjs: case runner, assertions, image and JWT helpers.
import { createHash } from 'node:crypto';

const results = [];

// test runs one named case and records PASS/FAIL; a failing case never stops the run.
export async function test(name, fn) {
  try {
    await fn();
    results.push({ name, ok: true });
    console.log(`PASS ${name}`);
  } catch (e) {
    results.push({ name, ok: false });
    console.log(`FAIL ${name}: ${e && e.message ? e.message : e}`);
  }
}

// skip records a case that does not apply, with the reason.
export function skip(name, why) {
  console.log(`SKIP ${name}: ${why}`);
}

export function summary() {
  const failed = results.filter((r) => !r.ok);
  console.log(`${results.length - failed.length} passed, ${failed.length} failed`);
  return failed.length;
}

export function fail(msg) {
  throw new Error(msg);
}

export function eq(got, want, what) {
  if (got !== want) fail(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}

export function ok(cond, what) {
  if (!cond) fail(what);
}

// deepEq compares JSON-able values.
export function deepEq(got, want, what) {
  const g = JSON.stringify(sortKeys(got));
  const w = JSON.stringify(sortKeys(want));
  if (g !== w) fail(`${what}: got ${g}, want ${w}`);
}

function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
  }
  return v;
}

export function bytesEq(got, want, what) {
  const g = Buffer.from(got);
  const w = Buffer.from(want);
  if (!g.equals(w)) {
    fail(`${what}: got ${g.length} bytes ${JSON.stringify(g.subarray(0, 60).toString('latin1'))}, want ${w.length} bytes`);
  }
}

export function md5Etag(bytes) {
  return `"${createHash('md5').update(bytes).digest('hex')}"`;
}

export async function blobBytes(blob) {
  return Buffer.from(await blob.arrayBuffer());
}

// describe shows a fetch Response for a failure message: status and start of the body.
export async function describe(res) {
  const body = await res.text();
  return `${res.status} ${JSON.stringify(body.slice(0, 300))}`;
}

// errText renders anything the SDKs return or throw as an error.
export function errText(e) {
  if (!e) return String(e);
  if (e.status !== undefined && e.body !== undefined) return `FetchError ${e.status} ${JSON.stringify(e.body)}`;
  if (e instanceof Error) return e.message;
  return JSON.stringify(e);
}

// imageInfo reads the format and pixel size of a JPEG or PNG from its header.
export function imageInfo(buf) {
  const b = Buffer.from(buf);
  if (b.length > 24 && b.readUInt32BE(0) === 0x89504e47) {
    return { format: 'png', width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  }
  if (b.length > 4 && b[0] === 0xff && b[1] === 0xd8) {
    let i = 2;
    while (i + 9 < b.length) {
      if (b[i] !== 0xff) { i++; continue; }
      const marker = b[i + 1];
      if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0xff) { i += 2; continue; }
      const len = b.readUInt16BE(i + 2);
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return { format: 'jpeg', height: b.readUInt16BE(i + 5), width: b.readUInt16BE(i + 7) };
      }
      i += 2 + len;
    }
    fail('JPEG without a frame header');
  }
  fail(`not a JPEG or PNG: ${JSON.stringify(b.subarray(0, 16).toString('latin1'))}`);
}

export function wantImage(bytes, format, width, height, what) {
  const info = imageInfo(bytes);
  deepEq(info, { format, width, height }, what);
}

const uuidRe = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// checkFileMetadata asserts the fields the SDK types promise for a file (FileMetadata of
// @nhost/nhost-js, FileResponse of @nhost/hasura-storage-js) against what was uploaded.
export function checkFileMetadata(f, want, what) {
  ok(f && typeof f === 'object', `${what}: no file metadata (${JSON.stringify(f)})`);
  ok(typeof f.id === 'string' && uuidRe.test(f.id), `${what}: id ${JSON.stringify(f.id)} is not a UUID`);
  if (want.id !== undefined) eq(f.id, want.id, `${what}: id`);
  eq(f.name, want.name, `${what}: name`);
  eq(f.size, want.bytes.length, `${what}: size`);
  eq(f.bucketId, want.bucketId, `${what}: bucketId`);
  eq(f.etag, md5Etag(want.bytes), `${what}: etag (quoted MD5 of the contents)`);
  eq(f.mimeType, want.mimeType, `${what}: mimeType`);
  eq(f.isUploaded, true, `${what}: isUploaded`);
  for (const k of ['createdAt', 'updatedAt']) {
    ok(typeof f[k] === 'string' && !Number.isNaN(Date.parse(f[k])), `${what}: ${k} ${JSON.stringify(f[k])} is not a date-time`);
  }
  if (want.uploadedByUserId !== undefined) eq(f.uploadedByUserId, want.uploadedByUserId, `${what}: uploadedByUserId`);
  if (want.metadata !== undefined) deepEq(f.metadata, want.metadata, `${what}: metadata`);
}

// contentDisposition parses a Content-Disposition header into its type and filename
// (quoted-string or token form; hasura-storage sends inline; filename="<query-escaped name>").
export function contentDisposition(h) {
  const m = /^\s*([a-z-]+)\s*(?:;\s*filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+)))?/i.exec(h ?? '');
  if (!m) return { raw: h };
  const name = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3];
  return { type: m[1].toLowerCase(), filename: name === undefined ? undefined : decodeURIComponent(name.replace(/\+/g, ' ')) };
}
