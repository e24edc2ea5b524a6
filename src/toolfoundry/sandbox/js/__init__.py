"""The JavaScript tier: QuickJS-NG in WebAssembly under wasmtime (README.md: the boundary).

The seam is ``engine.py`` (``Engine.run(module_code, args, limits, host)`` and ``Limits``);
``wasm_engine.py`` is its implementation. ``run.py`` holds ``run_js`` (offered as
``toolfoundry.sandbox.run_js``), ``call_setup.py`` the one place a call's host and limits are
set up. Nothing here is public API except through ``toolfoundry.sandbox``.
"""
