"""An OTP subscription against the dcb single executable, from pytest.

DCB_EXE names the executable (npm run build:binary writes dist/dcb-linux-x64).
"""

import json
import os
import subprocess
import urllib.request

import pytest

DCB_EXE = os.environ.get("DCB_EXE", "tools/dcb-linux-x64")
API_KEY = "sandbox-demo-key"


@pytest.fixture(scope="session")
def dcb_url():
    """Start one sandbox for the whole run, and stop it at the end."""
    server = subprocess.Popen(
        [DCB_EXE, "serve", "--port", "0", "--in-memory", "--quiet"],
        stdout=subprocess.PIPE,
        text=True,
    )
    url = server.stdout.readline().strip()  # its first line, once it listens
    if not url:
        pytest.fail(f"dcb serve exited with {server.wait()}")
    yield url
    server.terminate()
    server.wait(timeout=10)


@pytest.fixture
def sandbox(dcb_url):
    """Each test starts from a fresh sandbox."""
    call(dcb_url, "/_sandbox/reset", {})
    return dcb_url


def call(url, path, body=None, api_key=None):
    """POST a JSON body (or GET without one) and return the JSON answer."""
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["API-KEY"] = api_key
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, headers=headers)
    with urllib.request.urlopen(request) as answer:
        return json.load(answer)


def merchant(url, operation, body):
    """A merchant API call, as your code makes it."""
    return call(url, f"/subscriptions/{operation}", body, api_key=API_KEY)


def test_otp_flow(sandbox):
    init = merchant(sandbox, "init", {"msisdn": "60123456001", "service_code": "STREAMPLUS", "country_code": "my"})
    assert init["status"] == "SUCCESS"
    verif_id = init["payload"]["verif_request_id"]

    # The control API reads the OTP the handset received.
    otp = call(sandbox, f"/_sandbox/otp?verif_request_id={verif_id}")["otp"]

    verify = merchant(sandbox, "verify", {"verif_request_id": verif_id, "otp": otp})
    assert verify["status"] == "SUCCESS"
    status = merchant(sandbox, "status", {"subscription_id": verify["payload"]["subscription_id"]})
    assert status["payload"]["status"] == "ACTIVE"


def test_first_charge_fails(sandbox):
    # The ending 201 makes the first charge fail: Verify answers HTTP 200 with FAIL.
    init = merchant(sandbox, "init", {"msisdn": "60123456201", "service_code": "STREAMPLUS", "country_code": "my"})
    verif_id = init["payload"]["verif_request_id"]
    otp = call(sandbox, f"/_sandbox/otp?verif_request_id={verif_id}")["otp"]
    verify = merchant(sandbox, "verify", {"verif_request_id": verif_id, "otp": otp})
    assert (verify["status"], verify["message"]) == ("FAIL", "INSUFFICIENT_FUNDS")
