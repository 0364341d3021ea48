import torch


@torch.compile
def f(x):
	if x.sum() > 0:
		y = x + 1
	else:
		y = x - 1
	print("\tdone")
	return y
