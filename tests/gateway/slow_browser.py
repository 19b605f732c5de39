"""A ``BROWSER`` command for tests/gateway/test_oauth_bridge.py: a user slower than a client's
era probe (``$SLOW_BROWSER_DELAY`` s, the behaviour under test) who then logs in at
oidc-provider as ``$SLOW_BROWSER_USER`` and whose browser lands on the redirect URI.

    python slow_browser.py AUTHORIZATION_URL    (each run appends the URL to $SLOW_BROWSER_LOG)
"""

import asyncio
import os
import sys
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import httpx

from tests.support.oidc import OIDCProvider


def main(url: str) -> None:
    with open(os.environ["SLOW_BROWSER_LOG"], "a") as log:
        log.write(url + "\n")
    time.sleep(float(os.environ["SLOW_BROWSER_DELAY"]))
    redirect_uri = dict(parse_qsl(urlsplit(url).query))["redirect_uri"]
    user = OIDCProvider()  # its interact() is the user's browser; the provider itself runs in the test
    redirect, _ = asyncio.run(user.interact(url, redirect_uri, os.environ["SLOW_BROWSER_USER"]))
    httpx.get(redirect, timeout=10)


if __name__ == "__main__":
    main(sys.argv[1])
