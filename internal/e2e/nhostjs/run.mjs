// End-to-end compatibility test: the official Nhost storage SDKs against a running coffer.
//
//   @nhost/hasura-storage-js 2.9.0  the storage client of @nhost/nhost-js 2.x and 3.x (nhost.storage)
//   @nhost/nhost-js 4.7.0           the generated /v1 client of the current SDK (nhost.storage)
//
// Each case goes through the SDK's own storage API (raw fetch only to fetch a URL the SDK
// made, or to look at bytes and headers) and asserts what hasura-storage answers. It prints
// one PASS/FAIL line per case and exits 1 if any case failed.
//
// Environment:
//   COFFER_URL         http://127.0.0.1:PORT (required)
//   ADMIN_SECRET       the server's admin secret (required)
//   USER_JWT, USER_ID  an HS256 access token of role "user" with x-hasura-user-id USER_ID (required)
//   BUCKET             a bucket with presigned URLs on and the user rules below (default nhostjs)
//   BUCKET_EXPIRATION  its downloadExpiration in seconds (default 60)
//   LOCKED_BUCKET      a bucket the role user may not upload to (default nhostjs-locked)
// The "default" bucket must have hasura-storage's defaults (presigned URLs on, 30 s).
//   JPEG_PATH          a 400x300 JPEG for the image transformation cases; IMAGES=off skips them
// The role "user" must be allowed to upload to "default" and BUCKET (uploaded_by_user_id preset
// to X-Hasura-User-Id) and to read, replace and delete only the files it uploaded.
import { File } from 'node:buffer'; // global only from Node 20
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { HasuraStorageClient } from '@nhost/hasura-storage-js';
import { createNhostClient, createServerClient, withAdminSession } from '@nhost/nhost-js';
import { FetchError } from '@nhost/nhost-js/fetch';
import { MemoryStorage } from '@nhost/nhost-js/session';
import {
  test, skip, summary, fail, eq, ok, deepEq, bytesEq, blobBytes, describe, errText,
  wantImage, imageInfo, checkFileMetadata, contentDisposition,
} from './harness.mjs';

function env(name, def) {
  const v = process.env[name] ?? def;
  if (v === undefined || v === '') {
    console.error(`run.mjs: ${name} is required`);
    process.exit(2);
  }
  return v;
}

const base = env('COFFER_URL').replace(/\/$/, '');
const storageUrl = `${base}/v1`;
const adminSecret = env('ADMIN_SECRET');
const userJWT = env('USER_JWT');
const userID = env('USER_ID');
const bucket = env('BUCKET', 'nhostjs');
const bucketExpiration = Number(env('BUCKET_EXPIRATION', '60'));
const lockedBucket = env('LOCKED_BUCKET', 'nhostjs-locked');
const defaultExpiration = 30; // downloadExpiration of hasura-storage's default bucket
const images = process.env.IMAGES !== 'off';
const jpeg = images ? readFileSync(env('JPEG_PATH')) : null;
if (jpeg) {
  const info = imageInfo(jpeg);
  if (info.format !== 'jpeg' || info.width !== 400 || info.height !== 300) {
    console.error(`run.mjs: JPEG_PATH must be a 400x300 JPEG, got ${JSON.stringify(info)}`);
    process.exit(2);
  }
}

const adminHeaders = { 'x-hasura-admin-secret': adminSecret };
const userHeaders = { Authorization: `Bearer ${userJWT}` };

// Two identities: the admin secret and a user's JWT, as each SDK sets them.
const modes = [
  { name: 'admin', headers: adminHeaders, user: undefined },
  { name: 'user', headers: userHeaders, user: userID },
];

let seq = 0;
function textFile(label) {
  seq++;
  const bytes = Buffer.from(`coffer nhostjs ${label} #${seq} ${Date.now()}\n`);
  return { bytes, name: `nhostjs-${seq}.txt`, mimeType: 'text/plain' };
}

// fetchBytes GETs url (a URL an SDK made) and returns the body, failing on a non-200.
async function fetchBytes(url, headers) {
  const res = await fetch(url, { headers });
  if (res.status !== 200) fail(`GET ${url}: ${await describe(res)}`);
  return { bytes: Buffer.from(await res.arrayBuffer()), res };
}

// ---------- @nhost/hasura-storage-js 2.9.0 (nhost-js 2.x/3.x nhost.storage) ----------

