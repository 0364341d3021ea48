import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_rule_pages_are_current():
    """docs/rules/*.md are generated from the rule modules; a rule change must regenerate them."""
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_rule_docs.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
