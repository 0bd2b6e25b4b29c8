"""Makes an application password as a person would, over HTTP, and prints it.

Usage: python3 app_password.py BASE USERNAME PASSWORD

Logs USERNAME in at BASE/conta/entrar/, turns an authenticator app on at
/conta/seguranca/ (the key read from the page, the code computed here per
RFC 6238), so that the account has a second factor, then creates an
application password named "Cliente SUAP (interop)" and prints it. Only the
standard library: nothing here is the code under test.
"""

import base64
import hashlib
import hmac
import html
import http.cookiejar
import re
import struct
import sys
import time
import urllib.parse
import urllib.request

base, username, password = sys.argv[1:4]
opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))


def get(path):
    with opener.open(base + path, timeout=30) as answer:
        return answer.read().decode()


def post(path, fields):
    data = urllib.parse.urlencode(fields).encode()
    with opener.open(base + path, data=data, timeout=30) as answer:
        return answer.read().decode()


def hidden(page):
    return {html.unescape(n): html.unescape(v) for n, v in re.findall(r'<input type="hidden" name="([^"]*)" value="([^"]*)"', page)}


def between(page, start, end):
    found = re.search(re.escape(start) + "(.*?)" + re.escape(end), page, re.S)
    if not found:
        sys.exit(f"not on the page: {start!r}")
    return html.unescape(found.group(1))


def totp(key_text):
    key = base64.b32decode(key_text.replace(" ", "").upper() + "=" * (-len(key_text.replace(" ", "")) % 8))
    digest = hmac.new(key, struct.pack(">Q", int(time.time()) // 30), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    return "%06d" % ((struct.unpack(">I", digest[offset:offset + 4])[0] & 0x7FFFFFFF) % 1_000_000)


form = get("/conta/entrar/?next=%2Fconta%2F")
post("/conta/entrar/", {**hidden(form), "username": username, "password": password})
security = get("/conta/seguranca/")
token = hidden(security)["csrf_token"]
started = post("/conta/seguranca/", {"csrf_token": token, "acao": "iniciar", "senha": password})
key = between(started, '<code class="secret">', "</code>")
enabled = post("/conta/seguranca/", {"csrf_token": token, "acao": "confirmar", "codigo": totp(key)})
if "Aplicativo autenticador ativado" not in enabled:
    sys.exit("the authenticator app was not turned on")
created = post(
    "/conta/seguranca/",
    {"csrf_token": token, "acao": "criar-senha-app", "nome": "Cliente SUAP (interop)", "senha": password},
)
print(between(created, '<code class="api-token">', "</code>"))
