"""A large realistic transcript (code reads, test logs, git output, JSON, edits, planted secrets
in between), for the benchmarks and the parallel-scan tests."""

from __future__ import annotations

import random
from pathlib import Path

from scrubber.demo.content import (
    NOUNS,
    VERBS,
    code_file,
    git_log_text,
    json_payload,
    lockfile_text,
    printenv_output,
    test_log_text,
)
from scrubber.demo.fakes import (
    B62,
    fake_anthropic_key,
    fake_aws_access_key,
    fake_github_token,
    fake_password,
    fake_private_key,
    fake_stripe_key,
    fake_uuid,
    pick,
)
from scrubber.demo.manifest import LargeTranscript, Planted
from scrubber.demo.records import DEFAULT_START, DEMO_HOME, SessionWriter, numbered_lines


class _Pools:
    """Ordinary tool output, made once and reused, so generation runs at disk-ish speed."""

    def __init__(self, rng: random.Random) -> None:
        self.code = [code_file(rng, rng.randint(2, 40)) for _ in range(48)]
        self.numbered = [numbered_lines(text) for text in self.code]
        self.tests = [
            test_log_text(rng, rng.randint(5, 120), fail=rng.random() < 0.2) for _ in range(24)
        ]
        self.git = [git_log_text(rng, rng.randint(2, 12))[0] for _ in range(24)]
        self.json = [json_payload(rng, rng.randint(2, 40)) for _ in range(24)]
        self.locks = [lockfile_text(rng, rng.randint(4, 30))[0] for _ in range(6)]
        self.numbered_locks = [numbered_lines(text) for text in self.locks]
        self.prompts = [
            f"{rng.choice(VERBS).capitalize()} the {rng.choice(NOUNS).replace('_', ' ')} "
            f"code path and make the tests pass" + rng.choice(("", ".", "?", " please."))
            for _ in range(64)
        ]


# Kinds take turns (from a seeded start) so that even a small file holds several.
_SECRET_ROTATION = ("dotenv", "printenv", "connection", "aws-write", "pem", "anthropic", "stripe")


