"""A token in the git branch a session ran on (`gitBranch`, on every line of the transcript)
is a finding and is redacted on every line, by the detectors and by value; values built at
run time."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from scrubber.demo import fake_github_token


def test_a_token_in_the_branch_name_is_found_and_redacted_on_every_line(
    sandbox_factory: Callable[[str], Any], transcript_builder: type[Any]
) -> None:
    world = sandbox_factory("branch-token")
    token = fake_github_token(random.Random(8))
    t = transcript_builder(cwd="/home/u/work/app")
    t.prompt("push it")
    t.say("done")
    lines = []
    for raw in t.lines:
        record = json.loads(raw)
        record["gitBranch"] = f"fix/{token}"
        lines.append(json.dumps(record))
    source = world.root / "session.jsonl"
    source.write_text("\n".join(lines) + "\n")
    audit = world.scrub("audit", source, "--format", "json")
    assert audit.returncode == 1, audit.stderr
    places = {(f["line"], f["json_path"]) for f in json.loads(audit.stdout)["findings"]}
    assert places == {(n, "/gitBranch") for n in range(1, len(lines) + 1)}
    copy = world.root / "copy.jsonl"
    assert world.scrub("redact", source, "--output", copy).returncode == 0
    text = copy.read_text()
    assert token not in text
    assert text.count("[REDACTED:github-token:") == len(lines)
    assert world.scrub("verify", copy, "--original", source).returncode == 0
