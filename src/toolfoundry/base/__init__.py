"""The bottom layer: what every other package stands on, with no toolfoundry vocabulary in it.

- ``json_gate.py``: the one JSON gate (depth, size, numbers, valid Unicode) every JSON value
  crossing into the host passes, and the encoder every answer leaves through; ``problem.py``
  is its located finding (``Problem``, offered as ``toolfoundry.spec.Problem``).
- ``json_schema.py``: the one validator for schemas the host does not write.
- ``display.py``, ``confusables.py``: text a person reads (controls shown, lookalikes named).
- ``lru.py``: the bounded cache every process-wide cache is; ``lazy.py``: a package's names
  loaded on first use; ``collector.py``: the cyclic collector paused around bulk work.
- ``extras.py``: the optional parts (pip extras) and the message for a missing one.

The vocabulary the rest of the code speaks (ToolSpec, statuses, results, limits...) is
``toolfoundry.spec``, one layer up. Nothing here is public API: it may change.
"""
