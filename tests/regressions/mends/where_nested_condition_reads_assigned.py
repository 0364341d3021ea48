# regression: [Where] nested ifs assigning x and z, the outer condition reading x: the mend changed the result (2.0 vs 0.0). Found by the fuzzer.
# inputs: [[["float32", [], [-3.0]], ["int64", [1], [-3]]]]

def f(x: torch.Tensor, y: torch.Tensor):
    z = x.clone()
    if x.dtype == torch.int64 and (x > 0).any():
        x = x.masked_fill(torch.isnan(x), -1.5)
    z = x.relu()
    if x.max() == y.min():
        if torch.isnan(z).any():
            x = x.neg()
        else:
            z = (torch.exp(z)) * 2
            x = x / 2
    return z
