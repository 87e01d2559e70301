"""Agent hosts: registering engram-mcp, session hooks, slash commands and instruction
blocks in Claude Code, Codex, Cursor, Gemini CLI, OpenCode, Antigravity and Windsurf.

One module per host describes its files (:class:`~engram.hosts.target.Target`); the
format modules edit them without disturbing anything engram does not own
(:mod:`.jsonc_edit`, :mod:`.toml_block`, :mod:`.blocks`); :mod:`.link` plans every
change and :mod:`.files` writes it atomically with a backup. This layer imports
only :mod:`engram.errors`; the command line lives in :mod:`engram.cli.link`.
"""
