"""The rule modules: cfn-lint loads every module of this directory (``--append-rules``).

Only rule classes live here; the helpers they share sit one level up, outside the
directory cfn-lint walks, so they are imported once as a normal package.
"""
