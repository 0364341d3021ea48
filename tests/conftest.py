import os
import tempfile
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # tests/difftest.py
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# the language server keeps an index of imported modules in the user cache directory
# (analysis/definitions.py): tests, and the servers they start, use a directory of their own
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="graphmend-test-cache-")
