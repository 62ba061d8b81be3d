#!/usr/bin/env bash
# Makes the throw-away certificates of tests/service_security.rs, once (they are committed; the
# tests never run this): a CA, a server certificate it signed for localhost and 127.0.0.1, and a
# second key that matches no certificate. EC P-256, valid for 100 years. Test use only: the keys
# are public.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
days=36500
openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out ca-key.pem
openssl req -x509 -new -key ca-key.pem -sha256 -days "$days" -subj "/CN=ringflake test CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" -out ca.pem
openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out server-key.pem
openssl req -new -key server-key.pem -subj "/CN=localhost" -out server.csr
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days "$days" \
    -sha256 -extfile server.ext -out server.pem
openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out other-key.pem
rm -f server.csr server.ext ca.srl ca-key.pem