function v2Client(mode) {
  const c = new HasuraStorageClient({ url: storageUrl });
  if (mode.name === 'admin') c.setAdminSecret(adminSecret);
  else c.setAccessToken(userJWT);
  return c;
}

async function v2Cases(mode) {
  const p = `hasura-storage-js@2.9.0 ${mode.name}:`;
  const storage = v2Client(mode);
  const up = async (params, what) => {
    const { fileMetadata, error } = await storage.upload(params);
    if (error) fail(`${what}: upload error ${errText(error)}`);
    return fileMetadata;
  };

  // Uploads with a bucketId are cases of their own; the files the other cases work on go
  // to the default bucket, so that each case checks one thing.
  await test(`${p} upload({file, bucketId}) to "${bucket}"`, async () => {
    const f = textFile('v2 bucket');
    const fm = await up({ file: new File([f.bytes], f.name, { type: f.mimeType }), bucketId: bucket }, 'upload');
    checkFileMetadata(fm, { ...f, bucketId: bucket, uploadedByUserId: mode.user }, 'fileMetadata');
  });

  await test(`${p} upload({formData}) with metadata[] {id, name, metadata} and bucketId`, async () => {
    const f = textFile('v2 formData bucket');
    const id = randomUUID();
    const name = `formdata-${id.slice(0, 8)}.txt`;
    const metadata = { lang: 'en', n: 1, nested: { ok: true } };
    const fd = new FormData();
    fd.append('file[]', new Blob([f.bytes], { type: f.mimeType }), 'ignored.txt');
    fd.append('metadata[]', new Blob([JSON.stringify({ id, name, metadata })], { type: 'application/json' }), '');
    const fm = await up({ formData: fd, bucketId: bucket }, 'upload');
    eq(fm.processedFiles?.length, 1, 'processedFiles length');
    checkFileMetadata(fm.processedFiles[0], { ...f, id, name, bucketId: bucket, uploadedByUserId: mode.user, metadata }, 'processedFiles[0]');
  });

  let file;
  await test(`${p} upload({file}) without bucketId goes to "default"`, async () => {
    const f = textFile('v2 default');
    const fm = await up({ file: new File([f.bytes], f.name, { type: f.mimeType }) }, 'upload');
    checkFileMetadata(fm, { ...f, bucketId: 'default', uploadedByUserId: mode.user }, 'fileMetadata');
    file = { ...f, id: fm.id };
  });

  await test(`${p} upload({file, id, name})`, async () => {
    const f = textFile('v2 id+name');
    const id = randomUUID();
    const name = `named/${mode.name}-v2-${id.slice(0, 8)}.txt`;
    const fm = await up({ file: new File([f.bytes], 'ignored.txt', { type: f.mimeType }), id, name }, 'upload');
    checkFileMetadata(fm, { ...f, id, name, bucketId: 'default', uploadedByUserId: mode.user }, 'fileMetadata');
  });

  await test(`${p} upload({formData}) with metadata[] {id, name, metadata}`, async () => {
    const f = textFile('v2 formData');
    const id = randomUUID();
    const name = `formdata-${id.slice(0, 8)}.txt`;
    const metadata = { lang: 'en', n: 2 };
    const fd = new FormData();
    fd.append('file[]', new Blob([f.bytes], { type: f.mimeType }), 'ignored.txt');
    fd.append('metadata[]', new Blob([JSON.stringify({ id, name, metadata })], { type: 'application/json' }), '');
    const fm = await up({ formData: fd }, 'upload');
    eq(fm.processedFiles?.length, 1, 'processedFiles length');
    checkFileMetadata(fm.processedFiles[0], { ...f, id, name, bucketId: 'default', uploadedByUserId: mode.user, metadata }, 'processedFiles[0]');
  });

  await test(`${p} download({fileId}) returns the bytes`, async () => {
    ok(file, 'no file uploaded');
    const { file: blob, error } = await storage.download({ fileId: file.id });
    if (error) fail(`download error ${errText(error)}`);
    bytesEq(await blobBytes(blob), file.bytes, 'downloaded bytes');
  });

  await test(`${p} getPublicUrl({fileId}) + fetch with credentials`, async () => {
    ok(file, 'no file uploaded');
    const url = storage.getPublicUrl({ fileId: file.id });
    eq(url, `${storageUrl}/files/${file.id}`, 'public URL');
    const { bytes } = await fetchBytes(url, mode.headers);
    bytesEq(bytes, file.bytes, 'fetched bytes');
  });

  await test(`${p} getPresignedUrl({fileId}) + fetch without credentials`, async () => {
    ok(file, 'no file uploaded');
    const { presignedUrl, error } = await storage.getPresignedUrl({ fileId: file.id });
    if (error) fail(`getPresignedUrl error ${errText(error)}`);
    eq(presignedUrl.expiration, defaultExpiration, "expiration (the default bucket's downloadExpiration)");
    const u = new URL(presignedUrl.url);
    eq(u.pathname, `/v1/files/${file.id}/presignedurl/contents`, 'presigned URL path');
    const { bytes } = await fetchBytes(presignedUrl.url, {});
    bytesEq(bytes, file.bytes, 'fetched bytes');
  });

  if (mode.name === 'user') {
    await test(`${p} upload to a bucket the role may not write ("${lockedBucket}") is refused with 403`, async () => {
      const f = textFile('v2 locked');
      const { fileMetadata, error } = await storage.upload({ file: new File([f.bytes], f.name, { type: f.mimeType }), bucketId: lockedBucket });
      ok(error, `upload succeeded: ${JSON.stringify(fileMetadata)}`);
      eq(error.status, 403, `error status (${errText(error)})`);
    });
  }

  if (images) await v2ImageCases(mode, storage, up);
  else skip(`${p} image transformations`, 'IMAGES=off');

  await test(`${p} delete({fileId}), then download fails`, async () => {
    ok(file, 'no file uploaded');
    const { error } = await storage.delete({ fileId: file.id });
    if (error) fail(`delete error ${errText(error)}`);
    const after = await storage.download({ fileId: file.id });
    ok(after.error && !after.file, `download after delete: ${after.file ? 'got a file' : 'no error'}`);
    const res = await fetch(storage.getPublicUrl({ fileId: file.id }), { headers: mode.headers });
    eq(res.status, 404, 'status of GET after delete');
  });
}

