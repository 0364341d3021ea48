# regression: [Trap] `if not (not torch.isnan(y).any()): raise` was mended to raise_unless(not ..., ...), a Python `not` of a tensor: nothing left to break on, yet 2 graphs after mending (1 before).
# inputs: [[["bfloat16", [3, 4], [-1.6154173612594604, -7.565787315368652, -2.8384385108947754, -3.0, -0.0, 70000.0, -0.0, -9.015779495239258, 0.5, "nan", 0.0, 0.0]], ["int64", [3, 4], [-3, 2, 1, 3, -5, -3, -5, 5, -5, -4, 1, 1]]]]

def f(x: torch.Tensor, y: torch.Tensor):
    z = x.clone()
    if not (not torch.isnan(y).any()):
        raise AssertionError("gm: two\nlines")
    print(file=sys.stderr)
    warnings.warn(f"gm big {x.shape}", FutureWarning, stacklevel=2)
    return z
