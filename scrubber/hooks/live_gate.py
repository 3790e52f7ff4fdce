"""The live hooks' quick gate: whether a payload may hold a secret at all, decided before the
detection code is imported (importing and building it is most of a hook call's time).

It is a necessary condition, compiled from the live detectors themselves by `compile_gate` (at
`scrub install` and in the worker, into state/live.json): each detector's anchors (a string that
holds none of them cannot hold a match: the Detector contract), or, for the detectors whose
anchors are common, their gates (gates.py: regexes over the raw JSON text). A payload that passes
no detector's condition is answered with nothing; any other goes to the full scan. Standard
library only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

GATE_FORMAT = 1


def compile_gate(detectors: Iterable[Any]) -> dict[str, Any]:
    """{"anchors": [...], "gates": [[pattern, caseless], ...]} for `detectors`."""
    from scrubber.detection.gates import gates_of

    anchors: set[str] = set()
    gates: list[list[object]] = []
    for detector in detectors:
        if getattr(detector, "gates", None):
            gates.extend([g.raw_pattern, g.caseless] for g in gates_of(detector))
        else:
            anchors.update(detector.anchors)
    return {"format": GATE_FORMAT, "anchors": sorted(anchors), "gates": gates}


def may_hold_secret(data: bytes, gate: Mapping[str, Any]) -> bool:
    """False only when no detector the gate was compiled from can match anywhere in `data`
    (raw JSON: `\\/` is read as `/`)."""
    data = data.replace(b"\\/", b"/")
    lowered = data.lower()
    for anchor in gate.get("anchors", ()):
        if str(anchor).encode() in lowered:
            return True
    for pattern, caseless in gate.get("gates", ()):
        flags = re.IGNORECASE if caseless else 0
        if re.search(str(pattern).encode(), data, flags):
            return True
    return False


def valid_gate(value: object) -> bool:
    return (
        isinstance(value, dict)
        and value.get("format") == GATE_FORMAT
        and isinstance(value.get("anchors"), list)
        and isinstance(value.get("gates"), list)
        and all(isinstance(g, list) and len(g) == 2 for g in value["gates"])
    )
