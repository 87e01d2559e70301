"""``engram console``: the review page of the people who approve.

A local web page, served on loopback only, for the project enclosing the working folder
and for the governed bindings of the host profiles given to it: what is stored, why a
task loads what it loads, what changed, and the decisions waiting for a person
(proposals, confirmations, adjudications). Nothing of it is reachable through MCP, and
nothing of it is imported on the way to serving ``engram-mcp``.

- :mod:`engram.console.guard`: who may use the page (the one-time secret, the session
  cookie, single-use form tokens, ``Host`` and ``Origin``) and the headers of every
  answer;
- :mod:`engram.console.app`: the routes, each a thin call of the domain rendered by a
  template;
- :mod:`engram.console.charts`: the geometry of the server-rendered SVG charts;
- :mod:`engram.console.serve`: the socket, the printed URL, the server.
"""
