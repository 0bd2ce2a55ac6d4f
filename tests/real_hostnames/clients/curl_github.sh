#!/bin/sh
# A client agent for real hostnames: curl reads acme/orders at https://api.github.com.
set -eu
: "${ANCHA_GITHUB_TOKEN:?ANCHA_GITHUB_TOKEN is not set}"
answer=$(curl -fsS -H "Authorization: Bearer $ANCHA_GITHUB_TOKEN" https://api.github.com/repos/acme/orders)
case "$answer" in
  *'"full_name": "acme/orders"'* | *'"full_name":"acme/orders"'*) ;;
  *) echo "curl_github: unexpected answer: $answer" >&2; exit 1 ;;
esac
echo "curl_github: read acme/orders at api.github.com"
