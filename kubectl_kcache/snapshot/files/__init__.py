"""`--from-file` input: `paths` (finding the files, reading their bytes), `load` (the objects they hold,
JSON or YAML), `layout` (the dump's layout, shared with its writer) and `from_files` (the snapshot).
"""
