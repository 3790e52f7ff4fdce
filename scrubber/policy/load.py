"""Read a policy file into a `Policy`: the one module that imports yaml (the YAML's plain data
becomes a `Policy` in `build.py`).

Where the policy comes from, first match wins: the `--policy` path, `$SCRUB_POLICY`,
`$SCRUB_HOME/policy.yaml`, else the built-in defaults. A file that was asked for (by flag or
variable) must exist; the one in `$SCRUB_HOME` is optional.

Every error is one line naming the file, the key path (`retention.days`,
`detection.allowlist.patterns[2]`) and what was expected. Errors never quote the file: at most a
key name, a number or a short enum word, because a policy can hold things worth keeping quiet
(a healthcheck URL with its token, an allowlist pattern with a literal value, a pasted identity).
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Any

from scrubber import paths
from scrubber.errors import ConfigError, KeyMaterialError, UsageError
from scrubber.policy.build import build_policy, show_key
from scrubber.policy.model import ArchivePolicy, Policy, PolicyValueError, SessionEndAction
from scrubber.untrusted import DamagedDocument, check_depth, read_bounded

ENV_POLICY = "SCRUB_POLICY"
TEMPLATE_NAMES: tuple[str, ...] = ("default", "strict", "vps")

# A policy is a page of settings; anything this large is the wrong file (or a YAML bomb).
MAX_POLICY_BYTES = 1 << 20

_KEYS_HINT = "every key, with what it does, is listed in scrubber's policies/default.yaml"


class PolicySource(StrEnum):
    FLAG = "--policy"
    ENVIRONMENT = "$SCRUB_POLICY"
    HOME = "$SCRUB_HOME/policy.yaml"
    BUILTIN = "built-in defaults"


@dataclass(frozen=True, slots=True)
class LoadedPolicy:
    policy: Policy
    source: PolicySource
    path: Path | None  # None for the built-in defaults
    warnings: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.path is None:
            return "built-in defaults (no policy file)"
        return f"{self.path} (from {self.source})"


# ---------------------------------------------------------------------------------------------
# Finding the file


def load_policy(path: Path | None = None, env: Mapping[str, str] | None = None) -> LoadedPolicy:
    """The policy in force, and where it came from. Raises ConfigError with a one-line message."""
    env = os.environ if env is None else env
    if path is not None:
        return _load_file(Path(path), PolicySource.FLAG, env)
    configured = env.get(ENV_POLICY, "")
    if configured:
        return _load_file(Path(configured).expanduser(), PolicySource.ENVIRONMENT, env)
    home_policy = paths.policy_file(paths.scrub_home(env))
    # lexists, not exists: a dangling symlink (an unmounted volume) must be an error, not a
    # silent fall-back to defaults that would, for example, stop archiving on a server.
    if os.path.lexists(home_policy):
        return _load_file(home_policy, PolicySource.HOME, env)
    policy = Policy.default()
    return LoadedPolicy(policy, PolicySource.BUILTIN, None, policy.warnings())


def _load_file(path: Path, source: PolicySource, env: Mapping[str, str]) -> LoadedPolicy:
    text = _read_text(path, source)
    policy = parse_policy(text, origin=str(path), base_dir=path.absolute().parent, env=env)
    return LoadedPolicy(policy, source, path, policy.warnings())


def _read_text(path: Path, source: PolicySource) -> str:
    try:
        # A FIFO must not hang every command, nor a link to /dev/zero fill memory.
        data = read_bounded(path, MAX_POLICY_BYTES, follow=True)
    except FileNotFoundError:
        hint = {
            PolicySource.FLAG: "check the path given to --policy",
            PolicySource.ENVIRONMENT: f"${ENV_POLICY} names this file: fix the path or unset it",
        }.get(source)
        raise ConfigError(f"{path}: policy file not found", hint) from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a folder, expected a policy file") from None
    except paths.NotRegularFileError as error:
        raise ConfigError(f"{path}: is {error.kind}, expected a policy file; not read") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the policy file ({error.strerror})") from None
    except DamagedDocument:
        problem = f"too large for a policy file (over {MAX_POLICY_BYTES} bytes)"
        raise ConfigError(f"{path}: {problem}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 text (bad byte at offset {error.start})") from None


# ---------------------------------------------------------------------------------------------
# YAML to plain data


@functools.cache
def _yaml() -> tuple[Any, type[Any]]:
    """PyYAML and our loader, imported on the first policy file read: with no policy file (the
    built-in defaults), a command does not pay for importing yaml (about 15 ms)."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
        """safe_load, except that a key given twice is an error (PyYAML silently keeps the
        last)."""

    def construct_mapping_once(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
        loader.flatten_mapping(node)
        seen: set[object] = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node)
            try:
                duplicate = key in seen
            except TypeError:  # an unhashable key; construct_mapping reports it properly
                break
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {show_key(key)}", key_node.start_mark
                )
            seen.add(key)
        return loader.construct_mapping(node)

    StrictLoader.add_constructor(
        yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping_once
    )
    return yaml, StrictLoader


