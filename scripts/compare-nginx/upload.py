#!/usr/bin/env python3
"""Setup helper of scripts/compare-nginx.sh: mints HS256 JWTs and uploads many files
to a coffer on 127.0.0.1 quickly (keep-alive connections, several in parallel).

  upload.py token KEY SUB
      prints a JWT for user SUB (role user, a day long)
  upload.py files URL BUCKET DIR PREFIX N
      uploads DIR/PREFIX00000.bin .. (N files, 20 per request) into BUCKET with the admin
      secret "s" (or $COFFER_ADMIN_SECRET); prints "NAME ID" per file
  $COFFER_HOST, if set, is sent as the Host (a tenant's, for compare-nginx.sh --tenants)
  upload.py users URL KEY BUCKET DIR PREFIX N
      user-I uploads DIR/PREFIX{I:05}.bin into BUCKET with its own token; prints
      "NAME ID TOKEN" per user

Only loopback URLs are accepted. Exits non-zero on the first failed request.
"""
import base64
import concurrent.futures
import hashlib
import hmac
import http.client
import json
import os
import sys
import threading
import time
import urllib.parse

BATCH = 20
WORKERS = 8


def token(key, sub):
    """An HS256 JWT with hasura claims for user sub."""
    b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
    now = int(time.time())
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(json.dumps({"sub": sub, "iat": now, "exp": now + 86400,
        "https://hasura.io/jwt/claims": {"x-hasura-default-role": "user",
            "x-hasura-allowed-roles": ["user"], "x-hasura-user-id": sub}}).encode())
    sig = b64(hmac.new(key.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest())
    return f"{head}.{body}.{sig}"


_local = threading.local()


def conn(url):
    """This thread's keep-alive connection to url (127.0.0.1 only)."""
    u = urllib.parse.urlsplit(url)
    if u.hostname != "127.0.0.1":
        sys.exit(f"upload.py: refusing non-loopback URL {url}")
    if getattr(_local, "c", None) is None:
        _local.c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    return _local.c


def upload(url, bucket, paths, auth):
    """Uploads paths in one multipart request; returns their ids in order."""
    bnd = "compare-nginx-" + os.urandom(8).hex()
    parts = [f'--{bnd}\r\nContent-Disposition: form-data; name="bucket-id"\r\n\r\n{bucket}\r\n'.encode()]
    for p in paths:
        with open(p, "rb") as f:
            data = f.read()
        parts.append((f'--{bnd}\r\nContent-Disposition: form-data; name="file[]"; filename="{os.path.basename(p)}"\r\n'
                      "Content-Type: application/octet-stream\r\n\r\n").encode() + data + b"\r\n")
    parts.append(f"--{bnd}--\r\n".encode())
    body = b"".join(parts)
    c = conn(url)
    hdr = {"Content-Type": f"multipart/form-data; boundary={bnd}", **auth}
    if os.environ.get("COFFER_HOST"):
        hdr["Host"] = os.environ["COFFER_HOST"]  # a tenant's (compare-nginx.sh --tenants)
    c.request("POST", "/v1/files", body, hdr)
    r = c.getresponse()
    out = r.read()
    if r.status != 201:
        sys.exit(f"upload.py: {r.status} {out[:300]!r}")
    return [f["id"] for f in json.loads(out)["processedFiles"]]


def files(url, bucket, d, prefix, n):
    names = [f"{prefix}{i:05}.bin" for i in range(n)]
    batches = [names[i:i + BATCH] for i in range(0, n, BATCH)]
    auth = {"x-hasura-admin-secret": os.environ.get("COFFER_ADMIN_SECRET", "s")}
    with concurrent.futures.ThreadPoolExecutor(WORKERS) as ex:
        ids = ex.map(lambda b: upload(url, bucket, [os.path.join(d, x) for x in b], auth), batches)
        for b, got in zip(batches, ids):
            for name, fid in zip(b, got):
                print(name, fid)


def users(url, key, bucket, d, prefix, n):
    def one(i):
        tok = token(key, f"user-{i}")
        name = f"{prefix}{i:05}.bin"
        return name, upload(url, bucket, [os.path.join(d, name)], {"Authorization": f"Bearer {tok}"})[0], tok
    with concurrent.futures.ThreadPoolExecutor(WORKERS) as ex:
        for name, fid, tok in ex.map(one, range(n)):
            print(name, fid, tok)


def main(a):
    if a[:1] == ["token"] and len(a) == 3:
        print(token(a[1], a[2]))
    elif a[:1] == ["files"] and len(a) == 6:
        files(a[1], a[2], a[3], a[4], int(a[5]))
    elif a[:1] == ["users"] and len(a) == 7:
        users(a[1], a[2], a[3], a[4], a[5], int(a[6]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
