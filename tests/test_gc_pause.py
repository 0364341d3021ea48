"""The language server holds the cyclic GC off from a check's start until its diagnostics are
sent (lsp/diagnostics.py, _GcPause): counted across overlapping checks, and it never leaves the
GC off, nor turns it on when it was off before."""

from __future__ import annotations

import gc
import threading

from graphmend.lsp.diagnostics import _GcPause


def test_nested_and_overlapping_holds_restore_the_collector():
    assert gc.isenabled()
    p = _GcPause()
    p.hold()
    assert not gc.isenabled()
    p.hold()  # a second document's check
    p.release()
    assert not gc.isenabled()  # the first is not sent yet
    p.release()
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    p = _GcPause()
    gc.disable()
    try:
        p.hold()
        p.release()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_threads_holding_and_releasing_leave_it_on():
    p = _GcPause()
    start = threading.Barrier(8)

    def work():
        start.wait()
        for _ in range(200):
            p.hold()
            p.release()

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert gc.isenabled() and p._held == 0
