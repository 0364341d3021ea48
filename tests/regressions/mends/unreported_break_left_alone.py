# regression: (not a mend bug; kept for the harness) 2 graphs remain after mending (3 before): the branch at the return is on a value returned by a local function, which the analysis cannot prove a tensor, so it is not reported; the check now asks Dynamo where the breaks are and fails only for one at a mended line.
# inputs: [[["bool", [1], [true]], ["bool", [1], [true]]]]

def g(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor):
    warnings.warn(f"gm big {x.shape}", FutureWarning)
    logger.log(logging.INFO, "gm plain")
    return x, z


def f(x: torch.Tensor, y: torch.Tensor):
    z = x.clone()
    x, z = g(x, y, z)
    return x.masked_fill(torch.isnan(z), 0.0) if (z > 0).any() else (torch.zeros_like(z)).clamp(min=0)
