"""Where the layers meet: one module per thing a user asks for (audit, redact, archive,
retention, what SessionEnd does). A command or a hook calls one function here, passing
everything it needs explicitly (paths, policy, `now`, an environment mapping), and renders or
logs the result it gets back. Nothing below this package imports it."""