async function v2ImageCases(mode, storage, up) {
  const p = `hasura-storage-js@2.9.0 ${mode.name}:`;
  let img;
  await test(`${p} upload a JPEG`, async () => {
    const fm = await up({ file: new File([jpeg], 'photo.jpg', { type: 'image/jpeg' }) }, 'upload');
    checkFileMetadata(fm, { bytes: jpeg, name: 'photo.jpg', mimeType: 'image/jpeg', bucketId: 'default', uploadedByUserId: mode.user }, 'fileMetadata');
    img = fm;
  });
  const dl = async (params) => {
    ok(img, 'no image uploaded');
    const { file, error } = await storage.download({ fileId: img.id, ...params });
    if (error) fail(`download ${JSON.stringify(params)}: ${errText(error)}`);
    return blobBytes(file);
  };

  await test(`${p} download({width: 200}) keeps the aspect ratio: 200x150`, async () => {
    wantImage(await dl({ width: 200 }), 'jpeg', 200, 150, 'image');
  });
  if (mode.name === 'user') return; // the rest are the same transformations; once is enough
  await test(`${p} download({height: 60}): 80x60`, async () => {
    wantImage(await dl({ height: 60 }), 'jpeg', 80, 60, 'image');
  });
  await test(`${p} getPublicUrl({width: 80, height: 80}) + fetch: exactly 80x80`, async () => {
    ok(img, 'no image uploaded');
    const url = storage.getPublicUrl({ fileId: img.id, width: 80, height: 80 });
    eq(new URL(url).search, '?w=80&h=80', 'query the SDK built');
    const { bytes, res } = await fetchBytes(url, mode.headers);
    eq(res.headers.get('content-type'), 'image/jpeg', 'Content-Type');
    wantImage(bytes, 'jpeg', 80, 80, 'image');
  });
  await test(`${p} download({width: 40, blur: 5}) blurs`, async () => {
    const sharp = await dl({ width: 40 });
    const blurred = await dl({ width: 40, blur: 5 });
    wantImage(blurred, 'jpeg', 40, 30, 'blurred image');
    ok(!sharp.equals(blurred), 'blur=5 returned the same bytes as no blur');
  });
  await test(`${p} download({width: 200, quality: 20}) is smaller than quality 90`, async () => {
    const lo = await dl({ width: 200, quality: 20 });
    const hi = await dl({ width: 200, quality: 90 });
    wantImage(lo, 'jpeg', 200, 150, 'q=20 image');
    wantImage(hi, 'jpeg', 200, 150, 'q=90 image');
    ok(lo.length < hi.length, `q=20 is ${lo.length} bytes, q=90 is ${hi.length}`);
  });
  await test(`${p} getPresignedUrl({fileId, width: 100}) + fetch without credentials: 100x75`, async () => {
    ok(img, 'no image uploaded');
    const { presignedUrl, error } = await storage.getPresignedUrl({ fileId: img.id, width: 100 });
    if (error) fail(`getPresignedUrl error ${errText(error)}`);
    eq(new URL(presignedUrl.url).searchParams.get('w'), '100', 'w the SDK appended');
    const { bytes } = await fetchBytes(presignedUrl.url, {});
    wantImage(bytes, 'jpeg', 100, 75, 'image');
  });
}

