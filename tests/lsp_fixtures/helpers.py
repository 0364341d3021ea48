def log_shape(x):
    print("shape", tuple(x.shape))
    return x
