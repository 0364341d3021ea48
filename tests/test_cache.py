"""The `graphmend check` cache: same results with and without it, files re-analysed only when
they or the module files their analysis consulted change."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import textwrap
import time

import pytest

from graphmend.cache import ScanCache
from graphmend.config import Settings
from graphmend import scan


def write(path, text):
    path.write_text(textwrap.dedent(text), encoding="utf-8")


def project(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    write(pkg / "__init__.py", "")
    write(pkg / "base.py", """
        from torch import nn

        class Base(nn.Module):
            pass
        """)
    write(pkg / "model.py", """
        from pkg.base import Base

        class Model(Base):
            def forward(self, x):
                print("x", x.shape)
                return x
        """)
    return pkg


def demote_base(pkg):
    """base.Base stops being an nn.Module (after a pause, so the file's mtime changes)."""
    time.sleep(0.01)
    write(pkg / "base.py", """
        class Base:
            pass
        """)


def check(pkg, cache):
    files, _ = scan.discover([str(pkg)], Settings())
    res = scan.check_files(files, Settings(), jobs=1, roots=[str(pkg.parent)], cache=cache)
    return {os.path.basename(r.path): [(f.code, f.span.start.line) for f in r.findings] for r in res}


def test_hits_and_invalidation(tmp_path, monkeypatch):
    pkg = project(tmp_path)
    monkeypatch.chdir(tmp_path)  # so `pkg.base` resolves from the workspace root
    monkeypatch.syspath_prepend(str(tmp_path))
    cdir = str(tmp_path / "cache")
    c1 = ScanCache(cdir, Settings())
    first = check(pkg, c1)
    assert first["model.py"] == [("GM101", 6)]
    assert c1.hits == 0 and c1.save() is None
    c2 = ScanCache(cdir, Settings())
    assert check(pkg, c2) == first and c2.hits == 3 and c2.misses == 0
    # the base class stops being a Module: model.py depends on base.py, so both are redone
    demote_base(pkg)
    c3 = ScanCache(cdir, Settings())
    third = check(pkg, c3)
    assert third["model.py"] == [] and c3.misses == 2 and c3.hits == 1
    # a different scope is a different cache
    c4 = ScanCache(cdir, Settings(scope="module"))
    check(pkg, c4)
    assert c4.hits == 0


def test_another_engine_never_reuses_the_cache(tmp_path, monkeypatch):
    """Results of other engine code (an edited rule, with the same __version__) are not served."""
    import graphmend.cache
    pkg = project(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    cdir = str(tmp_path / "cache")
    c1 = ScanCache(cdir, Settings())
    check(pkg, c1)
    c1.save()
    assert ScanCache(cdir, Settings()).entries  # the same engine finds its entries
    monkeypatch.setattr(graphmend.cache, "engine_fingerprint", lambda *a: "another engine")
    c2 = ScanCache(cdir, Settings())
    check(pkg, c2)
    assert c2.hits == 0 and c2.misses == 3


def test_engine_fingerprint_follows_the_rule_sources(tmp_path, monkeypatch):
    from graphmend import fingerprint
    pkg = tmp_path / "graphmend"
    (pkg / "rules").mkdir(parents=True)
    (pkg / "rules" / "where.py").write_text("A = 1\n")
    monkeypatch.setattr(fingerprint, "PACKAGE_DIR", pkg)
    fingerprint.engine_fingerprint.cache_clear()
    try:
        a = fingerprint.engine_fingerprint("t")
        (pkg / "rules" / "where.py").write_text("A = 2\n")
        fingerprint.engine_fingerprint.cache_clear()
        assert fingerprint.engine_fingerprint("t") != a
    finally:
        fingerprint.engine_fingerprint.cache_clear()


def test_cli_output_same_with_cache(tmp_path):
    pkg = project(tmp_path)
    cmd = [sys.executable, "-m", "graphmend", "check", "--format", "json", str(pkg)]
    import graphmend
    here = os.path.dirname(os.path.dirname(graphmend.__file__))  # this graphmend, not an installed one
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), here])}
    runs = [subprocess.run(cmd + extra, cwd=tmp_path, env=env, capture_output=True, text=True)
            for extra in ([], [], ["--no-cache"])]
    assert [r.returncode for r in runs] == [1, 1, 1]
    outs = [json.loads(r.stdout) for r in runs]
    assert outs[0] == outs[1] == outs[2] and outs[0]
    assert (tmp_path / ".graphmend_cache" / ".gitignore").is_file()
    # a corrupt cache is ignored, not fatal
    cache_files = [*(tmp_path / ".graphmend_cache").glob("index-*"), *(tmp_path / ".graphmend_cache").glob("data-*")]
    assert len(cache_files) == 2
    for p in cache_files:
        p.write_bytes(b"garbage")
    again = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert again.returncode == 1 and json.loads(again.stdout) == outs[0]


