"""The host side of a sandboxed call's capabilities: fetch, localStorage, crypto, credentials.

The seam is ``protocols.py``: every capability the host answers for a guest is a Protocol
there (``FetchProvider`` makes a call's ``FetchHandler``; ``StorageBackend`` is the store
behind ``localStorage``; ``ToolsProvider`` makes the ``ToolsHandler`` answering code mode's
``tools``), and the engines (``sandbox/js``, ``sandbox/process``) know only those.
The other modules are implementations (``fetch.py``'s ``FetchPolicy``, ``fixtures.py``'s
``FixtureFetch``, ``storage.py``'s ``MemoryStorage``) and their parts; none is public API.
"""
