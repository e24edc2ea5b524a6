"""The forge's static checks: what a draft's code is refused for before any of it runs.

``js.py`` checks a JavaScript module with tree-sitter (its rules in ``js_rules.py``);
``python.py`` checks a Python tier module with ``ast``. Both report
:class:`~toolfoundry.forge.findings.Finding` values; neither is a boundary (the sandbox and the
jail are): they give a model early, located reasons.
"""
