"""A conversation as one self-contained HTML file: no script, no external asset, every piece of
session text escaped, and a Content-Security-Policy that forbids everything but the one inline
style sheet (allowed by its hash, not by 'unsafe-inline'). So a transcript that quotes
`<script>` or `<img src=…>` shows them as text, and even a mistake in escaping could load or run
nothing. Tool outputs and subagent conversations are in <details>, closed, to keep it readable.
"""

from __future__ import annotations

import base64
import hashlib
from html import escape

from scrubber.export.conversation import Conversation, Entry, EntryKind, Redaction
from scrubber.export.markdown import Header, when
from scrubber.export.visible import visible

_STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
  color: #1d1d1f; background: #fff; }
header p, .meta { color: #666; font-size: 0.9em; }
section.entry { border-left: 3px solid #ccc; padding: 0.2rem 0 0.2rem 1rem; margin: 1rem 0; }
section.prompt { border-color: #2f6fdf; } section.answer { border-color: #2a9d55; }
section.tool { border-color: #b07a00; } section.thinking { border-color: #999; color: #555; }
section.compacted { border-color: #c33; }
h3 { margin: 0.2rem 0; font-size: 1rem; }
pre { white-space: pre-wrap; word-break: break-word; background: #f5f5f7; padding: 0.6rem;
  border-radius: 4px; font: 13px/1.4 ui-monospace, monospace; }
.text { white-space: pre-wrap; word-break: break-word; }
.note { font-style: italic; color: #666; }
.subagent { margin-left: 1.5rem; }
table { border-collapse: collapse; } td, th { border: 1px solid #ddd; padding: 0.2rem 0.5rem; }
"""


def _csp() -> str:
    digest = base64.b64encode(hashlib.sha256(_STYLE.encode()).digest()).decode()
    return (
        "default-src 'none'; "
        f"style-src 'sha256-{digest}'; "
        "img-src 'none'; script-src 'none'; base-uri 'none'; form-action 'none'"
    )


def _pre(text: str) -> str:
    return f"<pre>{escape(text)}</pre>"


def _entry(entry: Entry, number: int) -> str:
    stamp = f' <span class="meta">{escape(when(entry.timestamp))}</span>' if entry.timestamp else ""
    kind = entry.kind.name.lower()
    if entry.kind is EntryKind.SUBAGENT and entry.subagent is not None:
        return _subagent(entry.subagent)
    if entry.kind is EntryKind.COMPACTED:
        body = ""
        title = "Conversation compacted"
    elif entry.kind is EntryKind.TOOL:
        title = f"Tool call {escape(entry.tool)}"
        body = f"<p>Input:</p>{_pre(entry.text)}" if entry.text else ""
        if entry.output is not None:
            label = "Output (error)" if entry.is_error else "Output"
            body += f"<details><summary>{label}</summary>{_pre(entry.output)}</details>"
        else:
            body += '<p class="note">No output on this path.</p>'
        if entry.subagent is not None:
            body += _subagent(entry.subagent)
    elif entry.kind is EntryKind.SUMMARY:
        title = "Compaction summary"
        body = f"<details><summary>Summary</summary>{_pre(entry.text)}</details>"
    else:
        title = escape(entry.kind.value.capitalize())
        body = f'<div class="text">{escape(entry.text)}</div>'
    return f'<section class="entry {kind}"><h3>{number}. {title}{stamp}</h3>{body}</section>'


def _conversation(conversation: Conversation) -> str:
    parts = [f'<p class="note">{escape(note)}</p>' for note in conversation.notes]
    parts += [_entry(entry, n) for n, entry in enumerate(conversation.entries, 1)]
    return "\n".join(parts)


def _subagent(conversation: Conversation) -> str:
    return (
        f'<details class="subagent"><summary>{escape(conversation.name)}</summary>'
        f"{_conversation(conversation)}</details>"
    )


def _redaction_table(redacted: list[Redaction]) -> str:
    if not redacted:
        return "<p>Nothing: no secret was found in what is shown.</p>"
    rows = "".join(
        f"<tr><td>{escape(r.kind)}</td><td>{escape(r.where)}</td><td><code>"
        f"{escape(r.fingerprint)}</code></td></tr>"
        for r in redacted
    )
    return f"<table><tr><th>kind</th><th>where</th><th>fingerprint</th></tr>{rows}</table>"


def render_html(header: Header, conversation: Conversation, redacted: list[Redaction]) -> str:
    title = header.title or header.session_id
    span = " – ".join(filter(None, (when(header.first), when(header.last))))
    # Control characters shown as escapes, over the whole page (see visible.py): a page is
    # viewed in a browser, but also printed, paged and grepped in a terminal.
    return visible(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_csp()}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>{_STYLE}</style></head><body>\n"
        f"<header><h1>{escape(title)}</h1><p>Session <code>{escape(header.session_id)}</code>"
        f" · project <code>{escape(header.project)}</code>"
        + (f" · {escape(span)}" if span else "")
        + f"</p><p>Exported by {escape(header.tool)}: every secret found is replaced by "
        "[REDACTED:&lt;kind&gt;:&lt;fingerprint&gt;].</p></header>\n<main>\n"
        f"{_conversation(conversation)}\n</main>\n"
        f"<footer><h2>What was redacted</h2>{_redaction_table(redacted)}</footer>\n"
        "</body></html>\n"
    )
