#!/usr/bin/env python3
"""Latency of a login through gov.br (the demo's sandbox, on loopback)
against a local password login, over HTTP without a browser.

Start the demo first (best the release build, on a quiet machine):

    cargo run --release -- demo          # listens on 127.0.0.1:8000
    python3 bench/govbr_login.py         # LOGINS=50 BASE=http://127.0.0.1:8000

For each login it times, on the client, every request of the flow:
- local: GET /conta/entrar/ (the form), POST /conta/entrar/ (ana's
  password: PBKDF2 on the hashing threads);
- gov.br: GET /conta/entrar/externo/govbr/ (start: discovery from cache, a
  ceremony stored), GET and POST the sandbox's authorization page (gov.br's
  own part, reported apart), GET the callback (the code redeemed over
  loopback, the ID token verified with the cached key, the link read and
  its level written, a session opened).
Prints p50 and p99 (nearest rank) of each step, of our part of the gov.br
login (start + callback) and of the whole, and the ratios to the local
login.
"""

import http.client
import os
import time
import urllib.parse
from html.parser import HTMLParser

BASE = os.environ.get("BASE", "http://127.0.0.1:8000")
LOGINS = int(os.environ.get("LOGINS", "50"))
HOST = urllib.parse.urlsplit(BASE).netloc


class Hidden(HTMLParser):
    """The hidden fields of a page's forms."""

    def __init__(self):
        super().__init__()
        self.fields = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "input" and a.get("type") == "hidden":
            self.fields.append((a.get("name"), a.get("value") or ""))


def hidden(body):
    p = Hidden()
    p.feed(body)
    return p.fields


class Browser:
    """Cookies by name, one connection, no redirects followed."""

    def __init__(self):
        self.jar = {}
        self.conn = http.client.HTTPConnection(HOST)

    def request(self, method, url, form=None):
        parts = urllib.parse.urlsplit(url)
        path = parts.path + ("?" + parts.query if parts.query else "")
        headers = {}
        if self.jar:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.jar.items())
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        start = time.perf_counter()
        self.conn.request(method, path, body=body, headers=headers)
        r = self.conn.getresponse()
        text = r.read().decode()
        elapsed = time.perf_counter() - start
        for value in r.headers.get_all("Set-Cookie") or []:
            pair, _, attributes = value.partition(";")
            name, _, val = pair.partition("=")
            if "Max-Age=0" in attributes:
                self.jar.pop(name, None)
            else:
                self.jar[name] = val
        return r.status, r.headers.get("Location"), text, elapsed


def local_login():
    b = Browser()
    s1, _, form, t1 = b.request("GET", "/conta/entrar/")
    fields = hidden(form) + [("username", "ana"), ("password", "ana-demo-2026")]
    s2, _, _, t2 = b.request("POST", "/conta/entrar/", fields)
    assert (s1, s2) == (200, 303), (s1, s2)
    return {"form": t1, "post": t2, "total": t1 + t2}


def govbr_login():
    b = Browser()
    s1, authorize, _, t1 = b.request("GET", "/conta/entrar/externo/govbr/?next=/conta/")
    s2, _, page, t2 = b.request("GET", authorize)
    fields = hidden(page) + [("cidadao", "52998224725"), ("nivel", "gold"), ("metodo", "certificado"), ("acao", "autorizar")]
    s3, back, _, t3 = b.request("POST", "/sandbox/govbr/authorize", fields)
    s4, _, _, t4 = b.request("GET", back)
    assert (s1, s2, s3) == (303, 200, 302) and s4 in (200, 303), (s1, s2, s3, s4)
    ours = t1 + t4
    return {"start": t1, "sandbox": t2 + t3, "callback": t4, "ours": ours, "total": t1 + t2 + t3 + t4}


def percentile(values, p):
    values = sorted(values)
    return values[max(0, min(len(values) - 1, int(round(p / 100 * len(values) + 0.5)) - 1))]


def report(name, runs):
    out = {}
    for key in runs[0]:
        values = [r[key] for r in runs]
        out[key] = (percentile(values, 50), percentile(values, 99))
        print(f"{name:7} {key:9} p50 {out[key][0] * 1000:8.2f} ms   p99 {out[key][1] * 1000:8.2f} ms")
    return out


def main():
    # Warm up both (discovery and keys cached, connections open).
    local_login()
    govbr_login()
    local = report("local", [local_login() for _ in range(LOGINS)])
    govbr = report("gov.br", [govbr_login() for _ in range(LOGINS)])
    for key in ("ours", "total"):
        print(
            f"gov.br {key} / local total: p50 {govbr[key][0] / local['total'][0]:.2f}x, "
            f"p99 {govbr[key][1] / local['total'][1]:.2f}x"
        )
    print(f"callback / local post: p50 {govbr['callback'][0] / local['post'][0]:.2f}x")


if __name__ == "__main__":
    main()