def test_touched_file_is_hashed_not_reanalysed_and_findings_are_read_lazily(tmp_path, monkeypatch):
    pkg = project(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    cdir = str(tmp_path / "cache")
    c1 = ScanCache(cdir, Settings())
    first = check(pkg, c1)
    c1.save()
    # the same bytes, a new mtime: a hit (by the sha1 of the bytes)
    st = os.stat(pkg / "model.py")
    os.utime(pkg / "model.py", ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    c2 = ScanCache(cdir, Settings())
    reads = []
    orig = c2.read_blob
    monkeypatch.setattr(c2, "read_blob", lambda *a: reads.append(a) or orig(*a))
    assert check(pkg, c2) == first and c2.hits == 3 and c2.misses == 0
    assert len(reads) == 1  # only model.py has findings; base.py's and __init__.py's are not read
    assert c2.save() is None  # the new stat data recorded
    c3 = ScanCache(cdir, Settings())
    assert check(pkg, c3) == first and c3.hits == 3 and not c3.dirty
    # another content of the same size is a miss
    text = (pkg / "model.py").read_text()
    (pkg / "model.py").write_text(text.replace('"x"', '"y"'))
    c4 = ScanCache(cdir, Settings())
    assert check(pkg, c4) == first and c4.misses == 1 and c4.hits == 2


def test_data_file_appended_then_compacted(tmp_path, monkeypatch):
    pkg = project(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    cdir = tmp_path / "cache"
    c = ScanCache(str(cdir), Settings())
    want = check(pkg, c)
    c.save()
    text = (pkg / "model.py").read_text()
    sizes = []
    for k in range(6):  # each run rewrites model.py's blob: appended, then the file is compacted
        (pkg / "model.py").write_text(text + f"# {k}\n" * (k + 1))
        c = ScanCache(str(cdir), Settings())
        assert check(pkg, c) == want and c.misses == 1
        c.save()
        data = list(cdir.glob("data-*"))
        assert len(data) == 1
        sizes.append(data[0].stat().st_size)
    assert any(b < a for a, b in zip(sizes, sizes[1:]))  # compacted at least once
    c = ScanCache(str(cdir), Settings())
    assert check(pkg, c) == want and c.hits == 3
    # a data file cut short: the cache is dropped, the results are the same
    data = next(cdir.glob("data-*"))
    data.write_bytes(data.read_bytes()[:5])
    c = ScanCache(str(cdir), Settings())
    assert not c.entries and check(pkg, c) == want


def test_a_second_file_with_the_same_base_depends_on_it_too(tmp_path, monkeypatch):
    """In one worker, the first file's analysis resolves `pkg.base.Base` and the answer is kept;
    the second file that subclasses it must still record base.py among its dependencies, or its
    cached summary outlives a change of the base."""
    pkg = project(tmp_path)
    write(pkg / "other.py", """
        from pkg.base import Base

        class Other(Base):
            def forward(self, x):
                print("y", x.shape)
                return x
        """)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    cdir = str(tmp_path / "cache")
    c1 = ScanCache(cdir, Settings())
    first = check(pkg, c1)
    assert first["model.py"] == [("GM101", 6)] and first["other.py"] == [("GM101", 6)]
    assert c1.save() is None
    demote_base(pkg)
    c2 = ScanCache(cdir, Settings())
    again = check(pkg, c2)
    assert again["model.py"] == [] and again["other.py"] == []  # neither is a module any more
    assert again == check(pkg, None)


def helper_project(tmp_path):
    """`pkg.helpers.log_stats` has no entry of its own; `pkg.model`'s forward calls it."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    write(pkg / "__init__.py", "")
    write(pkg / "helpers.py", """
        def log_stats(x):
            print("mean", x.mean())
            return x

        def unused(x):
            print("never reached", x)
        """)
    write(pkg / "model.py", """
        from torch import nn
        from pkg.helpers import log_stats

        class Model(nn.Module):
            def forward(self, x):
                return log_stats(x) * 2
        """)
    return pkg


def test_a_function_only_another_file_reaches_is_walked(tmp_path, monkeypatch):
    """Each file walks what its own entries reach; a function reached only from an entry in
    another file is walked in a second pass, with and without a cache, and when the cache holds
    the file as checked alone (nothing reached, nothing walked)."""
    pkg = helper_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    files = [str(pkg / "helpers.py"), str(pkg / "model.py")]
    walked = []
    real = scan._check_one

    def spy(path, wanted=None):
        walked.append((os.path.basename(path), None if wanted is None else sorted(wanted)))
        return real(path, wanted)
    monkeypatch.setattr(scan, "_check_one", spy)

    def run(fs, cache=None):
        res = scan.check_files(fs, Settings(), jobs=1, roots=[str(tmp_path)], cache=cache)
        return {os.path.basename(r.path): [(f.code, f.span.start.line) for f in r.findings] for r in res}

    want = {"helpers.py": [("GM101", 3)], "model.py": []}
    assert run(files) == want
    assert walked == [("helpers.py", None), ("model.py", None), ("helpers.py", ["log_stats"])]

    cache = ScanCache(str(tmp_path / "cache"), Settings())
    assert run(files[:1], cache) == {"helpers.py": []}  # alone: nothing reaches log_stats
    cache.save()
    walked.clear()
    cache = ScanCache(str(tmp_path / "cache"), Settings())
    assert run(files, cache) == want  # helpers.py was cached with nothing walked
    assert walked == [("model.py", None), ("helpers.py", ["log_stats"])]
    cache.save()
    walked.clear()
    cache = ScanCache(str(tmp_path / "cache"), Settings())
    assert run(files, cache) == want and walked == []  # the second pass was cached too
    summary = cache.get(str(pkg / "helpers.py"))
    assert summary.walked == {"log_stats"}  # `unused` was never walked


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                    reason="the counting executor reaches the check only where workers fork")
def test_the_second_pass_goes_to_the_first_pass_workers(tmp_path, monkeypatch):
    """With several workers, the files walked again for what only another file's entries reach go
    to the workers of the first pass (they have read the modules those files import): one
    executor for both passes, and the findings are those of a one-process check."""
    pkg = helper_project(tmp_path)
    # a second pair: two files walked again, enough for two workers in the second pass too
    (pkg / "helpers2.py").write_text((pkg / "helpers.py").read_text())
    (pkg / "model2.py").write_text((pkg / "model.py").read_text().replace("pkg.helpers", "pkg.helpers2"))
    monkeypatch.chdir(tmp_path)
    files = sorted(str(p) for p in pkg.glob("*.py"))
    started = []
    real = scan.cf.ProcessPoolExecutor

    class Counting(real):
        def __init__(self, *a, **k):
            started.append(k.get("max_workers"))
            super().__init__(*a, **k)
    monkeypatch.setattr(scan.cf, "ProcessPoolExecutor", Counting)

    def run(jobs):
        res = scan.check_files(files, Settings(), jobs=jobs, roots=[str(tmp_path)])
        return {os.path.basename(r.path): [(f.code, f.span.start.line) for f in r.findings] for r in res}

    one = run(1)
    # reached only from model.py and model2.py
    assert one["helpers.py"] == one["helpers2.py"] == [("GM101", 3)] and started == []
    assert run(2) == one
    assert started == [2]  # one pool, both passes
