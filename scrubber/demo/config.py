"""A whole synthetic config dir: several projects and sessions, with subagents, tool-results,
file-history, todos, debug, history and shell snapshots, and the manifest of what was planted."""

from __future__ import annotations

import base64
import hashlib
import os
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from scrubber.demo.content import (
    NOUNS,
    code_file,
    git_log_text,
    json_payload,
    lockfile_text,
    printenv_output,
    test_log_text,
)
from scrubber.demo.fakes import (
    B62,
    HEX,
    fake_anthropic_key,
    fake_aws_access_key,
    fake_aws_secret_key,
    fake_certificate,
    fake_github_token,
    fake_npm_token,
    fake_password,
    fake_png,
    fake_private_key,
    fake_stripe_key,
    fake_uuid,
    pick,
)
from scrubber.demo.manifest import Decoy, DemoManifest, Planted
from scrubber.demo.records import (
    DEFAULT_START,
    DEMO_HOME,
    SessionWriter,
    dump_line,
    iso,
    project_folder_name,
)
from scrubber.paths import create_private_dirs

_CONFIG_NAME = ".claude"


@dataclass(frozen=True, slots=True)
class _ShopApiSecrets:
    """What session 1 plants, for the parts of its script that show it again."""

    password: str
    akid: str
    github: str
    pg_password: str
    dotenv: str  # the .env file, with the password, the AWS key pair and the Stripe key
    db_url: str


