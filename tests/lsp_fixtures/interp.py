def linear_interp(t0, y0, t1, y1, t):
    assert t0 <= t <= t1, "out of order"
    return (t1 - t) / (t1 - t0) * y0 + (t - t0) / (t1 - t0) * y1
