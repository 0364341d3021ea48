# regression: (not a mend bug; kept for the harness) Dynamo traces the mended function whole, so `x[0]` of a 0-dim x after a mended guard fails to trace (IndexError "from user code") before the check raises KeyError; documented in the runtime's known differences and in [Trap].
# inputs: [[["float32", [], ["-inf"]], ["float32", [3, 4], [-0.0, "inf", -0.0, 0.5, -3.0, -1.252665638923645, 10000.0, -1.633662223815918, 3.4320285320281982, 3.2763559818267822, 1.0, 1.0]]]]

def g(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor):
    x = z.clone()
    if x.float().mean() < 0:
        raise KeyError(f"gm: shape {tuple(x.shape)}")
    z = torch.sqrt((x[0]))
    return x, z


def f(x: torch.Tensor, y: torch.Tensor):
    z = x.clone()
    x, z = g(x, y, z)
    return z