class _Script:
    """The turns of the large session: ordinary work, and now and then a secret turn."""

    def __init__(
        self, rng: random.Random, pools: _Pools, session: SessionWriter, *, first_turn: int
    ) -> None:
        self.rng = rng
        self.pools = pools
        self.s = session
        self.cwd = session.cwd
        self.turn = first_turn  # which kind of secret comes next, in _SECRET_ROTATION

    def secret_turn(self) -> tuple[str, str]:
        """One turn that shows a secret; its kind and value."""
        rng, s, cwd = self.rng, self.s, self.cwd
        kind = _SECRET_ROTATION[self.turn % len(_SECRET_ROTATION)]
        self.turn += 1
        if kind == "dotenv":
            value = fake_password(rng)
            s.read(f"{cwd}/services/api/.env", f"APP_ENV=staging\nDB_PASSWORD={value}\nDEBUG=0")
            return "dotenv-value", value
        if kind == "printenv":
            value = fake_github_token(rng)
            s.bash("printenv", printenv_output(rng, value), description="Print environment")
            return "github-token", value
        if kind == "connection":
            value = pick(rng, B62, 18)
            s.bash_fails(
                "psql -c 'select 1'",
                f"psql: error: connection to server failed\nDATABASE_URL=postgres://app:{value}"
                "@10.0.0.5:5432/app",
            )
            return "connection-string-password", value
        if kind == "aws-write":
            value = fake_aws_access_key(rng)
            s.write(
                f"{cwd}/deploy/credentials",
                f"[default]\naws_access_key_id = {value}\nregion = eu-west-1\n",
            )
            return "aws-access-key", value
        if kind == "pem":
            value = fake_private_key(rng)
            s.read(f"{cwd}/deploy/id_rsa", value)
            return "private-key", value
        if kind == "anthropic":
            value = fake_anthropic_key(rng)
            s.prompt(f"use {value} for the integration tests")
            return "anthropic-key", value
        value = fake_stripe_key(rng)
        s.bash("cat config/stripe.env", f"STRIPE_KEY={value}\nSTRIPE_MODE=live", description="Show")
        return "stripe-key", value

    def ordinary_turn(self) -> None:
        """One turn of ordinary work: a read, a test run, git, an API call, an edit or a
        prompt, sometimes followed by a reply."""
        rng, s, pools, cwd = self.rng, self.s, self.pools, self.cwd
        choice = rng.random()
        if choice < 0.3:
            self._read_code()
        elif choice < 0.5:
            s.bash("pytest -q", rng.choice(pools.tests), description="Run tests")
        elif choice < 0.62:
            s.bash("git log -10", rng.choice(pools.git), description="Show history")
        elif choice < 0.74:
            s.bash(
                "curl -s localhost:8080/api/v1/items", rng.choice(pools.json), description="Query"
            )
        elif choice < 0.78:
            self._read_lockfile()
        elif choice < 0.9:
            original = rng.choice(pools.code)
            old = original.split("\n")[-3]
            s.edit(f"{cwd}/src/{rng.choice(NOUNS)}.py", original, old, old + "  # checked")
        else:
            s.prompt(rng.choice(pools.prompts))
        if rng.random() < 0.3:
            s.say(
                "Done. " + rng.choice(pools.prompts),
                thinking="Next I should look at " + rng.choice(NOUNS).replace("_", " ") + ".",
            )

    def _read_code(self) -> None:
        rng, cwd = self.rng, self.cwd
        i = rng.randrange(len(self.pools.code))
        text = self.pools.code[i]
        lines = text.count("\n") + 1
        self.s.tool(
            "Read",
            {"file_path": f"{cwd}/src/{rng.choice(NOUNS)}_{i}.py"},
            self.pools.numbered[i],
            {
                "type": "text",
                "file": {
                    "filePath": f"{cwd}/src/{rng.choice(NOUNS)}_{i}.py",
                    "content": text,
                    "numLines": lines,
                    "startLine": 1,
                    "totalLines": lines,
                },
            },
        )

    def _read_lockfile(self) -> None:
        i = self.rng.randrange(len(self.pools.locks))
        path = f"{self.cwd}/web/package-lock.json"
        self.s.tool(
            "Read",
            {"file_path": path},
            self.pools.numbered_locks[i],
            {"type": "text", "file": {"filePath": path, "content": self.pools.locks[i],
                                      "numLines": 1, "startLine": 1, "totalLines": 1}},
        )  # fmt: skip


def write_large_transcript(path: Path, target_bytes: int, seed: int = 0) -> LargeTranscript:
    """Write a realistic transcript of about `target_bytes` (it stops at the first turn past
    it): code reads, test logs, git output, JSON, edits, with about one planted secret per 200
    lines. Deterministic for a seed; memory stays small whatever the size."""
    rng = random.Random(seed)  # noqa: S311 - reproducible fake data
    pools = _Pools(rng)
    cwd = f"{DEMO_HOME}/work/monorepo"
    s = SessionWriter(rng, fake_uuid(rng), cwd, DEFAULT_START)
    planted: dict[tuple[str, str], list[int]] = {}
    written = 0
    line_count = 0
    next_secret = rng.randint(150, 250)
    script = _Script(rng, pools, s, first_turn=rng.randrange(len(_SECRET_ROTATION)))

    with path.open("wb") as out:
        s.prompt(pools.prompts[0])
        while written < target_bytes:
            if line_count + len(s.lines) >= next_secret:
                before = len(s.lines)
                kind, value = script.secret_turn()
                needles = [n.encode() for n in Planted(kind, value).needles()]
                planted.setdefault((kind, value), []).extend(
                    line_count + before + i + 1
                    for i, data in enumerate(s.lines[before:])
                    if any(n in data for n in needles)
                )
                next_secret += rng.randint(150, 250)
            else:
                script.ordinary_turn()
            chunk = s.data()
            out.write(chunk)
            written += len(chunk)
            line_count += len(s.lines)
            s.lines.clear()

    secrets = tuple(
        Planted(kind, value, files=(path.name,), lines=tuple(lines))
        for (kind, value), lines in planted.items()
    )
    return LargeTranscript(path, written, line_count, s.id, secrets)
