"""Loading detect-secrets without `requests` (detect_secrets_adapter._RequestsStandIn).

Each case runs in a fresh interpreter: what is imported is process-wide state.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

_FIND_A_TOKEN = """
import json, os, sys
sys.path.insert(0, {root!r})
from scrubber.detection import detect_secrets_adapter as adapter
from scrubber.detection.detector import PLAIN
{before}
detector = adapter.DetectSecretsDetector()
detector.prepare()
# A Slack bot token shape that detect-secrets' SlackDetector knows, built at run time.
token = "xo" + "xb-" + "1234567890-1234567890123-" + "a1B2c3D4e5F6g7H8i9J0k1L2"
hits = [(h.start, h.end, h.kind) for h in detector.find("SLACK=" + token, PLAIN)]
print(json.dumps({{
    "hits": hits,
    "requests_loaded": "requests" in sys.modules,
    "stand_in_left": type(sys.modules.get("requests")).__name__ == "_RequestsStandIn",
    "plugin_requests": type(sys.modules["detect_secrets.plugins.base"].requests).__name__,
}}))
"""


def _run(before: str = "") -> dict[str, object]:
    code = _FIND_A_TOKEN.format(root=str(ROOT), before=before)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRUB_")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_detect_secrets_loads_and_finds_without_importing_requests() -> None:
    result = _run()
    assert result["hits"], "the plugins work under the stand-in"
    assert result["requests_loaded"] is False
    assert result["stand_in_left"] is False
    assert result["plugin_requests"] == "_RequestsStandIn"


def test_a_later_import_of_requests_gets_the_real_package() -> None:
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from scrubber.detection import detect_secrets_adapter as adapter\n"
        "adapter.DetectSecretsDetector().prepare()\n"
        "import requests\n"
        "assert callable(requests.get) and hasattr(requests, 'Session'), requests\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]


def test_when_detect_secrets_needs_more_of_requests_it_is_imported_the_ordinary_way() -> None:
    # A stand-in without `Response` fails detect-secrets' import (its annotations name it):
    # the adapter must forget the half-imported modules and load them with the real requests.
    result = _run(before="del adapter._RequestsStandIn.Response")
    assert result["hits"]
    assert result["requests_loaded"] is True
    assert result["plugin_requests"] == "module"


def test_an_already_imported_requests_is_used_as_it_is() -> None:
    result = _run(before="import requests")
    assert result["hits"]
    assert result["plugin_requests"] == "module"