// ---------- @nhost/nhost-js 4.7.0 (generated /v1 client) ----------

function v4Client(mode) {
  const urls = { storageUrl, authUrl: `${base}/auth-unused/v1`, graphqlUrl: `${base}/graphql-unused/v1`, functionsUrl: `${base}/functions-unused/v1` };
  if (mode.name === 'admin') {
    return createNhostClient({ ...urls, storage: new MemoryStorage(), configure: [withAdminSession({ adminSecret })] });
  }
  // A server-side client (no refresh middleware, so nothing talks to an auth service) with
  // the user's session in its session storage: the SDK attaches the access token itself.
  const nhost = createServerClient({ ...urls, storage: new MemoryStorage() });
  nhost.sessionStorage.set({ accessToken: userJWT, accessTokenExpiresIn: 3600, refreshToken: 'unused', refreshTokenId: 'unused' });
  return nhost;
}

// expectFetchError runs fn, which must throw the SDK's FetchError with one of statuses.
async function expectFetchError(fn, statuses, what) {
  let res;
  try {
    res = await fn();
  } catch (e) {
    ok(e instanceof FetchError, `${what}: threw ${e}, not a FetchError`);
    ok(statuses.includes(e.status), `${what}: status ${e.status} ${JSON.stringify(e.body)}, want ${statuses.join(' or ')}`);
    return e;
  }
  fail(`${what}: succeeded with status ${res?.status}, want ${statuses.join(' or ')}`);
}

async function call(fn, what) {
  try {
    return await fn();
  } catch (e) {
    fail(`${what}: ${errText(e)}`);
  }
}

