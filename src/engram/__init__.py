"""engram: a memory AI coding agents can trust, served over MCP.

Two faces over one engine: *project memory* (Markdown memories in the repository,
routed and loaded within a token budget, committed only after human approval) and
*governed memory* (the six ``engram_memory_*`` tools of the memory contract, bound by
a host profile). This package root deliberately imports nothing: ``engram-mcp`` must
answer its first request fast, so every module loads only what its path needs.
"""

__version__ = "0.1.0"
#: The distribution's name on a package index (``engram`` there is another project):
#: ``pip install engram-trust`` gives the ``engram`` package and commands.
DISTRIBUTION = "engram-trust"

__all__ = ["DISTRIBUTION", "__version__"]