class _Demo:
    def __init__(self, seed: int, start: datetime) -> None:
        # Deterministic fake data, not cryptography: the same seed must give the same bytes.
        self.rng = random.Random(seed)  # noqa: S311
        self.start = start
        self.files: dict[str, bytes] = {}
        self.mtimes: dict[str, datetime] = {}
        self.symlinks: dict[str, str] = {}
        self.secrets: dict[tuple[str, str], list[str]] = {}
        self.decoys: dict[tuple[str, str], None] = {}
        self.session_ids: list[str] = []
        self.history: list[bytes] = []

    # bookkeeping

    def plant(self, kind: str, value: str, where: str) -> str:
        self.secrets.setdefault((kind, value), []).append(where)
        return value

    def decoy(self, kind: str, value: str) -> str:
        self.decoys[(kind, value)] = None
        return value

    def put(self, relative: str, data: bytes, moment: datetime) -> None:
        self.files[relative] = data
        self.mtimes[relative] = moment

    def finish_session(self, session: SessionWriter, project: str) -> str:
        base = f"projects/{project}/{session.id}"
        self.put(base + ".jsonl", session.data(), session.clock)
        for tool_id, output in session.tool_results.items():
            self.put(f"{base}/tool-results/{tool_id}.txt", output.encode(), session.clock)
        return base

    def typed(self, session: SessionWriter, text: str, pasted: str | None = None) -> None:
        entry: dict[str, Any] = {
            "display": text if pasted is None else "[Pasted text #1] " + text,
            "pastedContents": {}
            if pasted is None
            else {"1": {"id": 1, "type": "text", "content": pasted}},
            "timestamp": int(session.clock.timestamp() * 1000),
            "project": session.cwd,
            "sessionId": session.id,
        }
        self.history.append(dump_line(entry))

    def new_session(self, cwd: str, start: datetime) -> SessionWriter:
        session = SessionWriter(self.rng, fake_uuid(self.rng), cwd, start)
        self.session_ids.append(session.id)
        return session

    # scripted sessions

    def shop_api(self, start: datetime) -> None:
        """Session 1: a .env read, an env dump, a failing migration, a big log, an edit with a
        file-history copy, a rewind fork, a compaction."""
        cwd = f"{DEMO_HOME}/work/shop-api"
        project = project_folder_name(cwd)
        s = self.new_session(cwd, start)
        # Each part draws from the one generator in turn: their order is the demo's bytes.
        secrets = self._shop_api_secrets()
        after_read = self._shop_api_investigation(s, project, secrets)
        self._shop_api_screenshot(s)
        self._shop_api_env_edit(s, secrets)
        self._shop_api_rewind_and_compaction(s, after_read, secrets)
        self.finish_session(s, project)
        self._shop_api_side_files(s)

    def _shop_api_secrets(self) -> _ShopApiSecrets:
        rng = self.rng
        password = self.plant("dotenv-value", fake_password(rng), "Read(.env) output")
        akid = self.plant("aws-access-key", fake_aws_access_key(rng), "Read(.env) output")
        aws_secret = self.plant("aws-secret-key", fake_aws_secret_key(rng), "Read(.env) output")
        stripe = self.plant("stripe-key", fake_stripe_key(rng), "Read(.env) output")
        github = self.plant("github-token", fake_github_token(rng), "Bash(printenv) output")
        pg_password = self.plant(
            "connection-string-password", pick(rng, B62, 18), "failing Bash output, logs"
        )
        dotenv = (
            "# local development settings\nAPP_ENV=development\nDB_HOST=db.internal\n"
            f"DB_PORT=5432\nDB_USER=shop\nDB_PASSWORD={password}\n"
            f"AWS_ACCESS_KEY_ID={akid}\nAWS_SECRET_ACCESS_KEY={aws_secret}\n"
            f"AWS_REGION=eu-west-1\nSTRIPE_SECRET_KEY={stripe}\nLOG_LEVEL=info"
        )
        db_url = f"postgresql://shop:{pg_password}@db.internal:5432/shop"
        return _ShopApiSecrets(password, akid, github, pg_password, dotenv, db_url)

    def _shop_api_investigation(
        self, s: SessionWriter, project: str, secrets: _ShopApiSecrets
    ) -> str:
        """The first prompt: git log, the .env read, printenv, the failing migration and the
        big log persisted as a tool-results file. Returns the uuid a rewind goes back to."""
        rng = self.rng
        cwd = s.cwd
        s.snapshot(fake_uuid(rng), {})
        first = "The checkout endpoint returns 500 since this morning. Can you find out why?"
        self.typed(s, first)
        s.prompt(first)
        s.say("I'll start with the configuration and the recent history.")
        log, shas = git_log_text(rng, 3)
        for sha in shas:
            self.decoy("git-sha", sha)
        s.bash("git log -3", log, description="Show recent commits")
        s.read(f"{cwd}/.env", secrets.dotenv, thinking="The config is in .env; read it first.")
        after_read = s.say(
            "The database settings look complete. Let me check the environment next.",
            thinking=(
                f"The .env sets DB_PASSWORD={secrets.password} for user shop on db.internal, so "
                "the credentials are there; the failure is probably elsewhere."
            ),
        )
        s.bash("printenv", printenv_output(rng, secrets.github), description="Print environment")
        s.bash_fails(
            "alembic upgrade head",
            "INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.\n"
            "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server "
            'at "db.internal" (10.0.3.7), port 5432 failed: FATAL:  password authentication '
            f'failed for user "shop"\n(Background on this error at: https://sqlalche.me/e/20/e3q8)'
            f"\nurl: {secrets.db_url}",
        )
        config_path = f"{DEMO_HOME}/{_CONFIG_NAME}/projects/{project}/{s.id}"
        s.bash_persisted("docker compose logs api", self._api_log(secrets.db_url), config_path)
        return after_read

    def _api_log(self, db_url: str) -> str:
        """420 request lines of a container log, the database URL logged among them."""
        rng = self.rng
        log_lines = []
        for i in range(420):
            if i == 160:
                log_lines.append(f"api-1  | 2026-03-02 09:14:02 INFO connecting to {db_url}")
            log_lines.append(
                f"api-1  | 2026-03-02 09:{10 + i // 60:02d}:{i % 60:02d} INFO "
                f"GET /api/v1/{rng.choice(NOUNS)}/{rng.randint(1, 9999)} 200 "
                f"{rng.randint(2, 300)}ms request_id={fake_uuid(rng)}"
            )
        return "\n".join(log_lines)

    def _shop_api_screenshot(self, s: SessionWriter) -> None:
        """The user pastes a screenshot: an image block beside the text."""
        png = base64.b64encode(fake_png(self.rng)).decode()
        self.decoy("image-data", png)
        s.user(
            [
                {"type": "text", "text": "This is what the checkout page shows."},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": png},
                },
            ]
        )

    def _shop_api_env_edit(self, s: SessionWriter, secrets: _ShopApiSecrets) -> None:
        """An edit of .env: Claude Code keeps the file as it was in file-history."""
        env_path = f"{s.cwd}/.env"
        backup = hashlib.sha256(env_path.encode()).hexdigest()[:16] + "@v1"
        edit_prompt = s.prompt("Turn on debug logging in .env")
        self.typed(s, "Turn on debug logging in .env")
        s.snapshot(
            edit_prompt,
            {env_path: {"backupFileName": backup, "version": 1, "backupTime": iso(s.clock)}},
        )
        s.edit(env_path, secrets.dotenv, "LOG_LEVEL=info", "LOG_LEVEL=debug")
        for kind, value in (("dotenv-value", secrets.password), ("aws-access-key", secrets.akid)):
            self.plant(kind, value, "Edit(.env) originalFile, file-history copy")
        self.put(f"file-history/{s.id}/{backup}", secrets.dotenv.encode(), s.clock)
        s.write(
            f"{s.cwd}/docker-compose.override.yml",
            "services:\n  api:\n    environment:\n"
            f"      DATABASE_URL: {secrets.db_url}\n      LOG_LEVEL: debug\n",
        )
        s.system("turn_duration", durationMs=self.rng.randint(20000, 90000))

    def _shop_api_rewind_and_compaction(
        self, s: SessionWriter, after_read: str, secrets: _ShopApiSecrets
    ) -> None:
        """/rewind: a new branch from an earlier point (the old branch stays in the file), then
        a compaction whose summary repeats the password, and the session's title and tag."""
        s.last = after_read
        s.prompt("Actually, skip the env; run the tests first.")
        tests = test_log_text(self.rng, 24, fail=True)
        s.bash("pytest -q tests/", tests, description="Run tests")
        s.say("One test fails in the token refresh path; the database is fine.")

        password = secrets.password
        self.plant("dotenv-value", password, "thinking text, compaction summary")
        self.plant(
            "connection-string-password", secrets.pg_password, "Write input and toolUseResult"
        )
        s.compact(
            "1. The user asked why checkout returns 500.\n2. .env holds "
            f"DB_PASSWORD={password} and an AWS key pair.\n3. Migrations fail with a password "
            "error for user shop.\n4. test_refresh_token fails."
        )
        s.say("Continuing: I'll fix the refresh test.")
        s.emit({"type": "summary", "summary": "Checkout 500 and token refresh", "leafUuid": s.last})
        s.emit({"type": "custom-title", "customTitle": "checkout-500", "sessionId": s.id})
        s.emit({"type": "tag", "tag": "billing", "sessionId": s.id})

    def _shop_api_side_files(self, s: SessionWriter) -> None:
        """Its todos, debug log (with the `debug/latest` link) and session-env script."""
        self.put(
            f"todos/{s.id}-agent-{s.id}.json",
            dump_line(
                [{"content": "Fix token refresh", "status": "in_progress", "activeForm": "Fixing"}]
            ),
            s.clock,
        )
        self.put(
            f"debug/{s.id}.txt",
            f"[DEBUG] Session {s.id} started\n[DEBUG] Loaded 3 settings files\n".encode(),
            s.clock,
        )
        self.symlinks["debug/latest"] = f"{s.id}.txt"
        self.put(
            f"session-env/{s.id}/sessionstart-hook-0.sh", b"export APP_ENV=development\n", s.clock
        )

    def infra(self, start: datetime) -> None:
        """Session 2: a private key read, a certificate, a lockfile, a subagent."""
        rng = self.rng
        cwd = f"{DEMO_HOME}/work/infra"
        project = project_folder_name(cwd)
        s = self.new_session(cwd, start)
        key = self.plant("private-key", fake_private_key(rng), "Read(deploy.pem) output")
        cert = self.decoy("certificate", fake_certificate(rng))
        first = "Rotate the deploy key and check the CA bundle."
        self.typed(s, first)
        s.prompt(first)
        s.read(f"{cwd}/deploy/keys/deploy.pem", key)
        s.read(f"{cwd}/certs/ca.crt", cert)
        log, shas = git_log_text(rng, 5)
        for sha in shas:
            self.decoy("git-sha", sha)
        s.bash("git log -5", log, description="Show history")
        lock, hashes = lockfile_text(rng, 6)
        for integrity in hashes:
            self.decoy("integrity-hash", integrity)
        s.read(f"{cwd}/web/package-lock.json", lock)
        payload = json_payload(rng, 3)
        s.bash("curl -s localhost:8080/api/v1/orders", payload, description="Query the API")

        agent_id = pick(rng, HEX, 8)
        task_prompt = "Find every place that loads deploy.pem and list them."
        s.tool(
            "Task",
            {"description": "Find key users", "prompt": task_prompt, "subagent_type": "Explore"},
            "Found 2 places: deploy/rotate.sh and ansible/roles/app/tasks/main.yml",
            {"status": "completed", "agentId": agent_id, "totalDurationMs": 8123},
        )
        sub = SessionWriter(rng, s.id, cwd, s.clock, sidechain=True, agent_id=agent_id)
        sub.user(task_prompt)
        # The subagent sees the parent's context, so the key shows up again in its own file.
        sub.read(f"{cwd}/deploy/keys/deploy.pem", key)
        sub.say("deploy/rotate.sh and ansible/roles/app/tasks/main.yml load it.")
        folder = f"projects/{project}/{s.id}/subagents"
        self.put(f"{folder}/agent-{agent_id}.jsonl", sub.data(), sub.clock)
        self.put(
            f"{folder}/agent-{agent_id}.meta.json",
            dump_line({"agentType": "Explore", "description": "Find key users"}),
            sub.clock,
        )
        s.say("Both users of the key are listed; rotation can proceed.")
        s.emit({"type": "ai-title", "aiTitle": "Rotate deploy key", "sessionId": s.id})
        s.emit({"type": "tag", "tag": "ops", "sessionId": s.id})
        self.finish_session(s, project)

    def pasted_key(self, start: datetime) -> None:
        """Session 3: an Anthropic key pasted in a prompt; an older-style agent file."""
        rng = self.rng
        cwd = f"{DEMO_HOME}/work/shop-api"
        project = project_folder_name(cwd)
        s = self.new_session(cwd, start)
        key = self.plant("anthropic-key", fake_anthropic_key(rng), "prompt, queue, history")
        text = f"my key {key} gets 401 from the API, is the client config wrong?"
        self.typed(s, "is the client config wrong?", pasted=f"my key {key} gets 401 from the API")
        s.prompt(text, queued=True)
        # 2.1.332 also keeps a copy of what it sent, keyed by a content hash (not a secret).
        blob = {"role": "user", "content": [{"type": "text", "text": text}]}
        digest = self.decoy("request-hash", hashlib.sha256(dump_line(blob)).hexdigest())
        s.emit({"type": "api-request-blob", "hash": digest, "message": blob, "sessionId": s.id})
        code = code_file(rng, 6)
        s.read(f"{cwd}/app/clients/anthropic_client.py", code)
        s.say("The client reads the key from ANTHROPIC_API_KEY; a 401 means the key is revoked.")
        s.emit({"type": "ai-title", "aiTitle": "Anthropic client 401", "sessionId": s.id})
        self.finish_session(s, project)
        # Releases before subagent folders wrote agent transcripts beside the sessions.
        agent = SessionWriter(rng, s.id, cwd, s.clock, sidechain=True, agent_id=pick(rng, HEX, 8))
        agent.user("Summarise app/clients/anthropic_client.py")
        agent.say("It wraps the Messages API with retries.")
        self.put(f"projects/{project}/agent-{agent.agent_id}.jsonl", agent.data(), agent.clock)

    def ordinary(self, start: datetime, index: int) -> None:
        """Further sessions: ordinary work, no secrets, decoys only."""
        rng = self.rng
        name = ("data-pipeline", "website", "infra", "shop-api")[index % 4]
        cwd = f"{DEMO_HOME}/work/{name}"
        project = project_folder_name(cwd)
        s = self.new_session(cwd, start)
        first = f"Refactor the {rng.choice(NOUNS).replace('_', ' ')} module and run the tests."
        self.typed(s, first)
        s.prompt(first)
        s.read(f"{cwd}/src/{rng.choice(NOUNS)}.py", code_file(rng, rng.randint(3, 9)))
        log, shas = git_log_text(rng, 2)
        for sha in shas:
            self.decoy("git-sha", sha)
        s.bash("git log -2", log, description="Show history")
        s.bash("pytest -q", test_log_text(rng, rng.randint(5, 30)), description="Run tests")
        s.say("Done: the module is split and all tests pass.")
        if index % 2:
            s.emit({"type": "custom-title", "customTitle": f"refactor-{index}", "sessionId": s.id})
        if index % 3 == 0:
            s.emit({"type": "tag", "tag": "chore", "sessionId": s.id})
        self.finish_session(s, project)

    def build(self, sessions: int) -> None:
        rng = self.rng
        scripted: list[Callable[[datetime], None]] = [self.shop_api, self.infra, self.pasted_key]
        moment = self.start
        for index in range(sessions):
            if index < len(scripted):
                scripted[index](moment)
            else:
                self.ordinary(moment, index)
            moment += timedelta(hours=rng.randint(5, 60))
        if self.history:
            self.put("history.jsonl", b"".join(line + b"\n" for line in self.history), moment)
        npm = self.plant("npm-token", fake_npm_token(rng), "shell snapshot export")
        snapshot = (
            "# Snapshot file\nunalias -a 2>/dev/null\n"
            "shopt -s expand_aliases\nexport PATH=/usr/local/bin:/usr/bin:/bin\n"
            f"export NPM_TOKEN={npm}\nexport EDITOR=vim\n"
        )
        stamp = int(moment.timestamp() * 1000)
        self.put(
            f"shell-snapshots/snapshot-bash-{stamp}-{pick(rng, B62[:36], 6)}.sh",
            snapshot.encode(),
            moment,
        )
        self.put(
            f"paste-cache/{pick(rng, HEX, 16)}.txt", b"SELECT id, status FROM orders;\n", moment
        )

    def manifest(self) -> DemoManifest:
        secrets = []
        for (kind, value), where in self.secrets.items():
            probe = Planted(kind, value)
            needles = [n.encode() for n in probe.needles()]
            files = tuple(
                sorted(name for name, data in self.files.items() if any(n in data for n in needles))
            )
            secrets.append(Planted(kind, value, tuple(dict.fromkeys(where)), files))
        decoys = []
        for kind, value in self.decoys:
            needles = [n.encode() for n in Planted(kind, value).needles()]
            files = tuple(
                sorted(name for name, data in self.files.items() if any(n in data for n in needles))
            )
            decoys.append(Decoy(kind, value, files))
        return DemoManifest(
            secrets=tuple(secrets),
            decoys=tuple(decoys),
            sessions=tuple(self.session_ids),
            files=tuple(sorted(self.files)),
        )


