"""The scripted session with planted secrets: a Read of `.env`, a Bash `printenv`, a Write of a
config file holding a token (issue 5, "With the real client").

Fake secrets are built at run time from scrubber.demo's generators (formats cited there), so no
value in the repository looks like a credential. `Planted` keeps them out of reprs: an assertion
message must never print one.
"""

from __future__ import annotations

import json
import random
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrubber.demo import (
    fake_anthropic_key,
    fake_aws_access_key,
    fake_aws_secret_key,
    fake_github_token,
    fake_password,
    fake_stripe_key,
)

from .fake_api import ToolCall, Turn, text_turn, tool_turn

ENV_TOKEN_NAME = "GITHUB_TOKEN"
CONFIG_NAME = "deploy.toml"
# About 38 KB of output: over the 30 KB at which Claude Code persists a tool output to a side
# file (reference note, "Observed in Claude Code 2.1.332").
BIG_OUTPUT_COMMAND = "printenv; seq 1 9000"


@dataclass(frozen=True, slots=True)
class Planted:
    """Secret values by a short label (the label is what assertion messages show)."""

    values: Mapping[str, str] = field(repr=False)

    def labels_in(self, text: str) -> list[str]:
        """Labels of the secrets that occur in `text` (safe to print)."""
        return [label for label, value in self.values.items() if value in text]

    def labels_missing(self, text: str) -> list[str]:
        return [label for label, value in self.values.items() if value not in text]


@dataclass(frozen=True, slots=True)
class Scenario:
    planted: Planted
    env_file: Path
    config_file: Path
    env: Mapping[str, str] = field(repr=False)

    def script(self, *, big_output: bool = False) -> list[Turn]:
        """The model's turns. `big_output` adds a Bash call whose output (over 30 KB) Claude
        Code moves to a side file, `<session>/tool-results/<id>.txt`, token included."""
        extra = (
            [tool_turn("Bash", command=BIG_OUTPUT_COMMAND, description="Environment and more")]
            if big_output
            else []
        )
        return [
            tool_turn("Read", file_path=str(self.env_file)),
            tool_turn("Bash", command="printenv", description="Show the environment"),
            *extra,
            Turn(
                text="Writing the deploy config.",
                calls=(
                    ToolCall(
                        "Write",
                        {"file_path": str(self.config_file), "content": self.config_text()},
                    ),
                ),
            ),
            text_turn("Configured: the deploy config is written."),
        ]

    def config_text(self) -> str:
        values = self.planted.values
        return (
            "[deploy]\n"
            'region = "eu-west-1"\n'
            f'anthropic_api_key = "{values["write-anthropic-key"]}"\n'
        )


def fake_rng() -> random.Random:
    """New values every run, so nothing in the repository or a log matches an old run."""
    return random.Random(secrets.randbits(64))


def plant(project: Path) -> Scenario:
    """Write `.env` into the project and return the scenario (secrets, env, script)."""
    rng = fake_rng()
    values = {
        "dotenv-aws-access-key": fake_aws_access_key(rng),
        "dotenv-aws-secret-key": fake_aws_secret_key(rng),
        "dotenv-stripe-key": fake_stripe_key(rng),
        "dotenv-db-password": fake_password(rng),
        "printenv-github-token": fake_github_token(rng),
        "write-anthropic-key": fake_anthropic_key(rng),
    }
    env_file = project / ".env"
    env_file.write_text(
        "# local development settings\n"
        "APP_ENV=development\n"
        f"AWS_ACCESS_KEY_ID={values['dotenv-aws-access-key']}\n"
        f"AWS_SECRET_ACCESS_KEY={values['dotenv-aws-secret-key']}\n"
        f"STRIPE_SECRET_KEY={values['dotenv-stripe-key']}\n"
        f"DB_PASSWORD={values['dotenv-db-password']}\n"
    )
    return Scenario(
        planted=Planted(values),
        env_file=env_file,
        config_file=project / CONFIG_NAME,
        env={ENV_TOKEN_NAME: values["printenv-github-token"]},
    )


def resolve_pointer(document: Any, pointer: str) -> Any:
    """RFC 6901 JSON Pointer lookup (findings locate secrets this way)."""
    if pointer == "":
        return document
    node = document
    for raw in pointer.lstrip("/").split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


def finding_values(findings: Iterable[Mapping[str, Any]]) -> list[str]:
    """The text each finding points at (file, line, json_path, span), read back from the file.

    This is how a test checks what audit found without audit ever printing a value."""
    lines: dict[str, list[str]] = {}
    out = []
    for finding in findings:
        file = str(finding["file"])
        if file not in lines:
            lines[file] = Path(file).read_text(encoding="utf-8").splitlines()
        line = lines[file][int(finding["line"]) - 1]
        pointer = finding.get("json_path")
        text = line if pointer is None else resolve_pointer(json.loads(line), pointer)
        start, end = finding["span"]
        out.append(str(text)[start:end])
    return out
