"""The live probe: what Dynamo really did, mends verified, and mending at import.

Nothing here imports torch in the server's process: code that needs torch runs in a child
process started with the user's interpreter (`child.py`), which finds this package through a
private directory put on its PYTHONPATH (only `graphmend`, not the server's other packages).

    runner.py      start the child: timeout, memory limit, capped output, process-group kill, cancel
    child.py       (user's interpreter) import the entry, run Dynamo's explain + a counting backend
    logs.py        the same records from a TORCH_LOGS=graph_breaks log or a TORCH_TRACE directory
    verify.py      original vs mended, each in a fresh child: graphs, outputs, messages, timings
    importhook.py  mend modules under a scope as they are imported (`graphmend run`, `install()`)
    cli.py         `graphmend probe`, `graphmend import-log`
"""