def _generate(seed: int, sessions: int, start: datetime | None) -> _Demo:
    if sessions < 0:
        raise ValueError("sessions must be >= 0")
    demo = _Demo(seed, start or DEFAULT_START)
    demo.build(sessions)
    return demo


def build_demo_config(
    root: Path, *, seed: int = 0, sessions: int = 3, start: datetime | None = None
) -> Path:
    """Write a synthetic Claude Code config dir at `root/.claude` and return its path.

    Sessions 1-3 are scripted (secrets in every place they hide; see the module docstring),
    further ones are ordinary work with decoys only. Files are 0600 like Claude Code's, and
    each file's mtime is the time of its last record. `start` is when the first session began.
    """
    demo = _generate(seed, sessions, start)
    config = root / _CONFIG_NAME
    # Folders 0700 as Claude Code makes them: the audit of a demo warns about none of its own.
    create_private_dirs(config)
    for relative, data in demo.files.items():
        target = config / relative
        create_private_dirs(target.parent)
        target.write_bytes(data)
        target.chmod(0o600)
        stamp = demo.mtimes[relative].timestamp()
        os.utime(target, (stamp, stamp))
    for relative, link_target in demo.symlinks.items():
        link = config / relative
        if not os.path.lexists(link):
            link.symlink_to(link_target)
    return config


def demo_manifest(
    *, seed: int = 0, sessions: int = 3, start: datetime | None = None
) -> DemoManifest:
    """What `build_demo_config` with the same arguments plants (computed, not read back)."""
    return _generate(seed, sessions, start).manifest()


def planted_secrets(*, seed: int = 0, sessions: int = 3) -> tuple[Planted, ...]:
    return demo_manifest(seed=seed, sessions=sessions).secrets
