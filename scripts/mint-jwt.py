#!/usr/bin/env python3
"""Prints an HS256 JWT for load tests: mint-jwt.py KEY [USER=alice] [TTL_SECONDS=86400].

The token carries Hasura claims (default and only role "user", x-hasura-user-id USER),
the form coffer's owner rules read. For scripts on this machine only: the key is a
test key given on the command line.
"""
import base64, hashlib, hmac, json, sys, time


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def main() -> None:
    key, user = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "alice"
    ttl = int(sys.argv[3]) if len(sys.argv) > 3 else 86400
    now = int(time.time())
    claims = {"sub": user, "iat": now, "exp": now + ttl,
              "https://hasura.io/jwt/claims": {"x-hasura-default-role": "user",
                                               "x-hasura-allowed-roles": ["user"], "x-hasura-user-id": user}}
    signing = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()) + "." + b64(json.dumps(claims).encode())
    print(signing + "." + b64(hmac.new(key.encode(), signing.encode(), hashlib.sha256).digest()))


if __name__ == "__main__":
    main()