async function v4Cases(mode) {
  const p = `nhost-js@4.7.0 ${mode.name}:`;
  const { storage } = v4Client(mode);

  let inBucket;
  await test(`${p} uploadFiles({bucket-id, file[]}) to "${bucket}"`, async () => {
    const f = textFile('v4 bucket');
    const res = await call(() => storage.uploadFiles({ 'bucket-id': bucket, 'file[]': [new File([f.bytes], f.name, { type: f.mimeType })] }), 'uploadFiles');
    eq(res.status, 201, 'status');
    eq(res.body.processedFiles?.length, 1, 'processedFiles length');
    checkFileMetadata(res.body.processedFiles[0], { ...f, bucketId: bucket, uploadedByUserId: mode.user }, 'processedFiles[0]');
    inBucket = { ...f, id: res.body.processedFiles[0].id, etag: res.body.processedFiles[0].etag };
  });

  await test(`${p} uploadFiles({file[]}) without bucket-id goes to "default"`, async () => {
    const f = textFile('v4 default');
    const res = await call(() => storage.uploadFiles({ 'file[]': [new File([f.bytes], f.name, { type: f.mimeType })] }), 'uploadFiles');
    eq(res.status, 201, 'status');
    checkFileMetadata(res.body.processedFiles?.[0], { ...f, bucketId: 'default', uploadedByUserId: mode.user }, 'processedFiles[0]');
  });

  let two;
  await test(`${p} uploadFiles with two files and metadata[] {id, name, metadata}`, async () => {
    const a = textFile('v4 multi a');
    const b = textFile('v4 multi b');
    const meta = [a, b].map((f, i) => ({ id: randomUUID(), name: `multi-${i}-${f.name}`, metadata: { index: i, tag: 'nhostjs' } }));
    const res = await call(() => storage.uploadFiles({
      'bucket-id': bucket,
      'metadata[]': meta,
      'file[]': [new File([a.bytes], 'a.txt', { type: a.mimeType }), new File([b.bytes], 'b.txt', { type: b.mimeType })],
    }), 'uploadFiles');
    eq(res.status, 201, 'status');
    eq(res.body.processedFiles?.length, 2, 'processedFiles length');
    [a, b].forEach((f, i) => checkFileMetadata(res.body.processedFiles[i], { ...f, ...meta[i], bucketId: bucket, uploadedByUserId: mode.user }, `processedFiles[${i}]`));
    two = { ...a, ...meta[0] };
  });

  await test(`${p} getFile returns the bytes and headers`, async () => {
    ok(inBucket, 'no file uploaded');
    const res = await call(() => storage.getFile(inBucket.id), 'getFile');
    eq(res.status, 200, 'status');
    bytesEq(await blobBytes(res.body), inBucket.bytes, 'bytes');
    eq(res.headers.get('etag'), inBucket.etag, 'ETag');
    eq(res.headers.get('content-type'), 'text/plain', 'Content-Type');
    eq(res.headers.get('content-length'), String(inBucket.bytes.length), 'Content-Length');
    deepEq(contentDisposition(res.headers.get('content-disposition')), { type: 'inline', filename: inBucket.name }, 'Content-Disposition');
    ok(!Number.isNaN(Date.parse(res.headers.get('last-modified'))), `Last-Modified ${res.headers.get('last-modified')}`);
    eq(res.headers.get('accept-ranges'), 'bytes', 'Accept-Ranges');
  });

  await test(`${p} getFile with Range: bytes=0-4 answers 206`, async () => {
    ok(inBucket, 'no file uploaded');
    const res = await call(() => storage.getFile(inBucket.id, undefined, { headers: { Range: 'bytes=0-4' } }), 'getFile');
    eq(res.status, 206, 'status');
    bytesEq(await blobBytes(res.body), inBucket.bytes.subarray(0, 5), 'bytes');
    eq(res.headers.get('content-range'), `bytes 0-4/${inBucket.bytes.length}`, 'Content-Range');
    eq(res.headers.get('accept-ranges'), null, 'Accept-Ranges (hasura-storage sends it on 200 only)');
  });

  await test(`${p} getFile with If-None-Match: <etag> answers 304 (FetchError 304)`, async () => {
    ok(inBucket, 'no file uploaded');
    await expectFetchError(() => storage.getFile(inBucket.id, undefined, { headers: { 'If-None-Match': inBucket.etag } }), [304], 'getFile');
  });

  await test(`${p} getFileMetadataHeaders (HEAD)`, async () => {
    ok(inBucket, 'no file uploaded');
    const res = await call(() => storage.getFileMetadataHeaders(inBucket.id), 'getFileMetadataHeaders');
    eq(res.status, 200, 'status');
    eq(res.headers.get('etag'), inBucket.etag, 'ETag');
    eq(res.headers.get('content-length'), String(inBucket.bytes.length), 'Content-Length');
  });

  await test(`${p} getFilePresignedURL + fetch without credentials`, async () => {
    ok(inBucket, 'no file uploaded');
    const res = await call(() => storage.getFilePresignedURL(inBucket.id), 'getFilePresignedURL');
    eq(res.status, 200, 'status');
    eq(res.body.expiration, bucketExpiration, "expiration (the bucket's downloadExpiration)");
    eq(new URL(res.body.url).pathname, `/v1/files/${inBucket.id}/presignedurl/contents`, 'presigned URL path');
    const { bytes } = await fetchBytes(res.body.url, {});
    bytesEq(bytes, inBucket.bytes, 'fetched bytes');
  });

  if (mode.name === 'admin') {
    await test(`${p} presigned URL carries S3-style X-Amz-* signature parameters`, async () => {
      ok(inBucket, 'no file uploaded');
      const res = await call(() => storage.getFilePresignedURL(inBucket.id), 'getFilePresignedURL');
      const q = new URL(res.body.url).searchParams;
      for (const k of ['X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Date', 'X-Amz-Expires', 'X-Amz-SignedHeaders', 'X-Amz-Signature']) {
        ok(q.has(k), `no ${k} in ${res.body.url}`);
      }
      eq(q.get('X-Amz-Expires'), String(bucketExpiration), 'X-Amz-Expires');
    });
  }

  await test(`${p} replaceFile with file and metadata {name, metadata}`, async () => {
    ok(two, 'no file uploaded');
    const f = textFile('v4 replaced');
    const name = `replaced-${two.id.slice(0, 8)}.txt`;
    const metadata = { replaced: true };
    const res = await call(() => storage.replaceFile(two.id, { file: new File([f.bytes], 'new.txt', { type: f.mimeType }), metadata: { name, metadata } }), 'replaceFile');
    eq(res.status, 200, 'status');
    checkFileMetadata(res.body, { ...f, id: two.id, name, bucketId: bucket, metadata }, 'replaced file');
    const got = await call(() => storage.getFile(two.id), 'getFile after replace');
    bytesEq(await blobBytes(got.body), f.bytes, 'bytes after replace');
  });

  await test(`${p} getFile of a missing file: FetchError 404 with error.message`, async () => {
    const e = await expectFetchError(() => storage.getFile(randomUUID()), [404], 'getFile');
    ok(typeof e.body?.error?.message === 'string' && e.body.error.message !== '', `body ${JSON.stringify(e.body)} has no error.message`);
  });

  await test(`${p} getFileMetadataHeaders of a missing file: FetchError 404, X-Error, no Content-Length or Content-Type`, async () => {
    const e = await expectFetchError(() => storage.getFileMetadataHeaders(randomUUID()), [404], 'getFileMetadataHeaders');
    eq(e.headers?.get('x-error'), 'file not found', 'X-Error');
    eq(e.headers?.get('content-length'), null, 'Content-Length');
    eq(e.headers?.get('content-type'), null, 'Content-Type');
  });

  await test(`${p} uploadFiles to a missing bucket: FetchError 404, processedFiles null, no X-Error`, async () => {
    const f = textFile('v4 no bucket');
    const e = await expectFetchError(() => storage.uploadFiles({ 'bucket-id': `missing-${randomUUID().slice(0, 8)}`, 'file[]': [new File([f.bytes], f.name, { type: f.mimeType })] }), [404], 'uploadFiles');
    eq(e.body?.error?.message, 'bucket not found', 'error.message');
    ok('processedFiles' in (e.body ?? {}) && e.body.processedFiles === null, `processedFiles in ${JSON.stringify(e.body)}, want null`);
    eq(e.headers?.get('x-error'), null, 'X-Error');
  });

  await test(`${p} getVersion`, async () => {
    const res = await call(() => storage.getVersion(), 'getVersion');
    eq(res.status, 200, 'status');
    eq(typeof res.body.buildVersion, 'string', 'typeof buildVersion');
  });

  if (mode.name === 'user') {
    await test(`${p} uploadFiles to a bucket the role may not write ("${lockedBucket}"): FetchError 403`, async () => {
      const f = textFile('v4 locked');
      const e = await expectFetchError(() => storage.uploadFiles({ 'bucket-id': lockedBucket, 'file[]': [new File([f.bytes], f.name, { type: f.mimeType })] }), [403], 'uploadFiles');
      eq(e.headers?.get('x-error'), null, 'X-Error (hasura-storage sends none on an upload\'s 403)');
      deepEq(e.body?.processedFiles, [], 'processedFiles');
    });
    await test(`${p} getFile of a file another identity uploaded: FetchError 404`, async () => {
      const admin = v4Client(modes[0]).storage;
      const f = textFile('v4 admin-owned');
      const res = await call(() => admin.uploadFiles({ 'file[]': [new File([f.bytes], f.name, { type: f.mimeType })] }), 'admin uploadFiles');
      const id = res.body.processedFiles?.[0]?.id;
      ok(id, `admin upload: ${JSON.stringify(res.body)}`);
      await expectFetchError(() => storage.getFile(id), [404], 'getFile');
    });
    await test(`${p} admin ops are refused without the admin secret`, async () => {
      await expectFetchError(() => storage.listOrphanedFiles(), [401, 403], 'listOrphanedFiles');
      await expectFetchError(() => storage.listBrokenMetadata(), [401, 403], 'listBrokenMetadata');
    });
  } else {
    await v4OpsCases(p, storage);
  }

  if (images) await v4ImageCases(mode, storage);
  else skip(`${p} image transformations`, 'IMAGES=off');

  await test(`${p} deleteFile answers 204, then getFile is FetchError 404`, async () => {
    ok(inBucket, 'no file uploaded');
    const res = await call(() => storage.deleteFile(inBucket.id), 'deleteFile');
    eq(res.status, 204, 'status');
    await expectFetchError(() => storage.getFile(inBucket.id), [404], 'getFile after delete');
  });
}

