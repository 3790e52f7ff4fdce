"""What `scrub redact` redacts, and where its copies go: the files and folders named, or the
files of the named sessions' bundles (or of every session, with the global side files)."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from scrubber import paths
from scrubber.errors import InputError, UsageError
from scrubber.transcript import sessions as session_discovery
from scrubber.usecases.shown_names import FolderNames, live_cwds

Note = Callable[[str], None]  # a note for the user, said at once (the CLI: stderr)


@dataclass(frozen=True, slots=True)
class RedactRequest:
    """What `scrub redact` is asked for: the files and folders named (`paths`), or one
    `sessions`' files (ids, prefixes or titles), or every session's (`all_sessions`); as copies (under `output`, else
    $SCRUB_HOME/redacted/) or rewritten `in_place`."""

    home: Path
    config: Path
    paths: tuple[Path, ...] = ()
    sessions: tuple[str, ...] = ()
    all_sessions: bool = False
    in_place: bool = False
    output: Path | None = None
    # The redaction cache (state/redact-cache/, redact_cache.py): True skips what is already
    # current and keeps the cache up to date; False redoes everything (`--no-cache`) and
    # writes it afresh.
    use_cache: bool = True
    # A file named by `output` for one input that is already there and not empty is refused
    # unless this is True (`--force`): a mistyped path must not cost a file its content.
    replace_output: bool = False


@dataclass(frozen=True, slots=True)
class Selection:
    sources: list[Path]  # the files named, or the sessions' files
    global_files: list[Path]  # with --all: history.jsonl, shell-snapshots/, paste-cache/
    roots: list[Path]  # what a copy's place under the destination is relative to


def select_files(request: RedactRequest, note: Note) -> Selection:
    """The files to redact; links inside named folders are skipped with a note."""
    config = request.config
    if request.paths:
        if request.sessions or request.all_sessions:
            raise UsageError("give paths, or --session / --all, not both")
        sources: list[Path] = []
        for given in request.paths:
            sources.extend(_named_files(given, note))
        roots = [config] + [p if p.is_dir() else p.parent for p in request.paths]
        return Selection(sources, [], roots)
    if request.sessions or request.all_sessions:
        paths.require_config_dir(config, "set CLAUDE_CONFIG_DIR, or name the files to redact")
        sources, global_files = _config_files(config, request, note)
        return Selection(sources, global_files, [config])
    raise UsageError("nothing to redact", "name files, or use --session ID or --all")


def _named_files(given: Path, note: Note) -> list[Path]:
    if given.is_symlink():
        # Named on purpose: refuse (as audit does) rather than skip and exit 0 with nothing
        # written. Links inside named folders are skipped with a note.
        raise InputError(f"{given}: is a symbolic link; name the file it points to")
    if not given.exists():
        raise UsageError(f"{given}: no such file or folder")
    paths.refuse_special_file(given, "redacted")
    found = _files_under(given, note)
    if not found:
        raise UsageError(
            f"{given}: holds no regular file to redact; nothing written",
            "name transcripts or folders that hold them",
        )
    return found


def _config_files(
    config: Path, request: RedactRequest, note: Note
) -> tuple[list[Path], list[Path]]:
    """(session files, global side files) under the config dir."""
    discovery = session_discovery.discover(config)
    chosen = discovery.sessions
    if request.sessions:
        named = [
            session_discovery.find_session(config, s, discovery=discovery) for s in request.sessions
        ]
        chosen = tuple({info.transcript: info for info in named}.values())  # each once
    files: list[Path] = []
    for info in chosen:
        for path in info.bundle_paths():
            files.extend(_files_under(path, note))
    globals_: list[Path] = []
    if request.all_sessions:
        globals_ = [
            side.path
            for side in discovery.side_files
            if side.kind.value in ("history", "shell-snapshot", "paste-cache")
        ]
    return files, globals_


def _files_under(path: Path, note: Note) -> list[Path]:
    if path.is_symlink():
        note(f"skipped symbolic link {path} (not followed)")
        return []
    if path.is_file():
        return [path]
    if not path.is_dir():
        return []
    found: list[Path] = []
    for item in sorted(_entries_below(path)):
        if item.is_symlink():
            note(f"skipped symbolic link {item} (not followed)")
        elif item.is_file():
            found.append(item)
        elif not item.is_dir():
            kind = paths.file_type_name(item.lstat().st_mode)
            note(f"skipped {item}: is {kind}, not a regular file")
    return found


def _entries_below(folder: Path) -> Iterator[Path]:
    """Every entry below `folder`, symlinks listed but never followed, as `rglob("*")` gives
    them; by hand, since rglob recurses and a planted folder a thousand levels deep must not
    end the run in a RecursionError."""
    pending = [folder]
    while pending:
        try:
            with os.scandir(pending.pop()) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            yield Path(entry.path)
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False):
                    pending.append(Path(entry.path))


def copy_pairs(
    request: RedactRequest,
    selection: Selection,
    shown_project: Callable[[str], str | None] | None = None,
) -> list[tuple[Path, Path]]:
    """(source, destination) of each copy: a file for one named file with an `output` that is
    not a folder, else places under the destination shaped like the config dir. There, with
    `shown_project`, a project folder is named as every report shows it (FolderNames.project):
    a copy made to be kept or shared must not carry, in its folder's name, the token of a cwd
    its files no longer hold."""
    sources, output = selection.sources, request.output
    single_file = bool(request.paths) and len(sources) == 1 and request.paths[0].is_file()
    dest_root = output or paths.redacted_dir(request.home)
    if request.config.is_dir():
        _refuse_dest_in_projects(dest_root, request.config)
    if single_file and output is not None and not output.is_dir():
        pairs = [(sources[0], output)]
    else:
        # history.jsonl, shell-snapshots/ and paste-cache/ are copied into DEST like the rest:
        # a copy never rewrites an original (only --in-place does).
        pairs = [
            (s, dest_for(s, selection.roots, dest_root, shown_project))
            for s in [*sources, *selection.global_files]
        ]
    _refuse_shared_destinations(pairs)
    # Files named one by one, to a FILE or a DIR the user gave: what is there is someone's.
    # (Sessions' copies in a destination shaped like the config dir are scrubber's own.)
    if request.paths and output is not None and not request.replace_output:
        for source, dest in pairs:
            _refuse_filled_output(source, dest)
    return pairs


def dest_for(
    file: Path, roots: list[Path], dest: Path, shown_project: Callable[[str], str | None] | None
) -> Path:
    """Where the copy of `file` goes under `dest`: its place under the first of `roots` that
    holds it (else its name), its project folder named by `shown_project` (see `copy_pairs`)."""
    for root in roots:
        try:
            parts = file.relative_to(root).parts
        except ValueError:
            continue
        if shown_project is not None and len(parts) > 2 and parts[0] == "projects":
            shown = shown_project(parts[1])
            if shown and shown not in (".", "..") and "/" not in shown and "\0" not in shown:
                parts = (parts[0], shown, *parts[2:])
        return dest.joinpath(*parts)
    return dest / file.name


def _refuse_shared_destinations(pairs: list[tuple[Path, Path]]) -> None:
    """Two inputs whose copies would land at one place (`a/x.jsonl b/x.jsonl -o DIR`): said
    before anything is written (the second copy's temp file failed mid-run, exit 3)."""
    seen: dict[Path, Path] = {}
    for source, dest in pairs:
        if dest in seen and seen[dest] != source:
            raise UsageError(
                f"{seen[dest]} and {source} would both be copied to {dest}",
                hint="redact them one at a time, each with its own --output",
            )
        seen[dest] = source


def _refuse_filled_output(source: Path, output: Path) -> None:
    """An `--output` file that exists and holds something is someone's: replaced only on
    the user's word. An empty file (what `mktemp` makes for a script) holds nothing to lose.
    The input itself is left to the check that says a copy never replaces its original."""
    try:
        st = output.lstat()
        if stat.S_ISREG(st.st_mode) and source.samefile(output):
            return
    except OSError:
        return  # nothing there (or no way there: writing the copy says why, exit 3)
    if stat.S_ISREG(st.st_mode) and st.st_size == 0:
        return
    what = (
        "a file that is not empty" if stat.S_ISREG(st.st_mode) else "something that is not a file"
    )
    raise UsageError(
        f"{output} is {what}: it is left as it is (a copy would replace it)",
        hint="add --force to replace it, or choose another --output",
    )


def _refuse_dest_in_projects(dest: Path, config: Path) -> None:
    projects = paths.projects_dir(config).resolve()
    target = dest.resolve()
    if target == projects or projects in target.parents:
        raise UsageError(
            f"{dest} is inside Claude Code's projects/ folder, which its cleanup sweeps",
            "choose another --output (default: $SCRUB_HOME/redacted/)",
        )


def note_folders(folders: FolderNames, config: Path, files: Iterable[Path]) -> None:
    """Tell `folders` the project folders of `files` and their sessions' cwds, read before
    anything is rewritten (an in-place rewrite redacts the cwd the folder is named after), so
    that a source or copy is named with its folder as every report shows it (a cwd may hold a
    token: redaction/project_name.py). Display only."""
    projects_root = (config / "projects").absolute()
    found: dict[str, str] = {}
    for path in files:
        with contextlib.suppress(ValueError):
            parts = path.absolute().relative_to(projects_root).parts
            if len(parts) > 1:
                found.setdefault(parts[0], Path(parts[1]).stem)
    cwds = live_cwds(config, found)
    for project, session_id in found.items():
        folders.add(project, session_id, None)
        for cwd in cwds.get(project, ()):
            folders.add(project, session_id, cwd)
