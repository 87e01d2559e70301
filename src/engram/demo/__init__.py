"""``engram demo``: an end-to-end tour through the real ``engram-mcp`` subprocess."""
