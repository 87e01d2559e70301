"""The ``engram`` command line: thin click commands over the domain, one module per
verb group. Only :mod:`engram.cli.main` catches broadly (the CLI boundary)."""
