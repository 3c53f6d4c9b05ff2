#!/usr/bin/env python3
"""A real SMTP server on loopback for rota's notify tests (aiosmtpd, Debian's python3).

Every accepted message is written to --maildir as NNNN.eml (the DATA bytes) and then
NNNN.json ({"mail_from", "rcpt_tos", "tls", "auth_login"}); the .json appears last and
atomically, so a reader that sees it can read both.

Modes: --tls none (plain), starttls (STARTTLS offered and required before MAIL),
implicit (TLS from the first byte, smtps). --auth-user/--auth-pass require AUTH
(PLAIN or LOGIN) with exactly those credentials. --refuse ADDR answers RCPT TO:<ADDR>
with 550 (repeatable).

Binds 127.0.0.1:--port (0 = pick a free one). When ready, writes the port to
--ready-file (atomically) and prints "PORT <n>". Runs until SIGTERM/SIGINT.
"""

import argparse
import json
import os
import signal
import socket
import ssl
import sys
import threading
import warnings

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


def write_atomic(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.rename(tmp, path)


class Sink:
    def __init__(self, maildir, refuse):
        self.maildir = maildir
        self.refuse = {r.lower() for r in refuse}
        self.seq = 0
        self.lock = threading.Lock()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.lower() in self.refuse:
            return "550 5.1.1 <%s>: recipient refused by smtp_sink" % address
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.seq += 1
            n = self.seq
        tls = session.ssl is not None or (
            server.transport is not None
            and server.transport.get_extra_info("ssl_object") is not None)
        login = None
        if session.authenticated and isinstance(session.auth_data, LoginPassword):
            login = session.auth_data.login.decode("utf-8", "replace")
        base = os.path.join(self.maildir, "%04d" % n)
        content = envelope.content
        if isinstance(content, str):
            content = content.encode("utf-8")
        write_atomic(base + ".eml", content)
        meta = {"mail_from": envelope.mail_from, "rcpt_tos": envelope.rcpt_tos,
                "tls": bool(tls), "auth_login": login}
        write_atomic(base + ".json", json.dumps(meta).encode("utf-8"))
        return "250 2.0.0 OK queued as %04d" % n


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    # Plain-text AUTH is what the tests want to exercise; aiosmtpd warns about it.
    warnings.filterwarnings("ignore", message="Requiring AUTH while not requiring TLS")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--maildir", required=True)
    p.add_argument("--ready-file")
    p.add_argument("--tls", choices=["none", "starttls", "implicit"], default="none")
    p.add_argument("--cert")
    p.add_argument("--key")
    p.add_argument("--auth-user")
    p.add_argument("--auth-pass")
    p.add_argument("--refuse", action="append", default=[])
    args = p.parse_args()

    os.makedirs(args.maildir, exist_ok=True)
    ctx = None
    if args.tls != "none":
        if not args.cert or not args.key:
            p.error("--tls %s needs --cert and --key" % args.tls)
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(args.cert, args.key)

    kwargs = {}
    if args.tls == "starttls":
        kwargs.update(tls_context=ctx, require_starttls=True)
    if args.auth_user is not None:
        user = args.auth_user.encode()
        password = (args.auth_pass or "").encode()

        def authenticator(server, session, envelope, mechanism, auth_data):
            if (isinstance(auth_data, LoginPassword) and auth_data.login == user
                    and auth_data.password == password):
                return AuthResult(success=True, auth_data=auth_data)
            return AuthResult(success=False, handled=False)

        kwargs.update(authenticator=authenticator, auth_required=True,
                      auth_require_tls=False)

    sink = Sink(args.maildir, args.refuse)
    controller = None
    last_error = None
    for _ in range(5):  # a free port can be taken between probe and bind
        port = args.port or free_port()
        controller = Controller(sink, hostname="127.0.0.1", port=port,
                                ssl_context=ctx if args.tls == "implicit" else None,
                                **kwargs)
        try:
            controller.start()
            break
        except OSError as e:
            last_error = e
            controller = None
            if args.port:
                break
    if controller is None:
        print("smtp_sink: cannot bind: %s" % last_error, file=sys.stderr)
        return 1

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    if args.ready_file:
        write_atomic(args.ready_file, str(port).encode())
    print("PORT %d" % port, flush=True)
    while not stop.wait(3600):
        pass
    controller.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
