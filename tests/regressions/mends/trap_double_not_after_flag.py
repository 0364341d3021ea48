# regression: [Trap] `if not (not c): raise E` kept one Python `not` of a tensor in graphmend.raise_unless(not c, E): the mended line still broke (3 graphs); all the nots are now stripped. Found by the fuzzer with flags bound to `static and tensor`.
# inputs: [[["bfloat16", [0], []], ["bfloat16", [1], [-2.993203639984131]]]]

def f(x: torch.Tensor, y: torch.Tensor):
    z = x.clone()
    gm_flag = x.dtype in (torch.float16, torch.bfloat16) and z.sum() > -1
    if not gm_flag and (x > 0.5).all():
        raise ValueError(f"gm: {x.dtype} n={x.numel()}")
    if not (not x.float().mean() < 0.5):
        raise GmError()
    if torch.isinf(z).any():
        warnings.warn(f"gm big {x.shape}")
        warnings.warn("gm warn", RuntimeWarning)
    return (x, z)
