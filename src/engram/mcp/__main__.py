"""``python -m engram.mcp`` is ``engram-mcp``."""

from engram.mcp.main import main

main()
