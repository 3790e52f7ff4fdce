"""Readable renderings of a session (`scrub export`): the conversation on its active path, as
Markdown or as one self-contained HTML file. It renders transcripts that were redacted before
(usecases/export.py redacts them, renders, and checks the output): nothing here reads a secret
or decides what is one."""
