"""A Multi30k mirror on 127.0.0.1 for the tests: a folder served over HTTP, as MULTI30K_BASE_URL expects.

The course's copy of the six files lies beside the repository (``shared/data/multi30k``); CI has it.
"""

from __future__ import annotations

import contextlib
import functools
import socket
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

SHARED_MULTI30K = Path(__file__).resolve().parents[2] / "shared" / "data" / "multi30k"


class _Handler(SimpleHTTPRequestHandler):
    broken_off = False  # send the full Content-Length, then only half the bytes and close

    def copyfile(self, source, output):
        if not self.broken_off:
            return super().copyfile(source, output)
        data = source.read()
        output.write(data[: len(data) // 2])
        output.flush()
        self.close_connection = True

    def log_message(self, format, *arguments):  # the tests' output stays quiet
        pass


@contextlib.contextmanager
def serving(directory: Path, broken_off: bool = False) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 while the block runs; yields its base URL (ending in ``/``)."""
    handler = functools.partial(type("Handler", (_Handler,), {"broken_off": broken_off}), directory=str(directory))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # A short poll: shutdown() waits for the loop to look again (half a second by default, in every test).
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def unreachable_url() -> str:
    """A URL on 127.0.0.1 where nothing listens: the connection is refused, as without a network."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/"
