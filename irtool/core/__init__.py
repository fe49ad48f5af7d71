"""The foundation every other part stands on: the error family and diagnostics, files
written all or nothing, what kind of file a path holds, inputs given by name, the worker
pool for code that may crash or hang, and loading user-defined operations."""
