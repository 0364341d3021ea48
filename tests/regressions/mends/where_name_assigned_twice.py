# regression: [unsafe-eager] `x = z + y; x = z.detach()` in one branch became one torch.where of the last value: the first assignment (which raised: shapes (0,) and (3, 4)) was dropped, so the mended program returned where the original raised. Fixed: a name assigned twice in a branch declines.
# inputs: [[["float16", [0], []], ["bool", [3, 4], [false, false, true, true, false, true, true, false, true, true, true, false]]]]

def f(x: torch.Tensor, y: torch.Tensor):
    z = x.clone()
    if y.sum() > -1:
        if torch.isinf(x).any() and z.float().mean() < 0:
            print(x, "a%sb" % 1, sep="|", flush=True)
    else:
        x = x - 0.5
        z = x.relu()
    if (z > 2.5).any() or torch.isfinite(z).all():
        x = z + y
        x = z.detach()
    return z
