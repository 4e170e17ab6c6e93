#!/usr/bin/env bash
# make-web-config.sh [OUT_DIR]: what the shipped DaemonSet needs to serve its metrics over TLS
# with basic auth (docs/METRICS.md, "Securing the endpoint"), made with openssl:
#   OUT_DIR/ca.crt, ca.key         a CA of its own (keep ca.key offline; or use your own CA, or
#                                  cert-manager, and put its certificate in the Secrets instead)
#   OUT_DIR/tls.crt, tls.key       the server certificate, for the name "dimctl" (every node
#                                  serves the same one; scrapers set server_name: dimctl)
#   OUT_DIR/web.yml                the web config: TLS, the headers, user "prometheus"
#   OUT_DIR/password               that user's password (random)
#   OUT_DIR/secrets.yaml           Secret dimctl-web-config (web.yml, tls.crt, tls.key) for the
#                                  DaemonSet, Secret dimctl-scrape (ca.crt, username, password)
#                                  for Prometheus (servicemonitor.yaml or a scrape_config)
# Then: kubectl apply -f OUT_DIR/secrets.yaml. To rotate the certificate, run again with the same
# OUT_DIR (the CA is kept) and apply: dimctl serves the new certificate without a restart.
# The bcrypt hash comes from htpasswd (apache2-utils), mkpasswd (whois) or Python's crypt.
set -euo pipefail
out=${1:-dimctl-web-config}
user=prometheus
mkdir -p "$out"
cd "$out"
umask 077
if [ ! -f ca.key ]; then
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ca.key
  openssl req -x509 -new -key ca.key -out ca.crt -days 3650 -subj /CN=dimctl-metrics-ca
fi
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out tls.key
openssl req -new -key tls.key -out tls.csr -subj /CN=dimctl
printf 'subjectAltName=DNS:dimctl\nextendedKeyUsage=serverAuth\n' >tls.ext
openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 365 \
  -extfile tls.ext -out tls.crt 2>/dev/null
rm -f tls.csr tls.ext
[ -f password ] || openssl rand -base64 24 | tr -d '\n' >password
pass=$(cat password)
if command -v htpasswd >/dev/null; then
  hash=$(htpasswd -nbBC 10 "$user" "$pass" | cut -d: -f2-)
elif command -v mkpasswd >/dev/null; then
  hash=$(mkpasswd -m bcrypt -R 10 "$pass")
else
  hash=$(PASS="$pass" python3 -W ignore -c \
    'import crypt, os; print(crypt.crypt(os.environ["PASS"], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024)))')
fi
cat >web.yml <<YAML
# dimctl's web config (exporter-toolkit format; docs/METRICS.md, "Securing the endpoint").
tls_server_config:
  cert_file: tls.crt
  key_file: tls.key
http_server_config:
  headers:
    X-Content-Type-Options: nosniff
    X-Frame-Options: deny
    Strict-Transport-Security: max-age=31536000
basic_auth_users:
  $user: '$hash'
YAML
b64() { base64 -w0 <"$1"; }
cat >secrets.yaml <<YAML
---
apiVersion: v1
kind: Secret
metadata:
  name: dimctl-web-config
  namespace: dimctl
type: Opaque
data:
  web.yml: $(b64 web.yml)
  tls.crt: $(b64 tls.crt)
  tls.key: $(b64 tls.key)
---
apiVersion: v1
kind: Secret
metadata:
  name: dimctl-scrape
  namespace: dimctl
type: Opaque
data:
  ca.crt: $(b64 ca.crt)
  username: $(printf '%s' "$user" | base64 -w0)
  password: $(b64 password)
YAML
echo "wrote $out/secrets.yaml (user $user, password in $out/password)"
