"""`run_search` in process, on small config dirs built with the TranscriptBuilder: what is found
(quotes, line breaks, the place of each hit), what is never shown (secrets found in the string,
copies of values found elsewhere in the session, the pattern itself), and the sources beside
the config dir (trash, archives, with a key that opens them and one that does not)."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from scrubber.archive.keys import generate_identity
from scrubber.demo import (
    fake_aws_access_key,
    fake_aws_secret_key,
    fake_github_token,
    fake_password,
)
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.registry import build_detectors
from scrubber.detection.scan import SecretScanner
from scrubber.policy.model import Policy
from scrubber.retention.trash import trash_session
from scrubber.transcript.sessions import discover
from scrubber.usecases.archive import archive_sessions, resolve_encryption
from scrubber.usecases.search import SearchRequest, SearchResult, run_search, search_session
from scrubber.usecases.search_jobs import search_sessions
from scrubber.usecases.search_pattern import compile_pattern
from scrubber.usecases.search_places import SearchScope
from scrubber.usecases.search_sources import Origin, live_sessions

SCANNER = SecretScanner(
    build_detectors(Policy.default()), Fingerprinter(b"search-tests-key-of-32-bytes!!!!")
)
PROJECT = "-home-u-work-app"
RNG = random.Random(18)
TOKEN = fake_github_token(RNG)
AWS = fake_aws_access_key(RNG)
# A value only the .env read says is a secret: its copy in a prompt is found by value.
DB_PASSWORD = fake_password(RNG)


def _write(config: Path, builder: Any) -> Path:
    return builder.write(config / "projects" / PROJECT / f"{builder.session_id}.jsonl")


def _search(config: Path, home: Path, text: str, **options: Any) -> SearchResult:
    regex = options.pop("regex", False)
    request = SearchRequest(compile_pattern(text, regex=regex), config, home, **options)
    return run_search(request, SCANNER, "auto")


def _shown(result: SearchResult) -> str:
    return "\n".join(f"{h.title} {h.where} {h.context} {h.resume}" for h in result.hits)


@pytest.fixture
def world(tmp_path: Path, transcript_builder: Any) -> tuple[Path, Path, Any]:
    config = tmp_path / ".claude"
    builder = transcript_builder(session_id="5e55a0b1-0000-4000-8000-000000000001")
    builder.add({"type": "custom-title", "customTitle": f"deploy with {TOKEN}"})
    builder.prompt('please say "hello\nworld" and then deploy')
    builder.read("/home/u/work/app/.env", f"DB_PASSWORD={DB_PASSWORD}\nMODE=prod")
    builder.prompt(f"the db login {DB_PASSWORD} fails when we deploy")
    builder.bash(
        f"curl -H 'Authorization: token {TOKEN}' https://api.example.com/deploy", "ok deployed"
    )
    builder.say(f"Deployed. The key {AWS} was in the output of the deploy script.")
    builder.raw(b'{"type":"user","broken utf8 \xff\xfe deploy')
    _write(config, builder)
    return config, tmp_path / "home", builder


def test_a_phrase_with_quotes_and_a_line_break_is_found_where_grep_cannot(world: Any) -> None:
    config, home, _ = world
    data = next((config / "projects" / PROJECT).glob("*.jsonl")).read_bytes()
    assert b'say "hello\nworld"' not in data  # what grep would look for is not in the file
    result = _search(config, home, 'say "hello\nworld"')
    assert [h.where for h in result.hits] == ["prompt"]
    assert result.hits[0].context == 'please say "hello world" and then deploy'
    assert result.hits[0].line == 2


def test_each_hit_says_where_it_is_newest_first(world: Any) -> None:
    config, home, builder = world
    result = _search(config, home, "deploy")
    places = [h.where for h in result.hits]
    assert places[0] == "answer"
    # A line that is not JSON is searched as text, and said to be one.
    assert f"line {len(builder.lines)} (not JSON: invalid-utf8)" in places
    assert "answer" in places and "prompt" in places
    assert any(p.startswith("input of Bash(curl") for p in places)
    assert any(p.startswith("output of Bash(curl") for p in places)
    stamps = [h.timestamp for h in result.hits if h.timestamp is not None]
    assert stamps == sorted(stamps, reverse=True)
    assert all(h.resume == (f"claude --resume {builder.session_id}",) for h in result.hits)


def test_no_secret_reaches_a_title_a_label_or_a_context(world: Any) -> None:
    config, home, _ = world
    shown = _shown(_search(config, home, "deploy")) + _shown(_search(config, home, "login"))
    for value in (TOKEN, AWS, DB_PASSWORD):
        assert value not in shown
    assert "[REDACTED:github-token:" in shown  # the title and the curl label
    assert "[REDACTED:aws-access-key:" in shown


def test_a_value_found_elsewhere_in_the_session_is_redacted_in_a_prompt(world: Any) -> None:
    config, home, _ = world
    (hit,) = _search(config, home, "db login").hits
    assert hit.where == "prompt"
    assert DB_PASSWORD not in hit.context
    assert "[REDACTED:dotenv-value:" in hit.context


def test_searching_for_a_secret_shows_its_placeholder_never_the_value(world: Any) -> None:
    config, home, _ = world
    result = _search(config, home, TOKEN[:14])
    assert result.hits
    assert all(
        TOKEN[:14] not in h.context and "[REDACTED:github-token:" in h.context for h in result.hits
    )


def test_scopes_narrow_what_is_searched(world: Any) -> None:
    config, home, _ = world
    prompts = {h.where for h in _search(config, home, "deploy", scope=SearchScope.PROMPTS).hits}
    tools = {
        h.where.split("(")[0] for h in _search(config, home, "deploy", scope=SearchScope.TOOLS).hits
    }
    answers = {h.where for h in _search(config, home, "deploy", scope=SearchScope.ANSWERS).hits}
    assert prompts == {"prompt"}
    assert tools == {"input of Bash", "output of Bash"}
    assert answers == {"answer"}


def test_a_regex_and_the_since_and_project_filters(world: Any) -> None:
    config, home, _ = world
    assert [h.where for h in _search(config, home, r"hel+o\s+wor", regex=True).hits] == ["prompt"]
    later = datetime(2030, 1, 1, tzinfo=UTC)
    assert _search(config, home, "deploy", since=later).hits == []
    assert _search(config, home, "deploy", project="other-project").hits == []
    assert _search(config, home, "deploy", project="work-app").hits


def test_a_file_without_the_literal_is_not_parsed_and_reports_nothing(world: Any) -> None:
    config, home, _ = world
    result = _search(config, home, "nowhere-to-be-found")
    assert result.hits == [] and result.sessions == 1 and result.sessions_matched == 0


def test_trashed_and_archived_sessions_are_searched_and_a_wrong_key_is_skipped(
    world: Any, tmp_path: Path
) -> None:
    config, home, builder = world
    (session,) = discover(config).sessions
    identity = generate_identity()
    policy = Policy.default()
    encryption = resolve_encryption(policy, recipients=[identity.recipient().encode()])
    now = datetime(2026, 4, 1, tzinfo=UTC)
    (outcome,) = archive_sessions(
        [session], policy=policy, home=home, encryption=encryption, now=now
    )
    assert outcome.error is None
    trash_session(session, config_dir=config, home=home, now=now)
    archives = policy.archive.destination_in(home)

    live = _search(config, home, "db login")
    trashed = _search(config, home, "db login", trash=True)
    archived = _search(
        config, home, "db login", archives=archives, identities=[identity], key_hint="k.txt"
    )
    wrong = _search(config, home, "db login", archives=archives, identities=[generate_identity()])

    assert live.hits == []
    assert [h.origin for h in trashed.hits] == [Origin.TRASH]
    assert trashed.hits[0].resume[0] == f"scrub undelete {builder.session_id}"
    assert [h.origin for h in archived.hits] == [Origin.ARCHIVE]
    assert archived.hits[0].resume[0] == f"scrub restore {builder.session_id} -i k.txt"
    assert DB_PASSWORD not in _shown(archived) + _shown(trashed)
    assert wrong.hits == []
    assert [s.reason.split(";")[0] for s in wrong.skipped] == ["the key given does not open it"]


def test_the_search_result_never_holds_the_pattern_or_a_value(world: Any) -> None:
    config, home, _ = world
    result = _search(config, home, DB_PASSWORD)
    assert DB_PASSWORD not in repr(result) and DB_PASSWORD not in _shown(result)
    assert result.hits


def test_two_processes_find_what_one_finds(world: Any, transcript_builder: Any) -> None:
    config, home, _ = world
    other = transcript_builder(session_id="5e55a0b1-0000-4000-8000-000000000002")
    other.prompt(f"deploy again with {TOKEN}")
    _write(config, other)
    request = SearchRequest(compile_pattern("deploy", regex=False), config, home)
    sessions = live_sessions(config)
    search = partial(search_session, request=request, scanner=SCANNER, engine="auto")
    one = list(search_sessions(sessions, search, 1))
    two = list(search_sessions(sessions, search, 2))
    assert len(sessions) == 2 and one == two
    assert all(TOKEN not in hit.context for outcome in two for hit in outcome.hits)


def test_a_value_a_subagent_found_is_redacted_in_the_main_transcript(
    tmp_path: Path, transcript_builder: Any
) -> None:
    config = tmp_path / ".claude"
    main = transcript_builder(session_id="5e55a0b1-0000-4000-8000-000000000003")
    main.prompt(f"connect with {DB_PASSWORD} please")
    path = _write(config, main)
    agent = transcript_builder(session_id=main.session_id)
    agent.read("/home/u/work/app/.env", f"DB_PASSWORD={DB_PASSWORD}")
    agent.write(path.parent / main.session_id / "subagents" / "agent-a1.jsonl")
    (hit,) = _search(config, tmp_path / "home", "connect with").hits
    assert DB_PASSWORD not in hit.context and "[REDACTED:dotenv-value:" in hit.context


def test_a_damaged_archive_is_listed_as_skipped(world: Any) -> None:
    config, home, _ = world
    (session,) = discover(config).sessions
    identity = generate_identity()
    policy = Policy.default()
    encryption = resolve_encryption(policy, recipients=[identity.recipient().encode()])
    now = datetime(2026, 4, 1, tzinfo=UTC)
    (outcome,) = archive_sessions(
        [session], policy=policy, home=home, encryption=encryption, now=now
    )
    assert outcome.written is not None
    archive = outcome.written.entry.path
    data = archive.read_bytes()
    archive.write_bytes(data[: len(data) // 2])  # cut in the middle of the payload
    archives = policy.archive.destination_in(home)
    result = _search(config, home, "db login", live=False, archives=archives, identities=[identity])
    assert result.hits == []
    assert [s.reason.split(" (")[0] for s in result.skipped] == ["damaged or not an archive"]


def test_a_value_only_a_side_file_tells_is_redacted_in_trash_and_archive_hits(
    tmp_path: Path, transcript_builder: Any
) -> None:
    config, home = tmp_path / ".claude", tmp_path / "home"
    value = fake_aws_secret_key(random.Random(1812))
    builder = transcript_builder(session_id="5e55a0b1-0000-4000-8000-000000000012")
    builder.prompt(f"mytoken {value} is the one for the mirror")
    _write(config, builder)
    results = config / "projects" / PROJECT / builder.session_id / "tool-results"
    results.mkdir(parents=True)
    (results / "toolu_01.txt").write_text(f"export AWS_SECRET_ACCESS_KEY={value}\n")
    (session,) = discover(config).sessions
    identity = generate_identity()
    policy = Policy.default()
    encryption = resolve_encryption(policy, recipients=[identity.recipient().encode()])
    now = datetime(2026, 4, 1, tzinfo=UTC)
    (outcome,) = archive_sessions(
        [session], policy=policy, home=home, encryption=encryption, now=now
    )
    assert outcome.error is None
    live = _search(config, home, "mytoken")
    trash_session(session, config_dir=config, home=home, now=now)
    archives = policy.archive.destination_in(home)

    trashed = _search(config, home, "mytoken", trash=True)
    archived = _search(config, home, "mytoken", archives=archives, identities=[identity])

    for result, origin in (
        (live, Origin.LIVE),
        (trashed, Origin.TRASH),
        (archived, Origin.ARCHIVE),
    ):
        assert [h.origin for h in result.hits] == [origin]
        assert value not in _shown(result)
        assert "mytoken [REDACTED:" in result.hits[0].context
