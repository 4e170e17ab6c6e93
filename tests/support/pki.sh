#!/usr/bin/env bash
# pki.sh DIR: test certificates for the web config tests (unit: TestPki; e2e: tests/e2e/webconfig),
# made with the openssl CLI. In DIR:
#   ca.pem/.key                   the CA that signs the rest
#   server.pem/.key, server2.pem/.key   server certificates for 127.0.0.1 and localhost (CN
#                                 dimctl-server and dimctl-server-rotated: a rotation is visible)
#   client.pem/.key               a client certificate (CN prometheus) signed by the CA
#   stranger.pem/.key             a self-signed client certificate the CA never signed
set -euo pipefail
cd "$1"
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key" 2>/dev/null; }
key ca
openssl req -x509 -new -key ca.key -out ca.pem -days 2 -subj /CN=dimctl-test-ca 2>/dev/null
sign() {  # sign NAME CN EXTENDED_KEY_USAGE
  key "$1"
  openssl req -new -key "$1.key" -out "$1.csr" -subj "/CN=$2" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=%s\n' "$3" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
    -extfile "$1.ext" -out "$1.pem" 2>/dev/null
}
sign server dimctl-server serverAuth
sign server2 dimctl-server-rotated serverAuth
sign client prometheus clientAuth
key stranger
openssl req -x509 -new -key stranger.key -out stranger.pem -days 2 -subj /CN=stranger 2>/dev/null