async function v4OpsCases(p, storage) {
  const lists = [
    ['listOrphanedFiles', 'files'],
    ['deleteOrphanedFiles', 'files'],
    ['listBrokenMetadata', 'metadata'],
    ['deleteBrokenMetadata', 'metadata'],
    ['listFilesNotUploaded', 'metadata'],
  ];
  for (const [op, field] of lists) {
    await test(`${p} ${op} answers {"${field}": [...]}`, async () => {
      const res = await call(() => storage[op](), op);
      eq(res.status, 200, 'status');
      ok(Array.isArray(res.body[field]), `body ${JSON.stringify(res.body).slice(0, 300)} has no array "${field}"`);
      if (field === 'metadata') {
        for (const s of res.body.metadata) {
          ok(typeof s.id === 'string' && typeof s.name === 'string' && typeof s.bucketId === 'string' && typeof s.isUploaded === 'boolean', `FileSummary ${JSON.stringify(s)}`);
        }
      }
    });
  }
}

async function v4ImageCases(mode, storage) {
  const p = `nhost-js@4.7.0 ${mode.name}:`;
  let img;
  await test(`${p} uploadFiles a JPEG`, async () => {
    const res = await call(() => storage.uploadFiles({ 'bucket-id': bucket, 'file[]': [new File([jpeg], 'photo.jpg', { type: 'image/jpeg' })] }), 'uploadFiles');
    checkFileMetadata(res.body.processedFiles?.[0], { bytes: jpeg, name: 'photo.jpg', mimeType: 'image/jpeg', bucketId: bucket, uploadedByUserId: mode.user }, 'processedFiles[0]');
    img = res.body.processedFiles[0];
  });
  const get = async (params) => {
    ok(img, 'no image uploaded');
    const res = await call(() => storage.getFile(img.id, params), `getFile ${JSON.stringify(params)}`);
    eq(res.status, 200, 'status');
    return { bytes: await blobBytes(res.body), headers: res.headers };
  };

  await test(`${p} getFile {w: 200}: 200x150`, async () => {
    wantImage((await get({ w: 200 })).bytes, 'jpeg', 200, 150, 'image');
  });
  if (mode.name === 'user') return;
  await test(`${p} getFile {h: 60}: 80x60`, async () => {
    wantImage((await get({ h: 60 })).bytes, 'jpeg', 80, 60, 'image');
  });
  await test(`${p} getFile {w: 80, h: 80}: exactly 80x80`, async () => {
    wantImage((await get({ w: 80, h: 80 })).bytes, 'jpeg', 80, 80, 'image');
  });
  await test(`${p} getFile {w: 40, b: 5} blurs`, async () => {
    const sharp = (await get({ w: 40 })).bytes;
    const blurred = (await get({ w: 40, b: 5 })).bytes;
    wantImage(blurred, 'jpeg', 40, 30, 'blurred image');
    ok(!sharp.equals(blurred), 'b=5 returned the same bytes as no blur');
  });
  await test(`${p} getFile {w: 200, q: 20} is smaller than q: 90`, async () => {
    const lo = (await get({ w: 200, q: 20 })).bytes;
    const hi = (await get({ w: 200, q: 90 })).bytes;
    ok(lo.length < hi.length, `q=20 is ${lo.length} bytes, q=90 is ${hi.length}`);
  });
  await test(`${p} getFile {w: 100, f: "png"}: a 100x75 PNG`, async () => {
    const { bytes, headers } = await get({ w: 100, f: 'png' });
    eq(headers.get('content-type'), 'image/png', 'Content-Type');
    wantImage(bytes, 'png', 100, 75, 'image');
  });
  await test(`${p} presigned URL with w=100 appended + fetch without credentials: 100x75`, async () => {
    ok(img, 'no image uploaded');
    const res = await call(() => storage.getFilePresignedURL(img.id), 'getFilePresignedURL');
    const u = new URL(res.body.url);
    u.searchParams.set('w', '100');
    const { bytes } = await fetchBytes(u.toString(), {});
    wantImage(bytes, 'jpeg', 100, 75, 'image');
  });
}

for (const mode of modes) await v2Cases(mode);
for (const mode of modes) await v4Cases(mode);
process.exit(summary() === 0 ? 0 : 1);