def _parse_yaml(text: str, origin: str) -> object:
    yaml, loader = _yaml()
    try:
        value = yaml.load(text, Loader=loader)  # a SafeLoader subclass: safe
        check_depth(value, origin)  # what build_policy and `policy show` walk must be shallow
        return value
    except DamagedDocument as damaged:
        raise ConfigError(f"{origin}: not a policy: {damaged.problem}") from None
    except RecursionError:  # the composer recurses once per level of nesting
        raise ConfigError(f"{origin}: not valid YAML: nested too deeply") from None
    except ValueError:  # a scalar int() or date() refuses: too many digits, a 31st of February
        problem = "a value that cannot be converted (a number too long, or no such date)"
        raise ConfigError(f"{origin}: not valid YAML: {problem}") from None
    except yaml.MarkedYAMLError as error:
        # Only the parser's problem and its position: str(error) would quote the offending line.
        mark = error.problem_mark or error.context_mark
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = error.problem or error.context or "syntax error"
        raise ConfigError(f"{origin}{where}: not valid YAML: {problem}") from None
    except yaml.YAMLError:
        raise ConfigError(f"{origin}: not valid YAML") from None


def key_lines(loaded: LoadedPolicy) -> dict[str, int]:
    """Each key of the loaded policy's file as a dotted path (`retention.days`), with the line
    (1-based) it is written on: where `scrub policy show` says a value came from. Empty for the
    built-in defaults, or when the file no longer reads as YAML (it changed since it loaded)."""
    if loaded.path is None:
        return {}
    yaml, loader = _yaml()
    try:
        root = yaml.compose(_read_text(loaded.path, loaded.source), Loader=loader)
    except (yaml.YAMLError, ConfigError, RecursionError):
        return {}
    lines: dict[str, int] = {}
    pending = [(root, "")]
    while pending:
        node, prefix = pending.pop()
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    lines[prefix + key_node.value] = key_node.start_mark.line + 1
                    pending.append((value_node, f"{prefix}{key_node.value}."))
    return lines


# ---------------------------------------------------------------------------------------------
# Text to a Policy (the checks of every key are in build.py)


def parse_policy(
    text: str, *, origin: str, base_dir: Path, env: Mapping[str, str] | None = None
) -> Policy:
    """Parse policy text. `origin` names it in errors; relative paths resolve from `base_dir`."""
    env = os.environ if env is None else env
    data = _parse_yaml(text, origin)
    try:
        return build_policy(data, base_dir=base_dir, env=env)
    except PolicyValueError as error:
        hint = error.hint or (_KEYS_HINT if error.problem.startswith("unknown key") else None)
        where = f"{error.key}: " if error.key else ""
        raise ConfigError(f"{origin}: {where}{error.problem}", hint) from None


# ---------------------------------------------------------------------------------------------
# Templates


def read_template(name: str) -> str:
    """The text of a packaged template (default, strict or vps)."""
    if name not in TEMPLATE_NAMES:
        raise UsageError(
            f"unknown policy template {name!r}", f"choose from {', '.join(TEMPLATE_NAMES)}"
        )
    resource = resources.files("scrubber.policy").joinpath("templates", f"{name}.yaml")
    return resource.read_text(encoding="utf-8")


def load_template(name: str, env: Mapping[str, str] | None = None) -> Policy:
    """Parse a packaged template as it ships (vps.yaml refuses until recipients are added)."""
    return parse_policy(
        read_template(name), origin=f"policies/{name}.yaml", base_dir=Path.cwd(), env=env
    )


def render_default_policy(
    recipients: Sequence[str] | None = None,
    on_session_end: Sequence[str] | None = None,
    recipients_file: Path | None = None,
) -> str:
    """default.yaml's commented text with the installer's choices written in.

    The installer writes this text rather than dumping YAML, so the user keeps every comment.
    Values are checked before they are written, and the result is parsed back, so an installer
    can never leave behind a policy that does not load.
    """
    text = read_template("default")
    if recipients:
        try:
            ArchivePolicy(recipients=tuple(recipients))
        except PolicyValueError as error:
            raise KeyMaterialError(f"recipient {error.key}: {error.problem}") from None
        block = "".join(f"\n    - {recipient}" for recipient in recipients)
        text = _replace_line(text, "  recipients: []", f"  recipients:{block}")
    if recipients_file is not None:
        # A JSON string is a valid YAML double-quoted scalar: any path survives the round trip.
        quoted = json.dumps(str(Path(recipients_file).expanduser().absolute()), ensure_ascii=False)
        text = _replace_line(text, "  recipients_file:", f"  recipients_file: {quoted}")
    if on_session_end is not None:
        actions: list[str] = []
        for action in on_session_end:
            try:
                actions.append(SessionEndAction(action).value)
            except ValueError:
                choices = ", ".join(member.value for member in SessionEndAction)
                raise UsageError(
                    f"unknown on-session-end action {action!r}", f"choose from {choices}"
                ) from None
        text = _replace_line(text, "on_session_end:", f"on_session_end: [{', '.join(actions)}]")
    parse_policy(text, origin="the policy to be written", base_dir=Path.cwd(), env={})
    return text


def _replace_line(text: str, line: str, replacement: str) -> str:
    pattern = re.compile(rf"^{re.escape(line)}$", re.MULTILINE)
    if len(pattern.findall(text)) != 1:
        # The template and this function are shipped together; a test keeps them in step.
        raise RuntimeError(f"default.yaml has no single line {line!r} to fill in")
    return pattern.sub(lambda _: replacement, text)
