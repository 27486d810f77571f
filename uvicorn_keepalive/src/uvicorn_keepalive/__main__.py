"""``python -m uvicorn_keepalive --check``: print the settings in force, exit 0.

A bad variable is named and ends the process with status 3, as in a server: for scripts,
before ``uvicorn --workers N``, whose supervisor exits 0 when its workers fail to start.
"""

import sys

import uvicorn_keepalive

if sys.argv[1:] != ["--check"]:
    sys.exit(f"usage: python -m uvicorn_keepalive --check\n\n{__doc__}")
print("TCP keepalive:", uvicorn_keepalive.Protocol.keepalive)
